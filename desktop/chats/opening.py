"""Fetching a chat to show: its newest page, or, at a search hit, all of its branch (the
hit's version selected first when the hit is on another one); and fetched again to be drawn
anew (a new theme). The latest request to show a chat wins over one still on its way."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop.chats.earlier_messages import PAGE
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from server.types import ConversationJSON


class ChatOpening(Controller):
    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self._latest = 0  # the number of the latest request to show a chat

    def supersede(self) -> None:
        """Another choice of what to show came (New chat, a message in a new chat): a chat
        still being fetched is no longer wanted."""
        self._latest += 1

    async def fetch(
        self,
        conversation_id: str,
        *,
        missing_ok: bool = False,
        hit: str | None = None,
        selectable: bool = True,
    ) -> ConversationJSON | None:
        """The chat to show; None when a later request came first, or when it is gone and
        `missing_ok`. `selectable`: the hit's version may be selected (not while the chat's
        reply is in flight)."""
        client = self._context.require_client()
        self._latest += 1
        request = self._latest
        try:
            # At a search hit: all of the branch (the hit may be anywhere in it).
            limit = None if hit is not None else PAGE
            conversation = await client.conversation(conversation_id, limit=limit)
            shown = {m["id"] for m in conversation.get("messages", [])}
            if hit is not None and hit not in shown and selectable:
                conversation = await client.select(conversation_id, hit)
        except ClientError as exc:
            if missing_ok and exc.status == 404:
                return None  # the one open at the last quit was deleted since
            raise
        if request != self._latest:
            return None  # a later click, or New chat, came first
        return conversation

    async def fetch_again(self, conversation_id: str) -> ConversationJSON | None:
        """The chat on screen as stored now; None if another was opened meanwhile."""
        client = self._context.require_client()
        conversation = await client.conversation(conversation_id, limit=PAGE)
        return conversation if conversation_id == self._context.current_id else None
