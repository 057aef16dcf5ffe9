"""The models page's life (desktop/models/page.py): the models and downloads asked of the
server every second while it is open (states change: loading, replying, bytes arriving), the
files found on disk less often (a scan reads the disk), and every action of the page's parts
asked of the server — load, eject, default, settings, add and remove; search, list and
download from the hub, pause, resume, cancel or clear a download; use a found file, add or
remove a folder. See desktop/dialog_controller.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from PySide6.QtWidgets import QWidget

from desktop.client import ParleyClient
from desktop.controller import Context
from desktop.dialog_controller import DialogController, Failed
from desktop.errors import ClientError
from desktop.models.page import ModelsPage

FOUND_EVERY = 30  # refreshes (seconds) between two scans of the disk while the page is open
IN_USE = "model_in_use"


class ModelsController(DialogController[ModelsPage]):
    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self._ticks = 0

    def _make_dialog(self) -> ModelsPage:
        page = ModelsPage(self._parent)
        models, hub, folders = page.list, page.hub, page.folders
        models.load_requested.connect(self._on_list_load_requested)
        models.default_requested.connect(
            lambda name: self._spawn_act(
                f"New chats use {name}.", lambda c: c.models.set_default(name)
            )
        )
        page.eject_requested.connect(self._on_page_eject_requested)
        page.remove_requested.connect(self._on_page_remove_requested)
        page.add_requested.connect(
            lambda path: self._spawn_act(f"Added {path}.", lambda c: c.models.add_local(path))
        )
        page.local_settings.apply_requested.connect(self._on_settings_apply_requested)
        # A download's row says what became of it: no note to go stale.
        models.pause_requested.connect(lambda i: self._spawn_act("", lambda c: c.hub.pause(i)))
        models.resume_requested.connect(lambda i: self._spawn_act("", lambda c: c.hub.resume(i)))
        models.cancel_requested.connect(lambda i: self._spawn_act("", lambda c: c.hub.cancel(i)))
        models.use_requested.connect(self._on_list_use_requested)
        hub.search_requested.connect(lambda q: self._context.tasks.spawn(self._search(q)))
        hub.files_requested.connect(lambda r: self._context.tasks.spawn(self._files(r)))
        hub.download_requested.connect(self._on_hub_download_requested)
        folders.folder_added.connect(
            lambda p: self._spawn_found(f"Added {p}.", lambda c: c.found.add_folder(p))
        )
        folders.folder_removed.connect(
            lambda p: self._spawn_found(f"Removed {p}.", lambda c: c.found.remove_folder(p))
        )
        return page

    # -- models ----------------------------------------------------------------------------

    def _on_list_load_requested(self, name: str) -> None:
        self._spawn_act(f"{name} is loaded.", lambda c: c.models.load(name))
        self._context.tasks.spawn(self._refresh())  # "Loading…" shows while it loads

    def _on_page_eject_requested(self, name: str, stop_replies: bool) -> None:
        self._context.tasks.spawn(self._ask_in_use(name, stop_replies, eject=True))

    def _on_page_remove_requested(self, name: str, stop_replies: bool) -> None:
        self._context.tasks.spawn(self._ask_in_use(name, stop_replies, eject=False))

    async def _ask_in_use(self, name: str, stop_replies: bool, eject: bool) -> None:
        """Eject or remove a model; while replies use it (a sub-agent's too) the user is
        asked whether to stop them, and they end as their Stop would."""
        page = self.dialog
        done: object
        if eject:
            done = await self._ask(lambda c: c.models.eject(name, stop_replies))
        else:
            done = await self._ask(lambda c: c.models.remove_local(name, stop_replies))
        if page is None or page is not self.dialog:
            return
        if not isinstance(done, Failed):
            page.show_note(f"Ejected {name}: its memory is free." if eject else f"Removed {name}.")
            await self._refresh()
        elif done.code == IN_USE and not stop_replies:
            page.ask_stop_replies(name, eject)

    def _on_settings_apply_requested(self, name: str, settings: dict[str, int]) -> None:
        done = f"{name} starts with these settings on its next use."
        if set(settings) == {"keep_alive"}:
            done = f"{name}'s time loaded when idle is changed."
        self._spawn_act(done, lambda client: client.models.configure(name, settings))

    # -- the hub ---------------------------------------------------------------------------

    async def _search(self, query: str) -> None:
        page = self.dialog
        repos = await self._ask(lambda client: client.hub.search(query))
        if not isinstance(repos, Failed) and page is not None and page is self.dialog:
            page.hub.show_repos(repos)

    async def _files(self, repo: str) -> None:
        page = self.dialog
        listing = await self._ask(lambda client: client.hub.files(repo))
        if not isinstance(listing, Failed) and page is not None and page is self.dialog:
            page.hub.show_files(listing)

    def _on_hub_download_requested(self, repo: str, file: str, revision: str) -> None:
        self._context.tasks.spawn(self._download(repo, file, revision))

    async def _download(self, repo: str, file: str, revision: str) -> None:
        page, client = self.dialog, self._context.client
        if page is None or client is None:
            return
        try:
            await client.hub.download(repo, file, revision)
        except ClientError as exc:
            if page is not self.dialog:
                return
            if exc.code == "download_exists":
                # Not an error: what the user asked for is there, or on its way.
                page.show_note(f"{file} of {repo} is downloaded already, or on its way.")
            else:
                page.show_error(exc.message)
            return
        if page is self.dialog:
            page.show_download_started()
            await self._refresh()

    # -- found on disk -----------------------------------------------------------------------

    def _on_list_use_requested(self, path: str, name: str) -> None:
        done = f"{name} is a model now, used where it is (nothing was copied)."
        self._spawn_found(done, lambda client: client.found.use(path, name))

    def _spawn_found(self, done: str, action: Callable[[ParleyClient], Awaitable[object]]) -> None:
        self._ticks = 0  # the disk is read again with the change
        self._spawn_act(done, action)

    # -- what the page shows -----------------------------------------------------------------

    async def _refresh(self) -> None:
        page = self.dialog
        models = await self._ask(lambda client: client.models.all())
        downloads = await self._ask(lambda client: client.hub.downloads())
        if page is None or page is not self.dialog:
            return
        if not isinstance(downloads, Failed):
            page.show_downloads(downloads)
        if not isinstance(models, Failed):
            page.show_models(models)
        if self._ticks % FOUND_EVERY == 0:
            await self._refresh_found(page)
        self._ticks += 1

    async def _refresh_found(self, page: ModelsPage) -> None:
        found = await self._ask(lambda client: client.found.models())
        folders = await self._ask(lambda client: client.found.folders())
        if page is not self.dialog:
            return
        if not isinstance(found, Failed):
            page.show_found(found)
        if not isinstance(folders, Failed):
            page.folders.show_folders(folders)
