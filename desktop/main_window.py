"""The window: sidebar, transcript, composer, model picker, and the wiring between them.

The window keeps the layout, which conversation is open, the list and the status line; the
replies' lives (send, stream, Stop, their endings) belong to `desktop.reply.ReplyController`.
Esc anywhere in the window stops the reply of the chat on screen.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QEvent, Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent
from PySide6.QtWidgets import (
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop import style
from desktop.approvals import ApprovalController
from desktop.chat_settings import ChatSettings
from desktop.client import ParleyClient
from desktop.earlier_messages import EarlierMessages
from desktop.help_windows import HelpWindows
from desktop.history_files import HistoryFiles
from desktop.menus import Menus, shortcut_rows
from desktop.reply import ReplyController
from desktop.tasks import Tasks
from desktop.transcript_links import TranscriptLinks
from desktop.turn_actions import TurnActions
from desktop.widgets.approval_card import ApprovalCard
from desktop.widgets.banner import Banner
from desktop.widgets.chat_bar import ChatBar
from desktop.widgets.composer import Composer
from desktop.widgets.conversation_list import ConversationList
from desktop.widgets.find_bar import FindBar
from desktop.widgets.transcript import Transcript
from desktop.window_requests import WindowRequests
from desktop.window_view import WindowView

log = logging.getLogger(__name__)

STATUS_POLL_MS = 1000
# The sidebar is brought up to date this long after a reply starts, not in the frames that
# send the question, draw it and open the reply's stream: stacked on those (a new chat's
# first reply), its request and redraw made the costliest frames of a reply, and with a busy
# process beside the app 4-7 in 20 short replies stalled over 16 ms (1-2 in 20 with this
# delay; issue 16, docs/benchmarks.md). Replies started within it share one refresh.
# Drawn in those frames, even the move of the chat to the top (no request) stalled 7 of 12
# replies over 16 ms beside a busy process, 0 of 12 when drawn with this delay.
LIST_AFTER_START_MS = 250


class MainWindow(WindowRequests, WindowView, QMainWindow):
    """The main window. The app gives it a client (`connect_client`) once the server runs,
    and closes it through `hang_up` and `close_for_real`; a close request is only
    announced (`close_requested`), so the app can take its one quit path."""

    close_requested = Signal()
    settings_requested = Signal()
    models_requested = Signal()
    tools_requested = Signal()  # the MCP servers dialog
    library_requested = Signal()  # the Library dialog
    reply_finished = Signal(str)  # message id, once the view shows what the server saved
    conversations_shown = Signal()
    conversation_opened = Signal(str)  # the id on screen now ("" for a new chat)
    error_shown = Signal(str)
    zoom_changed = Signal(int)  # the zoom level the user chose

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("Parley")
        self.resize(1100, 720)
        self.client: ParleyClient | None = None
        self.current_id: str | None = None
        self.system_prompt: str | None = None
        self.max_tokens: int | None = None  # the longest reply asked for (None: no limit)
        self.tasks = Tasks(self.show_error)
        self._closing = False
        self._list_requests = 0
        self._wholes_asked = 0
        self._whole_shown = False
        self._opening = 0  # the latest request to show a conversation wins

        self.sidebar = ConversationList(self)
        self.transcript = Transcript(self)
        self.composer = Composer(self)
        self.reply = ReplyController(self.transcript, self.composer, self._is_shown, self)
        self.banner = Banner(self)
        self.chat_bar = ChatBar(self)
        # Its controls, by their own names (the window connects them).
        self.model_picker = self.chat_bar.model_picker
        self.tools_switch = self.chat_bar.tools_switch
        self.documents_switch = self.chat_bar.documents_switch
        self.settings_button = self.chat_bar.settings_button
        self.models_button = self.chat_bar.models_button
        self.tools_button = self.chat_bar.tools_button
        self.chat_settings_button = self.chat_bar.chat_settings_button
        self.library_button = self.chat_bar.library_button
        self.find_bar = FindBar(self.transcript, self, self.transcript.show_all_to_find)
        self.approval_card = ApprovalCard(self)
        self._layout()
        # There from the start: one made when a link is first hovered (its target shown) or a
        # notice first given moved the composer up by its height.
        self.statusBar().setSizeGripEnabled(False)
        self._style_fields()

        self.sidebar.new_requested.connect(self.new_chat)
        self.sidebar.conversation_selected.connect(self._on_sidebar_conversation_selected)
        self.sidebar.rename_requested.connect(self._on_sidebar_rename_requested)
        self.sidebar.delete_confirmed.connect(self._on_sidebar_delete_confirmed)
        self.sidebar.search_changed.connect(self._on_sidebar_search_changed)
        self.composer.message_submitted.connect(self._on_composer_message_submitted)
        self.composer.stop_requested.connect(self.stop_reply)
        self.transcript.theme_changed.connect(self._on_transcript_theme_changed)
        self.reply.conversation_created.connect(self._on_reply_conversation_created)
        self.reply.reply_started.connect(self._on_reply_started)
        self.reply.reply_finished.connect(self._on_reply_finished)
        self.reply.busy_changed.connect(self._on_reply_busy_changed)
        self.reply.error_reported.connect(self.show_error)
        self.links = TranscriptLinks(
            self, self.transcript, self.show_error, lambda: self.client, self.tasks
        )
        self.approvals = ApprovalController(
            self.approval_card, lambda: self.client, lambda: self.current_id, self.tasks
        )
        self.approvals.failed.connect(self.show_error)
        self.reply.approval_requested.connect(self.approvals.requested)
        self.reply.step_updated.connect(self.approvals.step_changed)
        self.reply.reply_gone.connect(self.approvals.reply_ended)
        self.turn_actions = TurnActions(
            self.reply, self.composer, self.transcript, self.tasks, lambda: self.current_id,
            self.model_picker.current, lambda: self.max_tokens, lambda: self.client, self,
        )  # fmt: skip
        self.transcript.message_action.connect(self.turn_actions.handle)
        self.earlier = EarlierMessages(
            self.transcript, lambda: self.client, lambda: self.current_id, self.tasks
        )
        self.chat_settings = ChatSettings(
            lambda: self.client, lambda: self.current_id, self.tasks, self
        )
        self.chat_settings_button.clicked.connect(self.chat_settings.open)
        self.history_files = HistoryFiles(
            lambda: self.client, lambda: self.current_id, self.tasks, self
        )
        self.history_files.done.connect(self.links.notice)
        self.history_files.imported.connect(lambda: self.tasks.spawn(self._refresh_list()))
        self.settings_button.clicked.connect(self.settings_requested)
        self.models_button.clicked.connect(self.models_requested)
        self.tools_button.clicked.connect(self.tools_requested)
        self.tools_switch.toggled.connect(self._on_tools_switch_toggled)
        self.library_button.clicked.connect(self.library_requested)
        self.documents_switch.toggled.connect(self._on_documents_switch_toggled)
        self.model_picker.model_chosen.connect(self._on_model_picker_model_chosen)
        self.model_picker.default_requested.connect(
            lambda name: self.tasks.spawn(self._set_default_model(name))
        )
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(STATUS_POLL_MS)
        self._status_timer.timeout.connect(self._on_status_timer_timeout)
        self._list_timer = QTimer(self)  # a refresh of the sidebar after a reply starts
        self._list_timer.setSingleShot(True)
        self._list_timer.setInterval(LIST_AFTER_START_MS)
        self._list_timer.timeout.connect(self._catch_up_list)
        self._started: dict[str, str] = {}  # WindowRequests._catch_up_list
        self.zoom_level = 0
        self.help = HelpWindows(lambda: shortcut_rows(self.menus), self.model_picker.names, self)
        self.help.failed.connect(self.show_error)
        self.menus = Menus(self)
        self.transcript.reply_ended.connect(self.menus.refresh)
        self.transcript.prompt_chosen.connect(self._on_transcript_prompt_chosen)
        self.transcript.panel_requested.connect(self._on_transcript_panel_requested)
        self.menus.refresh()
        self.composer.focus()

    def _layout(self) -> None:
        right = QWidget(self)
        column = QVBoxLayout(right)
        column.addWidget(self.chat_bar)
        column.addWidget(self.banner)
        column.addWidget(self.find_bar)
        column.addWidget(self.transcript, 1)
        column.addWidget(self.approval_card)
        column.addWidget(self.composer)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(right)
        self.splitter.setSizes([280, 820])
        self.splitter.setCollapsible(1, False)
        # A bigger window widens the chat, not the list.
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.setCentralWidget(self.splitter)

    # -- called by the app -------------------------------------------------------------------

    def connect_client(self, client: ParleyClient, reopen: str | None = None) -> None:
        """The server is up: show the list, the status, and `reopen` if it still exists."""
        self.client = client
        self.reply.client = client
        self.tasks.spawn(self._refresh_status())
        self.tasks.spawn(self._refresh_list())
        if reopen is not None and self.current_id is None:
            self.tasks.spawn(self._open(reopen, missing_ok=True))
        self._status_timer.start()

    @property
    def reply_in_flight(self) -> bool:
        """Some chat's message is being sent or its reply shown (the app holds back a
        server restart until none is)."""
        return self.reply.busy

    def disconnect_client(self) -> None:
        """The server is going away (restart, quit): no more requests on its client."""
        self._status_timer.stop()
        self.client = None
        self.reply.client = None

    def show_error(self, message: str) -> None:
        self.banner.show_message(message)
        self.error_shown.emit(message)

    def show_server_failed(self, reason: str) -> None:
        """The embedded server could not start: why, and a model line that no longer says
        it is starting."""
        self.model_picker.show_not_running()
        self.show_error(f"Parley's server could not start: {reason}")

    def clear_error(self) -> None:
        self.banner.hide()

    async def hang_up(self) -> None:
        """Closing: stop the reply in flight the way Stop does, and all other work."""
        self._status_timer.stop()
        self._list_timer.stop()
        await self.reply.hang_up()
        await self.tasks.close()

    def _style_fields(self) -> None:
        """The focus ring, on the fields only: a style sheet on the window would stop the
        transcript from following a switch of the system's palette. Set again when the
        palette changes, which a widget with a style sheet no longer follows by itself."""
        for field in (self.composer.editor, self.sidebar.search):
            field.setStyleSheet("")
            field.setPalette(self.palette())
            field.setStyleSheet(style.FOCUS)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._style_fields()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Esc that no child used (the composer, the transcript, the list; not an inline
        # rename, which cancels itself): stop the reply of the chat on screen.
        if event.key() == Qt.Key.Key_Escape and self.reply.busy_in(self.current_id):
            self.stop_reply()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        # The app runs the async shutdown (hang up, wait for the server to settle, stop it)
        # and closes for real afterwards.
        if self._closing:
            event.accept()
            return
        event.ignore()
        self.close_requested.emit()

    def close_for_real(self) -> None:
        self._closing = True
        self.close()

    # -- slots ----------------------------------------------------------------------------

    def _is_shown(self, conversation_id: str | None) -> bool:
        return conversation_id == self.current_id

    def _set_current(self, conversation_id: str | None, *, named: bool = False) -> None:
        """Show `conversation_id`'s controls (`named`: the new chat shown got its id)."""
        if conversation_id != self.current_id:
            self.turn_actions.cancel_edit()  # an edit belongs to the chat it began in
            if not named:
                self.composer.switch_chat(self.current_id, conversation_id)
        self.current_id = conversation_id
        self.approvals.show_current()
        self.chat_settings_button.setEnabled(conversation_id is not None)
        self._on_reply_busy_changed()
        self._update_title()
        if conversation_id is None:
            self.model_picker.choose(None)  # a new chat starts on the user's default
            self._show_switches(tools=True, documents=False)  # and with tools
        self.conversation_opened.emit(conversation_id or "")

    def _update_title(self) -> None:
        title = self.sidebar.title_of(self.current_id) if self.current_id else None
        self.setWindowTitle(f"{title} — Parley" if title else "Parley")

    # -- commands (the menus', the buttons') --------------------------------------------------

    def new_chat(self) -> None:
        self._opening += 1  # a conversation still being fetched is no longer wanted
        self._set_current(None)
        self.transcript.clear_conversation()
        self.show_welcome()
        self.sidebar.clear_selection()
        self.composer.focus()

    def _on_sidebar_conversation_selected(self, conversation_id: str) -> None:
        if conversation_id != self.current_id:
            # A search hit: shown at the words found.
            query, hit = self.sidebar.query(), self.sidebar.hit(conversation_id)
            self.tasks.spawn(self._open(conversation_id, reveal=query, hit=hit))

    def _on_sidebar_rename_requested(self, conversation_id: str, title: str) -> None:
        self.tasks.spawn(self._rename(conversation_id, title))

    def _on_sidebar_delete_confirmed(self, conversation_id: str) -> None:
        self.tasks.spawn(self._delete(conversation_id))

    def _on_sidebar_search_changed(self, query: str) -> None:
        self.tasks.spawn(self._refresh_list())

    def _on_composer_message_submitted(self, text: str) -> None:
        if self.turn_actions.submit_edit(text):
            self.clear_error()
            return
        model = self.model_picker.current()
        # The conversation it was typed in, even if another is opened while it is sent.
        sending = self.reply.submit(
            self.current_id,
            text,
            model,
            self.system_prompt,
            self.max_tokens,
            tools=self.tools_switch.isChecked(),
            documents=self.documents_switch.isChecked(),
        )
        if sending is None:
            return  # this chat's reply is still in flight (its button says Stop)
        self.clear_error()
        if self.current_id is None:
            self._opening += 1  # writing in a new chat is the latest choice of what to show
        self.tasks.spawn(sending)

    def stop_reply(self) -> None:
        self.tasks.spawn(self.reply.stop(self.current_id))
        self.composer.focus()  # the next typing goes to the composer, not the button

    def _on_model_picker_model_chosen(self, name: str) -> None:
        if self.current_id is not None:
            self.tasks.spawn(self._set_model(self.current_id, name))
        # On a new chat: for that chat (created with the picker's model), not a default.

    def _on_tools_switch_toggled(self, enabled: bool) -> None:
        if self.current_id is not None:  # a new chat takes it when it is created
            self.tasks.spawn(self._set_switch(self.current_id, "tools", enabled))

    def _on_documents_switch_toggled(self, enabled: bool) -> None:
        if self.current_id is not None:  # a new chat takes it when it is created
            self.tasks.spawn(self._set_switch(self.current_id, "documents", enabled))

    def _show_switches(self, tools: bool, documents: bool) -> None:
        for switch, enabled in ((self.tools_switch, tools), (self.documents_switch, documents)):
            switch.blockSignals(True)
            switch.setChecked(enabled)
            switch.blockSignals(False)

    def _on_reply_busy_changed(self) -> None:
        self.composer.set_streaming(self.reply.busy_in(self.current_id))
        self.sidebar.set_busy(self.reply.busy_conversations())
        self.menus.refresh()

    def _on_reply_conversation_created(self, conversation_id: str) -> None:
        if self.current_id is None:  # still on the new chat it was typed in
            self._set_current(conversation_id, named=True)

    def _on_reply_started(self, conversation_id: str, title: str) -> None:
        self._started.pop(conversation_id, None)
        self._started[conversation_id] = title  # the latest last
        if not self._list_timer.isActive():
            self._list_timer.start()  # a new title, a new order (LIST_AFTER_START_MS)

    def _on_reply_finished(self, message_id: str) -> None:
        self.tasks.spawn(self._refresh_status())
        if self.sidebar.query():
            self.tasks.spawn(self._refresh_list())  # the new reply may match the search
        self.reply_finished.emit(message_id)

    def _on_transcript_theme_changed(self) -> None:
        # Shown again from what the server stored, a reply in flight live with it.
        if self.current_id is not None:
            self.tasks.spawn(self._redraw(self.current_id))
        else:
            self.show_welcome()

    def _on_status_timer_timeout(self) -> None:
        self.tasks.spawn(self._refresh_status())
