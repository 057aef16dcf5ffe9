"""The sidebar's projects kept in step with the server, and what the user does with them: a
new project, one opened (the list below shows its chats), renamed, its instructions and
folders edited, deleted (asking what becomes of its chats), a chat moved between them, a
scope's memory opened."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QInputDialog, QLineEdit, QMessageBox, QWidget

from desktop.chats.chat_list import ChatList
from desktop.chats.conversation_list import ConversationList
from desktop.chats.project_dialog import ProjectDialog
from desktop.chats.projects_panel import chats_said
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.memory.controller import MemoryDialogs
from desktop.memory.dialog import OUTSIDE_SCOPE
from server.types.projects import ProjectChats, ProjectJSON

SENSITIVE = "sensitive_folder"


class Projects(Controller):
    opened = Signal(str)  # the project the user opened ("": none; the chats outside)
    chat_moved = Signal(str, str)  # a chat, and its project now ("": none)
    current_deleted = Signal()  # the chat on screen was deleted with its project
    chat_chosen = Signal(str)  # a memory line's chat link: open that chat

    def __init__(
        self, context: Context, sidebar: ConversationList, chat_list: ChatList, parent: QWidget
    ) -> None:
        super().__init__(context, parent)
        self._sidebar = sidebar
        self._panel = sidebar.projects
        self._chat_list = chat_list
        self._stale = False  # its chats' counts may have changed since the last list
        self._wanted: str | None = None  # a project to open once it is listed
        self.dialog: ProjectDialog | None = None
        self._place_current = False  # the chat on screen to be placed once the rows change
        self._asking: QWidget | None = None  # a name asked for, or a delete's question
        self.memory = MemoryDialogs(context, parent)
        self.memory.chat_chosen.connect(self.chat_chosen)
        panel = self._panel
        panel.opened.connect(self._on_panel_opened)
        panel.new_requested.connect(self.ask_new)
        panel.rename_requested.connect(self.ask_rename)
        panel.edit_requested.connect(self.edit)
        panel.memory_requested.connect(self.open_memory)
        panel.delete_requested.connect(self.ask_delete)
        panel.chat_dropped.connect(self._on_sidebar_move_requested)
        sidebar.scope.memory_requested.connect(lambda: self.open_memory(chat_list.project))
        sidebar.move_requested.connect(self._on_sidebar_move_requested)
        sidebar.delete_confirmed.connect(lambda _id: self.chats_changed())
        chat_list.shown.connect(self._on_chat_list_shown)

    async def refresh(self) -> None:
        """The projects as the server has them now (none asked while the server restarts:
        connecting again reads them)."""
        client = self._context.client
        if client is None:
            return
        projects = await client.projects.all()
        self._stale = False
        self._panel.show_projects(projects)
        wanted, self._wanted = self._wanted, None
        if wanted is not None and self._panel.project(wanted) is not None:
            self.open_project(wanted)
        self._sidebar.scope.show_scope(self._panel.name_of(self._chat_list.project))
        if bool(projects) != self._chat_list.any_projects:
            self._chat_list.any_projects = bool(projects)  # the rows: every chat, or outside
            # A chat shown before the projects were known (restored at launch) was among
            # every chat's rows; once only the chats outside are, its project opens.
            self._place_current = True
            await self._chat_list.refresh()

    def chats_changed(self) -> None:
        """A chat was made or deleted: the counts are read again with the next list."""
        self._stale = True

    def open_project(self, project_id: str | None) -> None:
        """Open a project in the sidebar (None: the chats outside), as a click on it does."""
        self._panel.open_project(project_id)
        self._on_panel_opened(project_id or "")

    def show_chat(self, conversation_id: str, project_id: str | None) -> None:
        """A chat was opened from elsewhere than the list (restored at launch, a memory
        line's link): its project opens in the sidebar when the list does not hold it, so
        the chat on screen is among the rows. Not during a search (its rows are the hits)."""
        listed = self._sidebar.list.rows.item(conversation_id) is not None
        if listed or self._sidebar.query() or project_id == self._chat_list.project:
            return
        if project_id is None or self._panel.project(project_id) is not None:
            self.open_project(project_id)
        else:
            self._wanted = project_id  # (not listed yet: the chat was restored at launch)

    def open_memory(self, project_id: str | None) -> None:
        name = self._panel.name_of(project_id) if project_id else None
        self.memory.open(project_id or None, name or OUTSIDE_SCOPE)

    # -- a name asked for -----------------------------------------------------------------

    def _ask_name(self, title: str, name: str, text: str, chosen: object) -> None:
        asking = QInputDialog(self._parent)
        asking.setObjectName(name)
        asking.setWindowTitle(title)
        asking.setLabelText("Name")
        asking.setTextEchoMode(QLineEdit.EchoMode.Normal)
        asking.setTextValue(text)
        asking.textValueSelected.connect(chosen)
        asking.finished.connect(asking.deleteLater)
        self._asking = asking
        asking.open()  # never a nested event loop under qasync

    def ask_new(self) -> None:
        self._ask_name("New project", "new-project-name", "", self._on_new_name_chosen)

    def ask_rename(self, project_id: str) -> None:
        project = self._panel.project(project_id)
        if project is not None:
            chosen = lambda name: self._spawn_update(project_id, name=name)  # noqa: E731
            self._ask_name("Rename project", "rename-project", project["name"], chosen)

    def _on_new_name_chosen(self, name: str) -> None:
        if name.strip():
            self._context.tasks.spawn(self._create(name))

    async def _create(self, name: str) -> None:
        project = await self._context.require_client().projects.create(name)
        await self.refresh()
        self.open_project(project["id"])

    def _spawn_update(self, project_id: str, **fields: str) -> None:
        self._context.tasks.spawn(self._update(project_id, fields))

    async def _update(self, project_id: str, fields: dict[str, str]) -> None:
        await self._context.require_client().projects.update(project_id, **fields)  # type: ignore[arg-type]
        await self.refresh()

    # -- instructions and folders -----------------------------------------------------------

    def edit(self, project_id: str) -> None:
        project = self._panel.project(project_id)
        if project is None:
            return
        if self.dialog is not None:
            self.dialog.close()
        dialog = ProjectDialog(project, self._parent)
        dialog.save_requested.connect(
            lambda name, text, folders, confirmed: self._context.tasks.spawn(
                self._save(dialog, name, text, folders, confirmed)
            )
        )
        dialog.finished.connect(lambda _result: self._dialog_closed(dialog))
        self.dialog = dialog
        dialog.open()

    def _dialog_closed(self, dialog: ProjectDialog) -> None:
        if self.dialog is dialog:
            self.dialog = None
        dialog.deleteLater()

    async def _save(
        self, dialog: ProjectDialog, name: str, instructions: str, folders: list[str],
        confirmed: bool,
    ) -> None:  # fmt: skip
        client = self._context.require_client()
        try:
            await client.projects.update(
                dialog.project_id, name=name, instructions=instructions, folders=folders,
                confirm=confirmed,
            )  # fmt: skip
        except ClientError as exc:
            if exc.code == SENSITIVE:
                dialog.confirm_wanted(exc.message)
            else:
                dialog.show_error(exc.message)  # the dialog stays open with the user's text
            return
        dialog.accept()
        await self.refresh()

    # -- delete -----------------------------------------------------------------------------

    def ask_delete(self, project_id: str) -> None:
        self._context.tasks.spawn(self._ask_delete(project_id))

    async def _ask_delete(self, project_id: str) -> None:
        """Ask, without a nested event loop; with chats in it (counted now), what becomes
        of them."""
        await self.refresh()
        project = self._panel.project(project_id)
        if project is None:
            return
        asking = QMessageBox(self._parent)
        asking.setObjectName("confirm-delete-project")
        asking.setIcon(QMessageBox.Icon.Question)
        asking.setWindowTitle("Delete project")
        choices: dict[object, ProjectChats] = {}
        if project["chats"]:
            asking.setText(
                f"“{project['name']}” holds {chats_said(project['chats'])}. What becomes of them?"
            )
            asking.setInformativeText(
                "Its memory file stays in Parley's data folder until you delete it."
            )
            move = asking.addButton("Keep the chats", QMessageBox.ButtonRole.AcceptRole)
            move.setObjectName("delete-project-keep-chats")
            destroys = QMessageBox.ButtonRole.DestructiveRole
            delete = asking.addButton("Delete the chats too", destroys)
            delete.setObjectName("delete-project-and-chats")
            choices = {move: "move", delete: "delete"}
        else:
            asking.setText(f"Delete “{project['name']}”? It holds no chat.")
            empty = asking.addButton("Delete", QMessageBox.ButtonRole.DestructiveRole)
            empty.setObjectName("delete-project")
            choices = {empty: "refuse"}  # (refused, and said, if a chat came in meanwhile)
        asking.addButton(QMessageBox.StandardButton.Cancel)

        def finished(_result: int) -> None:
            chats = choices.get(asking.clickedButton())
            if chats is not None:
                self._context.tasks.spawn(self._delete(project, chats))
            asking.deleteLater()
            self._asking = None

        asking.finished.connect(finished)
        self._asking = asking
        asking.open()

    async def _delete(self, project: ProjectJSON, chats: ProjectChats) -> None:
        current = self._context.current_id
        on_screen = current is not None and self._sidebar.project_of.get(current) == project["id"]
        await self._context.require_client().projects.delete(project["id"], chats)
        if chats == "delete" and on_screen:
            self.current_deleted.emit()
        await self.refresh()  # (an open project that is gone closes: the chats outside)
        await self._chat_list.refresh()

    # -- a chat moved -------------------------------------------------------------------------

    def _on_sidebar_move_requested(self, conversation_id: str, project_id: str) -> None:
        self._context.tasks.spawn(self._move(conversation_id, project_id or None))

    async def _move(self, conversation_id: str, project_id: str | None) -> None:
        await self._context.require_client().projects.move_chat(conversation_id, project_id)
        self.chat_moved.emit(conversation_id, project_id or "")
        await self.refresh()
        await self._chat_list.refresh()

    # -- heard --------------------------------------------------------------------------------

    def _on_panel_opened(self, project_id: str) -> None:
        self._sidebar.scope.show_scope(self._panel.name_of(project_id or None))
        self._chat_list.show_project(project_id or None)
        self.opened.emit(project_id)

    def _on_chat_list_shown(self) -> None:
        current = self._context.current_id
        if self._place_current and self._chat_list.any_projects and current is not None:
            self._place_current = False
            self.show_chat(current, self._context.project_id)
        if self._stale:
            self._context.tasks.spawn(self.refresh())
