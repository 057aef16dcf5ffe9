"""The "Models on this computer" dialog's life (desktop/models/found_dialog.py): the files
found and the user's folders asked of the server when it opens and after each change (a
scan reads the disk: not once a second), a found file added in place; see
desktop/dialog_controller.py."""

from __future__ import annotations

from desktop.dialog_controller import DialogController, Failed
from desktop.models.found_dialog import FoundDialog


class FoundController(DialogController[FoundDialog]):
    def _make_dialog(self) -> FoundDialog:
        dialog = FoundDialog(self._parent)
        dialog.use_requested.connect(self._on_use_requested)
        dialog.folder_added.connect(self._on_folder_added)
        dialog.folder_removed.connect(self._on_folder_removed)
        self._timer.setInterval(FOUND_REFRESH_MS)
        return dialog

    def _on_use_requested(self, path: str, name: str) -> None:
        done = f"{name} is a model now, used where it is (nothing was copied)."
        self._spawn_act(done, lambda client: client.found.use(path, name))

    def _on_folder_added(self, path: str) -> None:
        self._spawn_act(f"Added {path}.", lambda c: c.found.add_folder(path))

    def _on_folder_removed(self, path: str) -> None:
        self._spawn_act(f"Removed {path}.", lambda c: c.found.remove_folder(path))

    async def _refresh(self) -> None:
        dialog = self.dialog
        found = await self._ask(lambda client: client.found.models())
        folders = await self._ask(lambda client: client.found.folders())
        if dialog is None or dialog is not self.dialog:
            return
        if not isinstance(found, Failed):
            dialog.show_found(found)
        if not isinstance(folders, Failed):
            dialog.show_folders(folders)


FOUND_REFRESH_MS = 30_000  # the disk is scanned again at most this often while it is open
