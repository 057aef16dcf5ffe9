"""The "Download a model" dialog's life (desktop/models/hub_dialog.py): searches and file
lists asked of the server, downloads started, paused, resumed and cancelled there, and their
progress read once a second while the dialog is open; see desktop/dialog_controller.py."""

from __future__ import annotations

from desktop.dialog_controller import DialogController, Failed
from desktop.models.hub_dialog import HubDialog


class HubController(DialogController[HubDialog]):
    def _make_dialog(self) -> HubDialog:
        dialog = HubDialog(self._parent)
        dialog.search_requested.connect(self._on_search_requested)
        dialog.files_requested.connect(self._on_files_requested)
        dialog.download_requested.connect(self._on_download_requested)
        dialog.pause_requested.connect(
            lambda i: self._spawn_act("Paused.", lambda c: c.hub.pause(i))
        )
        dialog.resume_requested.connect(
            lambda i: self._spawn_act("Resumed.", lambda c: c.hub.resume(i))
        )
        dialog.cancel_requested.connect(
            lambda i: self._spawn_act(
                "Cancelled: its partial file is deleted.", lambda c: c.hub.cancel(i)
            )
        )
        return dialog

    def _on_search_requested(self, query: str) -> None:
        self._context.tasks.spawn(self._search(query))

    async def _search(self, query: str) -> None:
        dialog = self.dialog
        repos = await self._ask(lambda client: client.hub.search(query))
        if not isinstance(repos, Failed) and dialog is not None and dialog is self.dialog:
            dialog.show_repos(repos)

    def _on_files_requested(self, repo: str) -> None:
        self._context.tasks.spawn(self._files(repo))

    async def _files(self, repo: str) -> None:
        dialog = self.dialog
        listing = await self._ask(lambda client: client.hub.files(repo))
        if not isinstance(listing, Failed) and dialog is not None and dialog is self.dialog:
            dialog.show_files(listing)
            dialog.show_note(f"{len(listing['files'])} GGUF files in {repo}.")

    def _on_download_requested(self, repo: str, file: str, revision: str) -> None:
        done = f"Downloading {file}: it is added to your models when it is checked."
        self._spawn_act(done, lambda c: c.hub.download(repo, file, revision))

    async def _refresh(self) -> None:
        downloads = await self._ask(lambda client: client.hub.downloads())
        if not isinstance(downloads, Failed) and self.dialog is not None:
            self.dialog.show_downloads(downloads)
