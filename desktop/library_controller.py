"""The Library dialog's life: folders added and removed through the server, the indexing's
progress kept current while it is open; see desktop/dialog_controller.py."""

from __future__ import annotations

from desktop.dialog_controller import DialogController, Failed
from desktop.widgets.library_dialog import LibraryDialog


class LibraryController(DialogController[LibraryDialog]):
    def _make_dialog(self) -> LibraryDialog:
        dialog = LibraryDialog(self._parent)
        dialog.add_requested.connect(self._on_dialog_add_requested)
        dialog.remove_requested.connect(self._on_dialog_remove_requested)
        return dialog

    def _on_dialog_add_requested(self, path: str) -> None:
        done = f"Added {path}; it is being indexed."
        self._tasks.spawn(self._act(done, lambda client: client.add_library_folder(path)))

    def _on_dialog_remove_requested(self, folder_id: str) -> None:
        done = "Removed the folder and its index."
        action = self._act(done, lambda client: client.remove_library_folder(folder_id))
        self._tasks.spawn(action)

    async def _refresh(self) -> None:
        library = await self._ask(lambda client: client.library())
        if not isinstance(library, Failed) and self.dialog is not None:
            self.dialog.show_library(library)
