"""The window's requests to the server: the list of chats (searched), the models' status,
a chat to show (at a search hit), and its switches, model, title and deletion. Each is a
task on the window's loop; a later request to show a chat (or the list) wins over an
earlier one still on its way.

A mixin of `MainWindow` (desktop/main_window.py): these are the window's own methods; what
they use of it is declared here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import SignalInstance

from desktop.client import ParleyClient
from desktop.earlier_messages import PAGE
from desktop.errors import ClientError

TOP_ROWS = 50  # the chats asked for when a reply starts: its chat is the first of them

if TYPE_CHECKING:
    from desktop.menus import Menus
    from desktop.reply import ReplyController
    from desktop.tasks import Tasks
    from desktop.widgets.conversation_list import ConversationList
    from desktop.widgets.model_picker import ModelPicker
    from desktop.widgets.transcript import Transcript


class WindowRequests:
    client: ParleyClient | None
    current_id: str | None
    reply: ReplyController
    sidebar: ConversationList
    transcript: Transcript
    model_picker: ModelPicker
    menus: Menus
    tasks: Tasks
    conversations_shown: SignalInstance
    _list_requests: int
    _wholes_asked: int  # requests for the whole list on their way
    _whole_shown: bool  # the sidebar shows every chat (not a search's, not none yet)
    _started: dict[str, str]  # chats that began a reply since the list caught up: id -> title
    _opening: int

    if TYPE_CHECKING:  # the window's (a stub here would hide them)

        def _set_current(self, conversation_id: str | None, *, named: bool = False) -> None: ...

        def _update_title(self) -> None: ...

        def _show_switches(self, tools: bool, documents: bool) -> None: ...

        def show_welcome(self) -> None: ...

    def _require_client(self) -> ParleyClient:
        if self.client is None:
            raise ClientError("Parley's server is still starting")
        return self.client

    def _catch_up_list(self) -> None:
        """The sidebar after replies began (LIST_AFTER_START_MS): their chats moved to the top
        as the turns' first chunks named them, with no request (reading the top of the list
        was ~3-5 ms of the window's thread in several steps, beside the server's turn), while
        the rows are the server's whole list; else the top of the list asked for."""
        started = list(reversed(self._started.items()))  # the latest first
        self._started.clear()
        if self._rows_are_whole() and self.sidebar.put_on_top(started, self.current_id):
            self._list_requests += 1  # a top of the list still on its way is older than this
            self._list_shown()
        else:
            self.tasks.spawn(self._refresh_list(top=True))

    def _rows_are_whole(self) -> bool:
        """The rows are the server's whole list as last read: not a search's, no whole list
        on its way (the rows would be the ones from before it), no title edited in place and
        not stored."""
        return (
            self._whole_shown
            and not self.sidebar.query()
            and not self._wholes_asked
            and not self.sidebar.edited_in_place()
        )

    async def _refresh_list(self, top: bool = False) -> None:
        """The sidebar from the server. `top`: only the first TOP_ROWS chats, where one that
        began a reply now is (with 1,000 chats the whole list is 12-19 ms of the window's
        thread to read, issue 16). The rows below the top are kept as they are, so the whole
        list is asked for unless they are a whole list already (_rows_are_whole)."""
        client = self._require_client()
        query = self.sidebar.query() or None
        top = top and self._rows_are_whole()
        self._list_requests += 1
        request = self._list_requests
        whole = 0 if top else 1
        self._wholes_asked += whole
        try:
            conversations = await client.conversations(query, TOP_ROWS if top else None)
        finally:
            self._wholes_asked -= whole
        if request != self._list_requests:
            return  # a newer refresh is on its way: never show an older answer over it
        self.sidebar.show_conversations(conversations, self.current_id, top)
        self._whole_shown = query is None  # (a top is merged into a whole list)
        self._list_shown()

    def _list_shown(self) -> None:
        """The rows are up to date: their busy dots, the window's title, and those who wait."""
        self.sidebar.set_busy(self.reply.busy_conversations())
        self._update_title()
        self.conversations_shown.emit()

    async def _refresh_status(self) -> None:
        if self.client is None:
            return
        try:
            status = await self.client.status()
        except ClientError as exc:
            self.model_picker.show_unreachable(exc.message)
            return
        self.model_picker.show_status(status)
        self.show_welcome()  # the model's state, on a new chat's page

    async def _open(
        self,
        conversation_id: str,
        *,
        missing_ok: bool = False,
        reveal: str = "",
        hit: str | None = None,
    ) -> None:
        """Show a chat; `reveal`, `hit`: a search's words and the message found (on another
        version of the chat, that version is selected first)."""
        client = self._require_client()
        self._opening += 1
        request = self._opening
        try:
            # At a search hit: all of the branch (the hit may be anywhere in it).
            limit = None if hit is not None else PAGE
            conversation = await client.conversation(conversation_id, limit=limit)
            shown = {m["id"] for m in conversation.get("messages", [])}
            if hit is not None and hit not in shown and not self.reply.busy_in(conversation_id):
                conversation = await client.select(conversation_id, hit)
        except ClientError as exc:
            if missing_ok and exc.status == 404:
                return  # the one open at the last quit was deleted since
            raise
        if request != self._opening:
            return  # a later click, or New chat, came first
        self._set_current(conversation_id)
        self.reply.show(conversation)
        self.menus.refresh()
        if reveal:
            self.transcript.reveal(reveal, hit)
        self.model_picker.choose(conversation["model"])
        self._show_switches(conversation.get("tools", True), conversation.get("documents", False))
        if missing_ok:  # restored at launch: select it in the list too
            await self._refresh_list()

    async def _set_switch(self, conversation_id: str, switch: str, enabled: bool) -> None:
        await self._require_client().set_switch(conversation_id, switch, enabled)

    async def _set_default_model(self, name: str) -> None:
        """ "Set as default": new chats use `name` (the server remembers it)."""
        await self._require_client().models.set_default(name)
        await self._refresh_status()

    async def _set_model(self, conversation_id: str, name: str) -> None:
        await self._require_client().set_model(conversation_id, name)

    async def _rename(self, conversation_id: str, title: str) -> None:
        try:
            await self._require_client().rename(conversation_id, title)
        finally:
            await self._refresh_list()  # refused: the row shows the stored title again

    async def _delete(self, conversation_id: str) -> None:
        await self.reply.hang_up(conversation_id)
        await self._require_client().delete(conversation_id)
        if conversation_id == self.current_id:
            self._set_current(None)
            self.transcript.clear_conversation()
            self.show_welcome()
        await self._refresh_list()

    async def _redraw(self, conversation_id: str) -> None:
        conversation = await self._require_client().conversation(conversation_id, limit=PAGE)
        if conversation_id != self.current_id:
            return  # another one was opened meanwhile, in the new colours already
        self.reply.show(conversation)
        self.menus.refresh()
