"""The window: sidebar, transcript, composer, chat bar. It keeps which conversation is open
and shows it; its pieces own the rest (replies: desktop/replies/controller.py; the sidebar's rows:
chat_list.py; the chat bar: chat_bar_controller.py; the View menu: window_view.py; the menus'
commands: window_commands.py), acting on the `Context` it sets (the client, the chat on
screen) and answering by their signals. Esc anywhere stops the reply of the chat on screen."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent
from PySide6.QtWidgets import QApplication, QMainWindow

from desktop.chats.chat_list import ChatList
from desktop.chats.conversation_list import ConversationList
from desktop.chats.earlier_messages import EarlierMessages
from desktop.chats.history_files import HistoryFiles
from desktop.chats.opening import ChatOpening
from desktop.chats.projects import Projects
from desktop.chats.settings import ChatSettings
from desktop.client import ParleyClient
from desktop.composer.attachments import Attachments
from desktop.composer.chat_bar import ChatBar
from desktop.composer.chat_bar_controller import ChatBarController
from desktop.composer.composer import Composer
from desktop.composer.slash_prompts import SlashPrompts
from desktop.context.model_view import ModelView
from desktop.controller import Context
from desktop.look.palette import palette as look_palette
from desktop.look.theme import is_dark
from desktop.look.window_style import window_style
from desktop.replies.actions import TurnActions
from desktop.replies.approval_card import ApprovalCard
from desktop.replies.controller import ReplyController
from desktop.replies.overdue_card import OverdueCard
from desktop.replies.question_card import QuestionCard
from desktop.replies.request import TurnAsked
from desktop.replies.sign_in_card import SignInCard
from desktop.replies.waiting import Waiting
from desktop.tasks import Tasks
from desktop.transcript.attachment_links import AttachmentLinks
from desktop.transcript.links import TranscriptLinks
from desktop.transcript.surface import TranscriptSurface
from desktop.transcript.welcome import welcome_page
from desktop.window.banner import Banner
from desktop.window.commands import WindowCommands, connect_menus
from desktop.window.find_bar import FindBar
from desktop.window.help_windows import HelpWindows
from desktop.window.menus import Menus, shortcut_rows
from desktop.window.view import WindowView, lay_out, window_title


class MainWindow(QMainWindow):
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

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("Parley")
        self.resize(1100, 720)
        self.tasks = Tasks(self.show_error)
        self.context = Context(self.tasks)
        self.system_prompt: str | None = None
        self.max_tokens: int | None = None  # the longest reply asked for (None: no limit)
        self._closing = False

        self.sidebar = ConversationList(self)
        self.transcript = TranscriptSurface(self)
        self.composer = Composer(self)
        self.reply = ReplyController(self.context, self.transcript, self.composer, self)
        self.banner = Banner(self)
        self.chat_bar = ChatBar(self)
        self.model_picker = self.chat_bar.model_picker
        self.tools_switch = self.chat_bar.tools_switch
        self.documents_switch = self.chat_bar.documents_switch
        self.composer.add_controls([self.tools_switch, self.documents_switch])
        # The model's view of the chat: its context meter, summaries, Compact now.
        self.model_view = ModelView(
            self.context, self.reply, self.transcript, self.model_picker, self
        )
        self.find_bar = FindBar(self.transcript, self, self.transcript.show_all_to_find)
        self.approval_card = ApprovalCard(self)
        self.overdue_card = OverdueCard(self)  # a long call: keep waiting, or stop it?
        self.question_card = QuestionCard(self)  # a tool's MCP server asks the user
        self.sign_in_card = SignInCard(self)  # a reply wanted a server that needs a sign-in
        column = [self.chat_bar, self.banner, self.find_bar, self.transcript, self.approval_card,
                  self.overdue_card, self.question_card, self.sign_in_card, self.model_view.meter,
                  self.composer]  # fmt: skip
        self.splitter = lay_out(self, self.sidebar, column, self.transcript)
        # There from the start: one made later (a link hovered, a notice) moved the composer.
        self.statusBar().setSizeGripEnabled(False)
        self._style()

        self.view = WindowView(self.splitter, self.sidebar, self.composer)
        self.chat_list = ChatList(self.context, self.sidebar)
        self.projects = Projects(self.context, self.sidebar, self.chat_list, self)
        self.opening = ChatOpening(self.context, self)
        self.bar = ChatBarController(self.context, self.chat_bar)
        self.links = TranscriptLinks(self.context, self, self.transcript, self.show_error)
        cards = (self.approval_card, self.overdue_card, self.question_card, self.sign_in_card)
        self.waiting = Waiting(self.context, self.reply, cards, self.chat_list, self)
        self.turn_actions = TurnActions(
            self.context, self.reply, self.composer, self.transcript, self
        )
        self.earlier = EarlierMessages(self.context, self.transcript)
        self.attachments = Attachments(self.context, self.composer, self.transcript, self)
        self.prompts = SlashPrompts(self.context, self.composer, self.attachments, self)
        self.attachment_links = AttachmentLinks(self.context, self.transcript, self)
        self.chat_settings = ChatSettings(self.context, self)
        self.history_files = HistoryFiles(self.context, self)
        self.menus = Menus(self)
        self.help = HelpWindows(shortcut_rows(self.menus), self.model_picker.names, self)
        self._connect()
        commands = WindowCommands(
            self.new_chat, self.close, self.stop_reply, self._title, self._asked,
            self._open_chat_settings, self.settings_requested.emit, self.models_requested.emit,
            self.tools_requested.emit, self.library_requested.emit,
        )  # fmt: skip
        connect_menus(
            self.menus, commands, self.history_files, self.help, self.view, self.find_bar,
            self.composer, self.sidebar, self.turn_actions, self.model_view,
        )  # fmt: skip
        self.menus.chat.aboutToShow.connect(self._refresh_menus)
        self._refresh_menus()
        self.composer.focus()

    def _connect(self) -> None:
        view = self.view
        self.sidebar.new_requested.connect(self.new_chat)
        self.sidebar.conversation_selected.connect(self._on_sidebar_conversation_selected)
        self.sidebar.hit_chosen.connect(self._on_sidebar_hit_chosen)
        self.sidebar.delete_confirmed.connect(lambda id_: self.tasks.spawn(self._delete(id_)))
        self.projects.opened.connect(self._on_projects_opened)
        self.projects.chat_moved.connect(self._on_projects_chat_moved)
        self.projects.chat_chosen.connect(lambda id_: self.tasks.spawn(self._open(id_)))
        self.projects.current_deleted.connect(self.new_chat)
        self.composer.message_submitted.connect(self._on_composer_message_submitted)
        self.composer.stop_requested.connect(self.stop_reply)
        self.transcript.theme_changed.connect(self._on_transcript_theme_changed)
        self.transcript.message_action.connect(self._on_transcript_message_action)
        self.transcript.reply_ended.connect(self._refresh_menus)
        self.transcript.prompt_chosen.connect(self._on_transcript_prompt_chosen)
        panels = {
            "settings": self.settings_requested.emit, "models": self.models_requested.emit,
            "library": self.library_requested.emit, "shortcuts": self.help.show_shortcuts,
        }  # fmt: skip
        self.transcript.panel_requested.connect(lambda panel: panels[panel]())
        self.reply.conversation_created.connect(self._on_reply_conversation_created)
        self.reply.turn_refused.connect(self.show_welcome)
        self.reply.reply_started.connect(self.chat_list.reply_started)
        self.reply.reply_finished.connect(self._on_reply_finished)
        self.reply.busy_changed.connect(self._on_reply_busy_changed)
        self.reply.error_reported.connect(self.show_error)
        self.reply.error_resolved.connect(self.banner.withdraw)
        self.waiting.changed.connect(self._update_title)
        self.waiting.failed.connect(self.show_error)
        for card in (self.approval_card, self.overdue_card, self.question_card, self.sign_in_card):
            card.focus_released.connect(self.composer.focus)  # answered: typing goes on here
        self.bar.switch_saved.connect(self.model_view.chat_changed)  # the tools offered
        self.model_view.compaction.running_changed.connect(self._refresh_menus)
        self.model_view.failed.connect(self.show_error)
        self.conversation_opened.connect(lambda _id: self.model_view.refresh())
        self.chat_settings.saved.connect(lambda _id: self.model_view.refresh())
        self.chat_list.shown.connect(self._on_chat_list_shown)
        self.bar.status_shown.connect(self.show_welcome)
        # The chips warn of what the model shown cannot take (as the server last said).
        for shown in (self.model_picker.model_shown, self.bar.status_shown):
            shown.connect(lambda: self.attachments.show_model(self.model_picker.current_status()))
        self.history_files.done.connect(self.links.notice)
        self.links.resources.attach_wanted.connect(self.attachments.attach_resources)
        self.history_files.imported.connect(lambda: self.tasks.spawn(self.chat_list.refresh()))
        self.history_files.imported.connect(lambda: self.tasks.spawn(self.projects.refresh()))
        self.help.failed.connect(self.show_error)
        self.view.zoom_shown.connect(lambda level: self.menus.show_zoom(*view.can_zoom(level)))
        self.view.sidebar_shown.connect(self.menus.sidebar.setChecked)
        bar = self.chat_bar
        bar.chat_settings_button.clicked.connect(self._open_chat_settings)
        for button, asked in ((bar.settings_button, self.settings_requested),
                              (bar.models_button, self.models_requested),
                              (bar.tools_button, self.tools_requested),
                              (bar.library_button, self.library_requested)):  # fmt: skip
            button.clicked.connect(asked)

    # -- called by the app -------------------------------------------------------------------

    @property
    def client(self) -> ParleyClient | None:  # (None while the server is not up)
        return self.context.client

    @property
    def current_id(self) -> str | None:  # the chat on screen (None: a new chat)
        return self.context.current_id

    def connect_client(self, client: ParleyClient, reopen: str | None = None) -> None:
        """The server is up: show the list, the status, and `reopen` if it still exists."""
        self.context.client = client
        self.bar.start()
        self.model_view.refresh()  # the chat still open after a restart: measured anew
        self.tasks.spawn(self.chat_list.refresh())
        self.tasks.spawn(self.projects.refresh())
        if reopen is not None and self.context.current_id is None:
            self.tasks.spawn(self._open(reopen, missing_ok=True))

    @property
    def reply_in_flight(self) -> bool:
        """Some chat's reply is in flight (the app holds back a server restart till none is)."""
        return self.reply.busy

    def disconnect_client(self) -> None:
        """The server is going away (restart, quit): no more requests on its client."""
        self.bar.stop()
        self.context.client = None
        self.model_view.refresh()  # a measure on its way is moot

    def show_error(self, message: str) -> None:
        self.banner.show_message(message)
        self.error_shown.emit(message)

    def show_server_failed(self, reason: str) -> None:
        """The embedded server could not start: why (the model line stops saying "starting")."""
        self.model_picker.show_not_running()
        self.show_error(f"Parley's server could not start: {reason}")

    def clear_error(self) -> None:
        self.banner.hide()

    async def hang_up(self) -> None:
        """Closing: stop the reply in flight the way Stop does, and all other work."""
        self.bar.stop()
        self.chat_list.stop()
        await self.reply.hang_up()
        await self.tasks.close()

    def show_welcome(self) -> None:
        """On a new chat with nothing in it yet: which model answers, examples, pointers."""
        if self.context.current_id is None:
            model = self.model_picker.current()
            state = self.model_picker.state.text() if self.context.client else ""
            self.transcript.show_welcome(welcome_page(model, state))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._style()

    def event(self, event: QEvent) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.ApplicationPaletteChange:
            self._style()  # (its style sheet holds its own palette: no PaletteChange comes)
        return handled

    def _style(self) -> None:
        """The widgets in the look's palette for the theme shown (a style sheet does not
        follow a palette change by itself)."""
        # A style sheet stops a font set on a parent (View → Zoom) from reaching the
        # widgets it styles, unless told otherwise.
        QApplication.setAttribute(Qt.ApplicationAttribute.AA_UseStyleSheetPropagationInWidgetStyles)
        look = look_palette(is_dark(QApplication.palette()))  # (not ours: the sheet's)
        sheet = window_style(look)
        if self.splitter.styleSheet() == sheet:
            return  # (setting a sheet changes the palette: this again, with the same look)
        self.splitter.setStyleSheet(sheet)
        # The window's own ground (under the status bar), and nothing else: its dialogs keep
        # the platform's look.
        self.setStyleSheet(
            f"QMainWindow, QStatusBar {{ background: {look.background}; color: {look.text}; }}"
        )
        # Told, not left to hear it: a style sheet holds their palettes, so a change of the
        # application's colours reaches them as no event of their own.
        self.transcript.follow_theme()
        self.composer.follow_theme()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Esc that no child used (the composer, the transcript, the list; not an inline
        # rename, which cancels itself): stop the reply of the chat on screen.
        if event.key() == Qt.Key.Key_Escape and self._busy():
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

    # -- the chat on screen ----------------------------------------------------------------

    def _set_current(self, conversation_id: str | None, *, named: bool = False) -> None:
        """Show `conversation_id`'s controls (`named`: the new chat shown got its id)."""
        if conversation_id != self.context.current_id:
            self.turn_actions.cancel_edit()  # an edit belongs to the chat it began in
            if not named:
                self.composer.switch_chat(self.context.current_id, conversation_id)
        self.context.current_id = conversation_id
        self.reply.chat_shown()  # a send refused in the chat left is no longer said
        self.waiting.show_current()
        self.bar.show_current()
        self._on_reply_busy_changed()
        self._update_title()
        self.conversation_opened.emit(conversation_id or "")

    def _title(self) -> str | None:
        """The title of the chat on screen, as the list shows it."""
        current = self.context.current_id
        return self.sidebar.title_of(current) if current else None

    def _update_title(self) -> None:
        current, waiting = self.context.current_id, self.chat_list.waiting
        elsewhere = len(waiting - {current})
        self.setWindowTitle(window_title(self._title(), current in waiting, elsewhere))

    def _refresh_menus(self) -> None:
        """Enable the menus' entries that can act now, on the chat shown and its last reply."""
        current = self.context.current_id
        busy = self._busy()
        last = self.transcript.last_actions() if current is not None and not busy else {}
        self.menus.show_chat(current is not None, busy, last)
        self.menus.compact.setEnabled(self.model_view.can_compact)

    def _busy(self) -> bool:
        """The chat on screen has a reply streaming, or a summary being made: Stop stops it."""
        return self.reply.busy_in(self.context.current_id) or self.model_view.compacting_here

    def _asked(self) -> TurnAsked:
        """What a turn the user asks for now is asked with."""
        return TurnAsked(
            self.model_picker.current(), self.max_tokens, self.system_prompt,
            self.bar.tools_wanted, self.documents_switch.isChecked(),
            self.model_picker.current_status(),
        )  # fmt: skip

    def new_chat(self) -> None:
        self.opening.supersede()  # a conversation still being fetched is no longer wanted
        self._set_current(None)
        self.transcript.clear_conversation()
        self.show_welcome()
        self.sidebar.clear_selection()
        self.composer.focus()

    def stop_reply(self) -> None:
        """Stop: the reply of the chat on screen, or the summary "Compact now" is making."""
        if self.model_view.compacting_here:
            self.model_view.stop()
        self.tasks.spawn(self.reply.stop(self.context.current_id))
        self.composer.focus()  # the next typing goes to the composer, not the button

    async def _open(
        self, conversation_id: str, *, missing_ok: bool = False, reveal: str = "",
        hit: str | None = None,
    ) -> None:  # fmt: skip
        """Show a chat; `reveal`, `hit`: a search's words and the message found."""
        selectable = not self.reply.busy_in(conversation_id)
        conversation = await self.opening.fetch(
            conversation_id, missing_ok=missing_ok, hit=hit, selectable=selectable
        )
        if conversation is None:
            return
        self._set_current(conversation_id)
        self.context.project_id = conversation.get("project_id")  # a new chat's, from here
        self.projects.show_chat(conversation_id, self.context.project_id)
        self.reply.show(conversation)
        self._refresh_menus()
        if reveal:
            self.transcript.reveal(reveal, hit)
        self.bar.show_chat(conversation)
        if missing_ok:  # restored at launch: select it in the list too
            await self.chat_list.refresh()

    async def _delete(self, conversation_id: str) -> None:
        await self.reply.hang_up(conversation_id)
        await self.context.require_client().delete(conversation_id)
        if conversation_id == self.context.current_id:
            self._set_current(None)
            self.transcript.clear_conversation()
            self.show_welcome()
        await self.chat_list.refresh()

    async def _redraw(self, conversation_id: str) -> None:
        conversation = await self.opening.fetch_again(conversation_id)
        if conversation is not None:  # else another was opened, in the new colours already
            self.reply.show(conversation)
            self._refresh_menus()

    def _open_chat_settings(self) -> None:
        self.chat_settings.open(self.max_tokens)  # unticked, its longest reply is this

    def _on_sidebar_hit_chosen(self, conversation_id: str) -> None:
        # A search hit in the chat on screen: no new chat to open, only the words to show.
        if conversation_id == self.context.current_id:
            hit = self.sidebar.hit(conversation_id)
            self.transcript.reveal(self.sidebar.query(), hit)

    def _on_sidebar_conversation_selected(self, conversation_id: str) -> None:
        if conversation_id != self.context.current_id:
            # A search hit: shown at the words found.
            query, hit = self.sidebar.query(), self.sidebar.hit(conversation_id)
            self.tasks.spawn(self._open(conversation_id, reveal=query, hit=hit))

    def _on_composer_message_submitted(self, text: str) -> None:
        new_chat = self.context.current_id is None
        if self.turn_actions.send(text, self._asked()):
            self.clear_error()
            if new_chat:  # writing in a new chat is the latest choice of what to show
                self.opening.supersede()

    def _on_transcript_message_action(self, action: str, message_id: str) -> None:
        self.turn_actions.handle(action, message_id, self._asked())

    def _on_transcript_prompt_chosen(self, prompt: str) -> None:
        self.composer.set_text(prompt)
        self._on_composer_message_submitted(prompt)

    def _on_transcript_theme_changed(self) -> None:
        # Shown again from what the server stored, a reply in flight live with it.
        if self.context.current_id is not None:
            self.tasks.spawn(self._redraw(self.context.current_id))
        else:
            self.show_welcome()

    def _on_reply_busy_changed(self) -> None:
        self.composer.set_streaming(self.reply.busy_in(self.context.current_id))
        self.chat_list.show_busy(self.reply.busy_conversations())
        self._refresh_menus()

    def _on_projects_opened(self, project_id: str) -> None:
        self.context.project_id = project_id or None  # the group last chosen

    def _on_projects_chat_moved(self, conversation_id: str, project_id: str) -> None:
        if conversation_id == self.context.current_id:
            self.context.project_id = project_id or None

    def _on_reply_conversation_created(self, conversation_id: str) -> None:
        self.projects.chats_changed()  # its project's count
        if self.context.current_id is None:  # still on the new chat it was typed in
            self._set_current(conversation_id, named=True)
        else:  # its dot, once the list shows it
            self.chat_list.show_busy(self.reply.busy_conversations())

    def _on_reply_finished(self, message_id: str) -> None:
        if self.sidebar.query():
            self.tasks.spawn(self.chat_list.refresh())  # the new reply may match the search
        self.reply_finished.emit(message_id)

    def _on_chat_list_shown(self) -> None:
        self._update_title()
        self.conversations_shown.emit()
