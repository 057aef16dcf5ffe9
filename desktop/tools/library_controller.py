"""The Library dialog's life: folders added and removed through the server, the indexing's
progress kept current while it is open; see desktop/dialog_controller.py."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop.client import ParleyClient
from desktop.controller import Context
from desktop.dialog_controller import DialogController, Failed
from desktop.errors import ClientError
from desktop.file_folders import DOCUMENTS, FileFolders
from desktop.tools.library_dialog import LibraryDialog
from server.types.library import FolderJSON


class LibraryController(DialogController[LibraryDialog]):
    """`folders`: where the dialog's Browse… opens (the app's: desktop/file_folders.py)."""

    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.folders = FileFolders()

    def _make_dialog(self) -> LibraryDialog:
        dialog = LibraryDialog(self._parent)
        dialog.start_folder = self.folders.start(DOCUMENTS)
        dialog.add_requested.connect(self._on_dialog_add_requested)
        dialog.add_confirmed.connect(self._on_dialog_add_confirmed)
        dialog.remove_requested.connect(self._on_dialog_remove_requested)
        return dialog

    def _on_dialog_add_requested(self, path: str) -> None:
        self.folders.chosen(DOCUMENTS, path)  # the next Browse… opens beside it
        if self.dialog is not None:
            self.dialog.start_folder = self.folders.start(DOCUMENTS)
        self._context.tasks.spawn(self._add(path, confirm=False))

    def _on_dialog_add_confirmed(self, path: str) -> None:
        self._context.tasks.spawn(self._add(path, confirm=True))

    async def _add(self, path: str, *, confirm: bool) -> None:
        """Add a folder; one that holds secrets is added only once the user confirms why."""
        warned: list[str] = []

        async def add(client: ParleyClient) -> FolderJSON | None:
            try:
                return await client.add_library_folder(path, confirm=confirm)
            except ClientError as exc:
                if exc.code != "sensitive_folder" or confirm:
                    raise
                warned.append(exc.message)
                return None

        dialog = self.dialog
        added = await self._ask(add)
        if isinstance(added, Failed) or dialog is None or dialog is not self.dialog:
            return
        if warned:
            dialog.confirm_sensitive(path, warned[0])
            return
        if added is not None:
            dialog.show_added(added)
        await self._refresh()

    def _on_dialog_remove_requested(self, folder_id: str) -> None:
        done = "Removed the folder and its index."
        action = self._act(done, lambda client: client.remove_library_folder(folder_id))
        self._context.tasks.spawn(action)

    async def _refresh(self) -> None:
        library = await self._ask(lambda client: client.library())
        if not isinstance(library, Failed) and self.dialog is not None:
            self.dialog.show_library(library)
