"""Sign-ins a reply asked for, per chat: a tool step that ended because its server needs a
sign-in (desktop/tools/sign_in.py, `needs_sign_in`) puts the sign-in card up for that chat,
once the server's row confirms it is a remote server that is not signed in. The card's Sign in
starts the sign-in as the MCP servers dialog does (the browser opened on the server's page);
while the browser has it, the server's row is read every second until it says signed in or
failed; and while the card on screen asks, so a sign-in done elsewhere (the MCP servers
dialog) shows on it. The card stays after the reply ends (the sign-in is the server's), until
the user closes it."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal

from desktop.client.events import with_inner_steps
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.replies.sign_in_card import CardState, SignInCard
from desktop.tools.sign_in import begin_sign_in, needs_sign_in, sign_in_status, sign_in_words
from server.types import ToolPartJSON
from server.types.tools import ToolServerJSON

POLL_MS = 1000


class SignInController(Controller):
    failed = Signal(str)

    def __init__(self, context: Context, card: SignInCard) -> None:
        super().__init__(context, card)
        self._card = card
        # Per chat: the server its reply asked a sign-in for, the card's state and why.
        self._asked: dict[str, tuple[str, CardState, str]] = {}
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self._on_poll_timeout)
        card.chosen.connect(self._on_card_chosen)

    def step_changed(self, conversation_id: str, step: ToolPartJSON) -> None:
        """A step changed (a sub-agent's steps are inside its own)."""
        for inner in with_inner_steps(step):
            if needs_sign_in(inner) and conversation_id not in self._asked:
                self._context.tasks.spawn(self._confirm(conversation_id, inner["server"]))

    def show_current(self) -> None:
        """The card for the chat on screen (hidden when its reply asked for no sign-in)."""
        self._keep_polling()
        found = self._asked.get(self._context.current_id or "")
        if found is None:
            self._card.show_sign_in(None)
            return
        server, state, why = found
        self._card.show_sign_in(server, state, why)

    async def _confirm(self, conversation_id: str, name: str) -> None:
        """Ask only about a remote server that is not signed in now (a step's words alone
        could be any tool's)."""
        try:
            server = await self._server(name)
        except ClientError:
            return  # the server is not up (a restart): no card rather than a wrong one
        status = sign_in_status(server) if server is not None else None
        if status in ("needs_sign_in", "failed") and conversation_id not in self._asked:
            self._set(conversation_id, name, "ask")

    async def _server(self, name: str) -> ToolServerJSON | None:
        client = self._context.require_client()
        tools = await client.tools()
        return next((s for s in tools["servers"] if s["name"] == name), None)

    def _set(
        self,
        conversation_id: str,
        server: str,
        state: CardState,
        why: str = "",
        *,
        answer: bool = False,
    ) -> None:
        """`answer`: the answer to the card's own request (its buttons work again)."""
        if self._asked.get(conversation_id) == (server, state, why) and not answer:
            return  # as shown (a button pressed stays off until its own answer)
        self._asked[conversation_id] = (server, state, why)
        self._keep_polling()
        if conversation_id == (self._context.current_id or ""):  # else the card is another's
            self.show_current()

    def _followed(self) -> list[str]:
        """The chats whose card the server's row may change: every one waiting for the
        browser, and the one on screen while it asks (a sign-in done or given up elsewhere,
        in the MCP servers dialog, shows on it)."""
        current = self._context.current_id or ""
        return [
            chat
            for chat, (_, state, _) in self._asked.items()
            if state == "waiting" or (state == "ask" and chat == current)
        ]

    def _keep_polling(self) -> None:
        """Read the servers' rows while a card is followed, only then."""
        if not self._followed():
            self._poll.stop()
        elif not self._poll.isActive():
            self._poll.start()

    def _chats_of(self, server: str) -> list[str]:
        return [chat for chat, (name, _, _) in self._asked.items() if name == server]

    def _on_card_chosen(self, server: str, choice: str) -> None:
        chats = self._chats_of(server)
        if choice == "dismiss":
            chat = self._context.current_id or ""
            self._asked.pop(chat, None)
            self._keep_polling()
            self.show_current()
        elif choice == "sign_in":
            self._context.tasks.spawn(self._sign_in(server, chats))
        elif choice == "cancel":
            self._context.tasks.spawn(self._cancel(server, chats))

    async def _sign_in(self, name: str, chats: list[str]) -> None:
        try:
            server = await begin_sign_in(self._context.require_client(), name)
        except ClientError as exc:
            self._show(chats, name, "failed", exc.message, answer=True)
            return
        self._follow(chats, server, answer=True)

    async def _cancel(self, name: str, chats: list[str]) -> None:
        try:
            await self._context.require_client().tool_servers.cancel_sign_in(name)
        except ClientError as exc:
            self.failed.emit(f"Could not stop signing in to {name}: {exc.message}")
        self._show(chats, name, "ask", answer=True)

    def _show(
        self,
        chats: list[str],
        server: str,
        state: CardState,
        why: str = "",
        *,
        answer: bool = False,
    ) -> None:
        for chat in chats:
            self._set(chat, server, state, why, answer=answer)

    def _follow(self, chats: list[str], server: ToolServerJSON, *, answer: bool = False) -> None:
        """Show where the server's sign-in is now, for every chat that asked about it."""
        status = sign_in_status(server)
        name = server["name"]
        state: CardState = "ask"  # also when given up elsewhere (the dialog's Cancel)
        why = ""
        if status == "waiting_for_browser":
            state = "waiting"
        elif status == "signed_in" or server["state"] == "ready":
            state = "signed_in"
        elif status == "failed":
            state, why = "failed", sign_in_words(server).removeprefix("Sign-in failed: ")
        self._show(chats, name, state, why, answer=answer)

    def _on_poll_timeout(self) -> None:
        for name in {self._asked[chat][0] for chat in self._followed()}:
            self._context.tasks.spawn(self._check(name))

    async def _check(self, name: str) -> None:
        try:
            server = await self._server(name)
        except ClientError:
            return  # the server is not up (a restart): read again at the next tick
        chats = [chat for chat in self._followed() if self._asked[chat][0] == name]
        if server is None:  # removed meanwhile
            for chat in chats:
                self._asked.pop(chat, None)
            self._keep_polling()
            self.show_current()
            return
        self._follow(chats, server)
