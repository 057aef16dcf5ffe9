"""Replies in the window: send, stream, stop, show the ending, report what failed.

Each chat has its own reply: several may stream at once (the server allows one per chat),
and Stop ends the reply of the chat on screen, never another. While a chat's message is
sent and its reply shown, that chat's Send is Stop; it turns back only once the ending is on
screen, and nothing is awaited after that, so the next message never overlaps its end.

Only the chat on screen is drawn. Every reply keeps what it received, so switching back to a
chat whose reply is streaming shows its live text at once.

A message is drawn when it is sent, with a note while its model loads (the turn begins once
the engine runs), and again with its ids once its turn began. A turn that does not begin
(refused: an image for a model that cannot see images) leaves nothing: its new chat deleted,
the transcript as it was, the message in the composer, the banner saying why while that
chat is on screen.

Stop is a hang-up (`ReplyStream.aclose()`): the server stops the work and saves the reply.
The ending shown comes from the stream's final chunk; after a hang-up there is none, so the
saved message is read once (the server answers when the reply has settled).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Coroutine

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.chats.earlier_messages import PAGE
from desktop.client import (
    ParleyClient,
    ReplyApproval,
    ReplyCompaction,
    ReplyEnd,
    ReplyOverdue,
    ReplyQuestion,
    ReplySaveProblem,
    ReplyStep,
    ReplyStream,
    ReplyText,
)
from desktop.composer.composer import Composer
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.replies.notes import (
    STOPPING_NOTE,
    SUMMARY_FAILED,
    save_problem_note,
    stopping_note,
    summarising_note,
)
from desktop.replies.request import TurnRequest
from desktop.replies.turn import Reply, begin, drop_created
from desktop.transcript.surface import TranscriptSurface
from server.types import (
    NEW_MESSAGE_KINDS,
    ConversationJSON,
)


class ReplyController(Controller):
    """Owns the replies in flight; draws the one of the chat on screen (the context's
    `current_id`), asking through the context's client."""

    conversation_created = Signal(str)  # a message typed in a new chat created this one
    # The message is stored, its reply began: the conversation's id and title.
    reply_started = Signal(str, str)
    reply_finished = Signal(str)  # message id: the view shows its ending
    busy_changed = Signal()  # a chat began or finished a reply (Send/Stop, the sidebar)
    error_reported = Signal(str)  # for the user; the reply itself is saved regardless
    error_resolved = Signal(str)  # a message reported before that is no longer true
    # JSON crosses these as `object`: as `dict` it would become a QVariantMap, which sorts
    # its keys (a form's fields, a call's arguments would lose the order they came in).
    approval_requested = Signal(str, object)  # conversation id, ApprovalJSON: a call waits
    overdue_asked = Signal(str, object)  # conversation id, OverdueJSON: wait on, or stop it?
    question_asked = Signal(str, object)  # conversation id, QuestionEventJSON: a server asks
    step_updated = Signal(str, object)  # conversation id, ToolPartJSON: a step changed
    reply_gone = Signal(str)  # conversation id: its reply is over (nothing waits in it)
    compacted = Signal(str)  # conversation id: a summary now stands for earlier messages
    turn_refused = Signal()  # a message's turn did not begin: the chat shows what it showed

    def __init__(
        self, context: Context, transcript: TranscriptSurface, composer: Composer, parent: QWidget
    ) -> None:
        super().__init__(context, parent)
        self._transcript = transcript
        self._composer = composer
        self._replies: list[Reply] = []
        # A send that did not begin, said in the banner while its chat (None: a new chat) is
        # on screen: the chat and what was said.
        self._refusal: tuple[str | None, str] | None = None

    # -- what is in flight ------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Some reply is in flight: the server must not be restarted under it."""
        return bool(self._replies)

    def busy_in(self, conversation_id: str | None) -> bool:
        """Whether this chat (None: the new chat being written) has a reply in flight."""
        return self._reply_in(conversation_id) is not None

    def busy_conversations(self) -> set[str]:
        return {r.conversation_id for r in self._replies if r.conversation_id is not None}

    def _reply_in(self, conversation_id: str | None) -> Reply | None:
        return next((r for r in self._replies if r.conversation_id == conversation_id), None)

    # -- commands -----------------------------------------------------------------------------

    def submit(self, request: TurnRequest) -> Coroutine[object, object, None] | None:
        """Start the turn `request` asks for in the chat it was typed in (a new one if
        None). The chat is busy at once (a second Enter cannot send it twice); the returned
        coroutine, to be run as a task, follows the reply until its ending is shown. None if
        that chat is busy."""
        if self.busy_in(request.conversation_id):
            return None
        reply = Reply(request)
        self._replies.append(reply)
        self.busy_changed.emit()
        return self._run(reply)

    async def stop(self, conversation_id: str | None) -> None:
        """Stop this chat's reply: mark it at once, then hang up; the server saves it."""
        reply = self._reply_in(conversation_id)
        if reply is None or reply.stop_requested:
            return
        reply.stop_requested = True
        if reply.stream is None:
            return  # not begun yet: hung up as soon as it begins
        if self._is_shown(reply.conversation_id):
            self._transcript.end_reply(None, note=stopping_note(reply.parts.running_step()))
        await reply.stream.aclose()

    async def hang_up(self, conversation_id: str | None = None) -> None:
        """Hang up (as Stop does, without the note) this chat's reply, or every reply."""
        for reply in list(self._replies):
            if conversation_id is None or reply.conversation_id == conversation_id:
                reply.stop_requested = True
                if reply.stream is not None:
                    await reply.stream.aclose()

    def show(self, conversation: ConversationJSON) -> None:
        """Draw `conversation` as stored, with its reply in flight, if any, live."""
        messages = conversation.get("messages", [])
        unloaded = conversation.get("earlier", 0)
        summaries = conversation.get("summaries")
        reply = self._reply_in(conversation["id"])
        if reply is None or reply.stream is None:
            self._transcript.show_conversation(messages, unloaded=unloaded, summaries=summaries)
            if reply is not None:  # its turn is still beginning: drawn as it waits
                self._draw(reply, None, reply.model)
            return
        live = {reply.stream.message_id}
        if reply.kind in NEW_MESSAGE_KINDS:
            live.add(reply.stream.user_message_id)
        kept = [m for m in messages if m["id"] not in live]
        self._transcript.show_conversation(kept, unloaded=unloaded, summaries=summaries)
        ids = (reply.stream.user_message_id, reply.stream.message_id)
        # What it holds so far is drawn at once, in the order it came.
        model = reply.stream.model
        self._transcript.begin_reply(reply.question, model, ids, reply.parts, reply.files)
        self._note(reply)
        if reply.ending is not None:
            self._transcript.end_reply(reply.ending)
        elif reply.stop_requested:
            self._transcript.end_reply(None, note=STOPPING_NOTE)

    # -- one reply -------------------------------------------------------------------------

    def _is_shown(self, conversation_id: str | None) -> bool:
        """Whether this chat (None: the new one) is on screen."""
        return conversation_id == self._context.current_id

    async def _run(self, reply: Reply) -> None:
        try:
            await self._send(reply)
        finally:
            self._forget(reply)  # failed or cancelled: the chat is free again

    def _forget(self, reply: Reply) -> None:
        if reply in self._replies:
            self._replies.remove(reply)
            self.busy_changed.emit()
            if reply.conversation_id is not None:
                self.reply_gone.emit(reply.conversation_id)

    async def _send(self, reply: Reply) -> None:
        client = self._context.require_client()
        if reply.kind == "continue":
            reply.resume()
        if self._is_shown(reply.conversation_id):
            self._draw(reply, None, reply.model)  # at once, however long its turn takes
        new_chat = reply.conversation_id is None
        try:
            stream = await begin(client, reply)
        except ClientError as exc:
            await self._not_begun(client, reply, exc)
            return
        if new_chat:  # known to the window only now that its first turn began
            self.conversation_created.emit(stream.conversation_id)
        reply.stream = stream
        conversation_id = stream.conversation_id
        if self._is_shown(conversation_id) and self._composer.holds(reply.text, reply.attached):
            self._composer.clear()  # (not text typed meanwhile for another chat)
        elif reply.text or reply.attached:  # left before it began
            self._composer.drop_draft(conversation_id, reply.text, reply.attached)
        if self._is_shown(conversation_id):
            await self._draw_begun(client, reply, stream)
        self.reply_started.emit(conversation_id, stream.title)
        if reply.stop_requested:  # Stop came while the message was being sent
            reply.stop_requested = False
            await self.stop(conversation_id)
        end: ReplyEnd | None = None
        broken: ClientError | None = None
        try:
            async for event in stream.events():
                if isinstance(event, ReplyEnd):
                    # Completed as Stop was pressed: the view may have dropped the last text
                    # it got after Stop; the ending carries it (delivered = stored).
                    end = dataclasses.replace(event, content=reply.parts.text)
                    continue
                if isinstance(event, ReplyApproval):
                    self.approval_requested.emit(conversation_id, dict(event.approval))
                    continue
                if isinstance(event, ReplyOverdue):
                    self.overdue_asked.emit(conversation_id, dict(event.overdue))
                    continue
                if isinstance(event, ReplyQuestion):
                    self.question_asked.emit(conversation_id, dict(event.question))
                    continue
                if isinstance(event, ReplyCompaction):
                    self._compaction(reply, conversation_id, event)
                    continue
                if isinstance(event, ReplySaveProblem):
                    self._save_problem(reply, event.problem)
                    continue
                if isinstance(event, ReplyText):
                    reply.parts.add_text(event.text)
                elif isinstance(event, ReplyStep):
                    reply.parts.add_step(event.part)
                    self.step_updated.emit(conversation_id, dict(event.part))
                else:
                    reply.parts.add_citation(event.part)  # listed under the reply at its end
                if self._is_shown(conversation_id):
                    self._transcript.reply_grew()  # draws what is new in reply.parts
        except ClientError as exc:
            broken = exc  # the server may still have saved it: show that, then say so
            if self._is_shown(conversation_id):
                self._transcript.end_reply(None, note="The connection to the server broke")
        await self._show_ending(reply, stream, end)
        if broken is not None:
            raise broken

    async def _not_begun(self, client: ParleyClient, reply: Reply, error: ClientError) -> None:
        """Its turn did not begin (refused, or the server could not be reached): nothing of
        it is left. The composer still holds the message (it is emptied only once a turn
        began), the chat created for it is deleted, the chat on screen shows what it showed
        before, and the banner says why while that chat is on screen."""
        await drop_created(client, reply)
        if self._is_shown(reply.conversation_id):
            if reply.conversation_id is None:
                self._transcript.clear_conversation()
                self.turn_refused.emit()  # (the window shows a new chat's page again)
            else:
                await self._show_stored(reply.conversation_id, over_reply=True)
        self._refusal = (reply.conversation_id, error.message)
        self.error_reported.emit(error.message)

    def chat_shown(self) -> None:
        """The chat on screen changed: a send that did not begin in another chat is no
        longer said."""
        if self._refusal is not None and not self._is_shown(self._refusal[0]):
            self.error_resolved.emit(self._refusal[1])
            self._refusal = None

    def _draw(self, reply: Reply, ids: tuple[str, str] | None, model: str | None) -> None:
        """Its turn as it stands: the messages above it (when the turn redraws them), its
        question, what its reply holds, and what it waits on. `ids`: the question's and the
        reply's, for their actions (None until its turn began)."""
        if reply.before is not None:
            summaries = self._transcript.summaries  # the markers drawn stay
            self._transcript.show_conversation(reply.before, summaries=summaries)
        self._transcript.begin_reply(reply.question, model, ids, reply.parts, reply.files)
        self._note(reply)

    def _note(self, reply: Reply) -> None:
        """Where its text will come, while none has: what it waits on."""
        note = reply.summarising or reply.note()
        if note:
            self._transcript.show_compaction(note)

    async def _draw_begun(self, client: ParleyClient, reply: Reply, stream: ReplyStream) -> None:
        """Its turn began: drawn again with its ids (its question's actions, its reply's at
        its end). A message in a chat drawn as stored: the chat is read again, its page with
        the new message (the transcript knows no ids of what it drew without them)."""
        if reply.before is not None:
            ids = (stream.user_message_id, stream.message_id)
            if not self._transcript.name_turn(ids, stream.model):
                self._draw(reply, ids, stream.model)
            return
        try:
            conversation = await client.conversation(stream.conversation_id, limit=PAGE)
        except ClientError:
            return  # drawn as sent, without its actions: the reply goes on
        if self._is_shown(stream.conversation_id):
            self.show(conversation)

    def _save_problem(self, reply: Reply, problem: str | None) -> None:
        """Said while it lasts: closing Parley then would lose what was not saved."""
        if reply.save_note is not None:
            self.error_resolved.emit(reply.save_note)
        reply.save_note = None if problem is None else save_problem_note(problem)
        if reply.save_note is not None:
            self.error_reported.emit(reply.save_note)

    def _compaction(self, reply: Reply, conversation_id: str, event: ReplyCompaction) -> None:
        """Earlier messages summarised before the reply: said where its text will come; once
        done, the marker drawn where the summary ends."""
        state = event.compaction["state"]
        reply.summarising = summarising_note(event.compaction)
        shown = self._is_shown(conversation_id)
        if shown:
            self._transcript.show_compaction(reply.summarising)
        summary = event.compaction.get("summary")
        if state == "done" and summary is not None:
            if shown:
                self._transcript.add_summary(summary)
            self.compacted.emit(conversation_id)
        elif state == "failed":
            self.error_reported.emit(SUMMARY_FAILED)

    async def _show_ending(self, reply: Reply, stream: ReplyStream, end: ReplyEnd | None) -> None:
        conversation_id = stream.conversation_id
        if end is None:  # hung up (Stop, close) or cut: no final chunk, read what was saved
            end = await self._saved(stream)
        if end is not None and end.save_error:
            self.error_reported.emit(f"The reply is not saved: {end.save_error}")
        stored = False  # the chat read again and drawn as stored (once at most)
        if not self._is_shown(conversation_id):
            pass  # another chat is on screen: this one shows the reply when opened
        elif not self._transcript.showing_reply:
            # Shown again meanwhile without its live reply: show it as stored now.
            await self._show_stored(conversation_id)
            stored = True
        elif end is not None:
            reply.ending = end  # drawn again if the chat is redrawn meanwhile
            ended = asyncio.Event()
            self._transcript.reply_ended.connect(ended.set)
            try:
                self._transcript.end_reply(end)
                await ended.wait()  # the view may still be laying out a burst
            finally:
                self._transcript.reply_ended.disconnect(ended.set)
        # Its ending is on screen: the next message may go.
        self._forget(reply)
        self.reply_finished.emit(stream.message_id)
        if reply.kind != "send" and not stored and self._is_shown(conversation_id):
            await self._show_stored(conversation_id)  # its versions' ‹ n/m ›

    async def _saved(self, stream: ReplyStream) -> ReplyEnd | None:
        """The reply as stored once settled; None if its conversation was deleted."""
        try:
            message = await self._context.require_client().settled_message(
                stream.conversation_id, stream.message_id
            )
        except ClientError as exc:
            if exc.status == 404:
                return None
            raise
        return ReplyEnd.from_message(message)

    async def _show_stored(self, conversation_id: str, over_reply: bool = False) -> None:
        """Draw the chat as stored, unless a reply began in it meanwhile (`over_reply`: also
        over one of its own not begun)."""
        try:
            conversation = await self._context.require_client().conversation(
                conversation_id, limit=PAGE
            )
        except ClientError as exc:
            if exc.status == 404:
                return  # deleted meanwhile: nothing to show
            raise
        if self._is_shown(conversation_id) and (over_reply or not self._transcript.showing_reply):
            self._transcript.show_conversation(
                conversation["messages"],
                unloaded=conversation.get("earlier", 0),
                summaries=conversation.get("summaries"),
            )
