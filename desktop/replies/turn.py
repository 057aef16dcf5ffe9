"""One message sent and its reply, as the desktop holds it from the submit until its ending is
shown (replies/controller.py follows it): what the turn asks for, the chat it goes to, what
its reply brought so far, and what the window says while it waits."""

from __future__ import annotations

import contextlib

from desktop.client import ParleyClient, ReplyEnd, ReplyStream, TurnKind
from desktop.client.events import ReplyParts
from desktop.errors import ClientError
from desktop.replies.notes import loading_note
from desktop.replies.request import TurnRequest
from server.types import NEW_MESSAGE_KINDS


class Reply:
    """One message sent and its reply, from the submit until its ending is shown."""

    def __init__(self, request: TurnRequest) -> None:
        self.request = request
        self.kind: TurnKind = request.kind
        self.target = request.target
        before = request.before
        if before is None and request.conversation_id is None and request.kind == "send":
            before = []  # a new chat: nothing above its first message
        # Where it is drawn: changed as a continued reply's saved text is taken up (resume).
        self.before = before
        # The chat it was typed in (None: a new chat, until its turn began).
        self.conversation_id = request.conversation_id
        self.created: str | None = None  # the chat made for it, while its turn begins
        self.text = request.text
        self.attached = request.attached
        self.files = request.files if request.files is not None else request.attached
        self.model = request.asked.model
        # Said where the reply will come until its first text or step (its model loading).
        self.waiting_note = loading_note(request.asked.model_status)
        self.stream: ReplyStream | None = None
        # All it brought (text, steps, citations), also while its chat is not on screen: the
        # transcript draws from it.
        self.parts = ReplyParts()
        self.stop_requested = False
        self.ending: ReplyEnd | None = None  # known, and being drawn
        self.save_note: str | None = None  # what the window says while it cannot be saved
        # While earlier messages are summarised before it: what the window says of it ("" else)
        self.summarising = ""

    @property
    def question(self) -> str | None:
        """The question drawn above the reply: None when it is on screen already."""
        return self.text if self.kind in NEW_MESSAGE_KINDS else None

    @property
    def attachment_ids(self) -> list[str] | None:
        """The files the turn names by id: None for none, and for an edit given no new ones
        (the question's own are kept)."""
        if (self.kind == "send" and self.files) or (self.kind == "edit" and self.attached):
            return [a["id"] for a in self.files]
        return None

    def resume(self) -> None:
        """A continued reply starts from what it said (in `before`'s last message)."""
        earlier = next((m for m in reversed(self.before or []) if m["id"] == self.target), None)
        if earlier is None:
            return
        self.before = [m for m in self.before or [] if m["id"] != self.target]
        self.parts.add_saved(earlier["parts"])

    def note(self) -> str:
        """What is said where its text will come, while none has."""
        if self.parts.items:
            return ""
        return self.waiting_note


async def begin(client: ParleyClient, reply: Reply) -> ReplyStream:
    """Start the reply's turn, in a chat created for it (with the system prompt and switches
    it was asked with) if it is a new chat's first message: that chat is its `created` while
    the turn begins, and its `conversation_id` only once the turn began. ClientError: the
    turn did not begin."""
    request, asked = reply.request, reply.request.asked
    conversation_id = reply.conversation_id
    if conversation_id is None:
        created = await client.create_conversation(
            asked.model, asked.system_prompt, asked.tools, asked.documents, request.project_id
        )
        conversation_id = reply.created = created["id"]
    stream = await client.start_turn(
        conversation_id, reply.kind, reply.target, reply.text, asked.model, asked.max_tokens,
        reply.attachment_ids,
    )  # fmt: skip
    reply.conversation_id, reply.created = stream.conversation_id, None
    return stream


async def drop_created(client: ParleyClient, reply: Reply) -> None:
    """The reply's turn did not begin: the chat created for it goes. The server wrote no
    turn before it refused one; a turn written as the connection broke is stopped with it."""
    if reply.created is not None:
        created, reply.created = reply.created, None
        with contextlib.suppress(ClientError):  # unreachable: nothing to delete from
            await client.delete(created)
