"""The sidebar's rows kept in step with the server: the list of chats (searched), asked for
again after a rename, an import, a search's change; and, a while after replies start, their
chats moved to the top as the turns named them. A later request for the list wins over an
earlier one still on its way. Their date groups are drawn again when a day begins.

What the rows are is the open project's chats, or with none open those outside every
project (every chat while there is no project); a search looks in the open project, or in
every chat when the user says so or none is open."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, QTimer, Signal

from desktop.chats.conversation_list import ConversationList
from desktop.chats.groups import seconds_to_next_day
from desktop.controller import Context, Controller

TOP_ROWS = 50  # the chats asked for when a reply starts: its chat is the first of them
# The sidebar is brought up to date this long after a reply starts, not in the frames that
# send the question, draw it and open the reply's stream: stacked on those (a new chat's
# first reply), its request and redraw made the costliest frames of a reply, and with a busy
# process beside the app 4-7 in 20 short replies stalled over 16 ms (1-2 in 20 with this
# delay, docs/benchmarks.md). Replies started within it share one refresh.
# Drawn in those frames, even the move of the chat to the top (no request) stalled 7 of 12
# replies over 16 ms beside a busy process, 0 of 12 when drawn with this delay.
LIST_AFTER_START_MS = 250


class ChatList(Controller):
    shown = Signal()  # the rows are up to date (their titles may have changed)

    def __init__(self, context: Context, sidebar: ConversationList) -> None:
        super().__init__(context, sidebar)
        self._sidebar = sidebar
        self._busy: set[str] = set()  # the chats with a reply in flight (the window's word)
        self.waiting: set[str] = set()  # those whose reply waits for the user's answer
        self._requests = 0
        self._wholes_asked = 0  # requests for the whole list on their way
        self._whole_shown = False  # the rows are every chat (not a search's, not none yet)
        self._started: dict[str, str] = {}  # chats that began a reply since: id -> title
        self.project: str | None = None  # the open project (None: the chats outside)
        self.any_projects = False  # whether there is a project (else the rows are every chat)
        self._timer = QTimer(self)  # a refresh of the rows after a reply starts
        self._timer.setSingleShot(True)
        self._timer.setInterval(LIST_AFTER_START_MS)
        self._timer.timeout.connect(self._catch_up)
        sidebar.rename_requested.connect(self._on_sidebar_rename_requested)
        sidebar.search_changed.connect(self._on_sidebar_search_changed)
        sidebar.scope.within_changed.connect(self._on_sidebar_search_changed)
        # Armed for the next midnight, not a poll: a list left open overnight says that
        # today's chats are yesterday's. Precise: a coarse timer may be 5 % late, 30 min at 10 h.
        self._day_timer = QTimer(self)
        self._day_timer.setSingleShot(True)
        self._day_timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._day_timer.timeout.connect(self._on_day_timer_timeout)
        self.follow_days()

    def follow_days(self) -> None:
        """Draw the groups again at the sidebar's clock's next midnight (and each after)."""
        seconds = seconds_to_next_day(self._sidebar.clock())
        # Early by a clock change or the timer, it comes again for the rest; one ms past
        # midnight, the day has surely turned on any clock.
        self._day_timer.start(max(1, math.ceil(seconds * 1000)) + 1)

    def show_busy(self, conversation_ids: set[str]) -> None:
        """Which chats have a reply in flight (their rows' dots, now and after a refresh)."""
        self._busy = set(conversation_ids)
        self._sidebar.set_busy(self._busy)

    def show_waiting(self, conversation_ids: set[str]) -> None:
        """Which chats' replies wait for the user (a call to approve, a long call to keep or
        stop): their rows' badges, now and after a refresh."""
        self.waiting = set(conversation_ids)
        self._sidebar.set_waiting(self.waiting)

    def reply_started(self, conversation_id: str, title: str) -> None:
        """A chat began a reply: a new title, a new order (after LIST_AFTER_START_MS)."""
        self._started.pop(conversation_id, None)
        self._started[conversation_id] = title  # the latest last
        if not self._timer.isActive():
            self._timer.start()

    def show_project(self, project_id: str | None) -> None:
        """The rows become this project's chats (None: those outside every project)."""
        self.project = project_id
        self._whole_shown = False
        self._context.tasks.spawn(self.refresh())

    def stop(self) -> None:
        """Closing: no refresh after this."""
        self._timer.stop()
        self._day_timer.stop()

    def _on_day_timer_timeout(self) -> None:
        self._sidebar.regroup()
        self.follow_days()

    def _catch_up(self) -> None:
        """The rows after replies began: their chats moved to the top as the turns' first
        chunks named them, with no request (reading the top of the list was ~3-5 ms of the
        window's thread in several steps, beside the server's turn), while the rows are the
        server's whole list; else the top of the list asked for."""
        started = list(reversed(self._started.items()))  # the latest first
        self._started.clear()
        current = self._context.current_id
        in_rows = all(self._in_rows(chat_id) for chat_id, _ in started)
        if in_rows and self._rows_are_whole() and self._sidebar.put_on_top(started, current):
            self._requests += 1  # a top of the list still on its way is older than this
            self._list_shown()
        else:
            self._context.tasks.spawn(self.refresh(top=True))

    def _in_rows(self, conversation_id: str) -> bool:
        """Whether a chat that began a reply belongs in the rows: listed there, or a new chat
        (never listed yet) made where the rows are."""
        if self._sidebar.list.rows.item(conversation_id) is not None:
            return True
        new = conversation_id not in self._sidebar.project_of
        if new and (not self.any_projects or self._context.project_id == self.project):
            self._sidebar.project_of[conversation_id] = self.project
            return True
        return False

    def _rows_are_whole(self) -> bool:
        """The rows are the server's whole list as last read: not a search's, no whole list
        on its way (the rows would be the ones from before it), no title edited in place and
        not stored."""
        return (
            self._whole_shown
            and not self._sidebar.query()
            and not self._wholes_asked
            and not self._sidebar.edited_in_place()
        )

    async def refresh(self, top: bool = False) -> None:
        """The rows from the server. `top`: only the first TOP_ROWS chats, where one that
        began a reply now is (with 1,000 chats the whole list is 12-19 ms of the window's
        thread to read). The rows below the top are kept as they are, so the whole
        list is asked for unless they are a whole list already (_rows_are_whole)."""
        client = self._context.require_client()
        query = self._sidebar.query() or None
        top = top and self._rows_are_whole()
        self._requests += 1
        request = self._requests
        whole = 0 if top else 1
        self._wholes_asked += whole
        try:
            limit = TOP_ROWS if top else None
            if (query and not self._sidebar.scope.searching_within()) or not (
                self.project or self.any_projects
            ):
                conversations = await client.conversations(query, limit)
            else:
                conversations = await client.projects.chats(self.project, query, limit)
        finally:
            self._wholes_asked -= whole
        if request != self._requests:
            return  # a newer refresh is on its way: never show an older answer over it
        self._sidebar.show_conversations(conversations, self._context.current_id, top)
        self._whole_shown = query is None  # (a top is merged into a whole list)
        self._list_shown()

    def _list_shown(self) -> None:
        self._sidebar.set_busy(self._busy)
        self._sidebar.set_waiting(self.waiting)
        self.shown.emit()

    def _on_sidebar_rename_requested(self, conversation_id: str, title: str) -> None:
        self._context.tasks.spawn(self._rename(conversation_id, title))

    def _on_sidebar_search_changed(self, _query: object) -> None:
        self._context.tasks.spawn(self.refresh())

    async def _rename(self, conversation_id: str, title: str) -> None:
        try:
            await self._context.require_client().rename(conversation_id, title)
        finally:
            await self.refresh()  # refused: the row shows the stored title again
