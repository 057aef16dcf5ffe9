"""`parley`: QApplication + qasync loop, the embedded server, and the one quit path.

Closing the window, SIGTERM and Ctrl+C all take the same path: hang up the reply in flight
(exactly what Stop does), wait (bounded) until the server reports no active turn, stop the
server gracefully and join its thread, then close the window and quit. Whatever arrives
meanwhile (a second SIGTERM, a close while the server is still starting) joins that one
path; and nothing of the app's is left running when the loop ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import signal
import sys
import time
from typing import cast

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from desktop.client import ParleyClient
from desktop.controller import Context
from desktop.embedded import EmbeddedServer, launch_settings, setup_logging
from desktop.errors import ClientError, LaunchError, ServerStartError
from desktop.event_loop import WindowEventLoop
from desktop.file_folders import FileFolders
from desktop.look.theme import Theme
from desktop.models.models_controller import ModelsController
from desktop.settings import api_keys, config
from desktop.settings.settings_dialog import SettingsDialog
from desktop.tasks import Tasks
from desktop.tools.library_controller import LibraryController
from desktop.tools.tools_controller import ToolsController
from desktop.window.main_window import MainWindow
from desktop.window.placement import capture, restore, restore_sidebar_width
from desktop.window.state import StateWriter, WindowState
from server.settings import (
    Settings,
    UpstreamSettings,
    freeze_startup_objects,
    new_token,
)
from server.types import BackendCheckJSON

log = logging.getLogger(__name__)

SIGNAL_PUMP_MS = 200
# The GUI and the embedded server share one GIL. At Python's default 5 ms switch interval a
# busy server thread (a reply relayed at full speed) holds the GUI thread off for up to 5 ms
# each time it needs the GIL, several times per frame: max-rate stalls of 18-35 ms, 8-21 at 1 ms,
# 3-11 ms at 0.2 ms (docs/benchmarks.md), at ~5 % of the relay's speed.
GIL_SWITCH_INTERVAL_S = 0.0002
BACKENDS_LATER = "The new backends apply when the current reply ends."


class App:
    """Owns the embedded server, the client and the window's life.

    `base` is what the command line asked for (checked once, at launch); the backends
    configured in Settings are added to it at every (re)start of the server.
    """

    def __init__(self, base: Settings, desktop_config: config.DesktopConfig) -> None:
        self.base = base
        self.config = desktop_config
        self.state = WindowState.load()
        self._state_writer = StateWriter()
        self.window = MainWindow()
        self.theme = Theme(cast(QApplication, QApplication.instance()))
        self._apply_config()
        restore(self.window, self.state)
        self.window.help.data_dir = base.data_dir
        # One set of folders for every file dialog, remembered across launches.
        self.folders = FileFolders(self.state.folders)
        self.window.history_files.folders = self.folders
        self.window.attachments.folders = self.folders
        self.window.attachment_links.folders = self.folders
        self.server: EmbeddedServer | None = None
        # The app's own requests and its dialogs' (Models, Tools, Library): the client is
        # set while the server is up.
        self.context = Context(Tasks(self.window.show_error))
        self._done = asyncio.Event()
        self._shutting_down = False
        self._dialog: SettingsDialog | None = None
        self._restart_pending = False
        self.window.close_requested.connect(self.request_close)
        self.window.reply_finished.connect(self._on_window_reply_finished)
        self.window.settings_requested.connect(self._on_window_settings_requested)
        self.models = ModelsController(self.context, self.window)
        self.window.models_requested.connect(self.models.open)
        self.tools = ToolsController(self.context, self.window)
        self.window.tools_requested.connect(self.tools.open)
        self.library = LibraryController(self.context, self.window)
        self.library.folders = self.folders
        self.window.library_requested.connect(self.library.open)
        self.window.conversation_opened.connect(self._on_window_conversation_opened)
        self.window.view.zoom_chosen.connect(self._save_window_state)
        self.window.menus.sidebar.toggled.connect(self._save_window_state)
        self.window.menus.theme_chosen.connect(self._on_menus_theme_chosen)
        self.folders.folder_chosen.connect(self._on_folders_folder_chosen)

    @property
    def tasks(self) -> Tasks:
        return self.context.tasks

    def _apply_config(self) -> None:
        self.theme.apply(self.config.theme)
        self.window.menus.show_theme(self.config.theme)
        self.window.system_prompt = self.config.system_prompt or None
        self.window.max_tokens = self.config.max_tokens or None

    def settings(self) -> Settings:
        """The server's settings now: the command line's, plus the configured backends."""
        configured = tuple(
            UpstreamSettings(
                b.base_url, b.model, api_key=api_keys.api_key(b.base_url), context=b.context
            )
            for b in self.config.backends
        )
        return dataclasses.replace(self.base, token=new_token(), later_upstreams=configured)

    async def run(self) -> int:
        sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
        self.window.show()  # maximized again if it was (restored with its geometry)
        restore_sidebar_width(self.window, self.state)
        QTimer.singleShot(0, self._on_first_iteration)
        # One of the app's tasks, so that a close while it starts stops it on the quit path
        # (the start cancelled, what it launched stopped) instead of finishing it after.
        self.tasks.spawn(self._start_server())
        await self._done.wait()
        return 0

    def _on_first_iteration(self) -> None:
        _timing("window_shown")

    async def _start_server(self) -> None:
        self.server = EmbeddedServer(self.settings())
        try:
            endpoint = await self.server.start()
        except ServerStartError as exc:
            if not self._shutting_down:  # (else stopped on purpose: the app is closing)
                self.window.show_server_failed(exc.message)
            self.server = None
            return
        client = self.context.client = ParleyClient(endpoint.url, endpoint.token)
        _timing("server_ready")
        self.window.connect_client(client, reopen=self.state.conversation_id)
        freeze_startup_objects()
        if self.config.default_model:
            self.tasks.spawn(self._move_default_model(client))

    async def _move_default_model(self, client: ParleyClient) -> None:
        """The model an earlier version kept as the default for new chats (the last one
        picked on a new chat) becomes the server's "Set as default", once."""
        name, self.config.default_model = self.config.default_model, ""
        with contextlib.suppress(ClientError):  # a model no longer there: no default set
            await client.models.set_default(name)
        with contextlib.suppress(OSError):
            self.config.save()

    def request_close(self) -> None:
        if not self._shutting_down:
            self._shutting_down = True
            self.tasks.spawn(self.shutdown())

    async def shutdown(self) -> None:
        self._save_window_state()
        try:
            await self.window.hang_up()
            await self.tasks.close()  # a server restart in flight, say
            await self._stop_server()
        except Exception:
            log.exception("error while shutting down")
        finally:
            self._state_writer.close()
            self.window.close_for_real()
            self._done.set()

    async def _stop_server(self) -> None:
        if self.context.client is not None:
            client, self.context.client = self.context.client, None
            await self._wait_settled(client)
            self.window.disconnect_client()
            await client.aclose()
        if self.server is not None:
            server, self.server = self.server, None
            if not await server.stop():
                log.error("the embedded server did not stop in time")

    async def _wait_settled(self, client: ParleyClient) -> None:
        """Until the server reports no active turn (bounded: the stop settles them anyway)."""
        deadline = time.monotonic() + self.base.limits.close_settle_wait
        while time.monotonic() < deadline:
            try:
                if (await client.status())["active_turns"] == 0:
                    return
            except ClientError:
                return
            await asyncio.sleep(0.02)

    def _on_window_conversation_opened(self, conversation_id: str) -> None:
        if (conversation_id or None) != self.state.conversation_id:
            self.state.conversation_id = conversation_id or None
            self._state_writer.save(self.state)

    def _on_folders_folder_chosen(self, _kind: str, _folder: str) -> None:
        self.state.folders = dict(self.folders.remembered)
        self._state_writer.save(self.state)

    def _save_window_state(self) -> None:
        capture(self.window, self.state)
        self._state_writer.save(self.state)

    def _on_menus_theme_chosen(self, name: str) -> None:
        self.theme.apply(name)
        self.config.theme = name
        try:
            self.config.save()
        except OSError as exc:
            self.window.show_error(f"Your theme was not saved: {exc}")

    def _on_window_settings_requested(self) -> None:
        if self._dialog is not None:
            return
        self._dialog = SettingsDialog(self.config, self.window)
        self._dialog.settings_saved.connect(self._on_dialog_settings_saved)
        self._dialog.check_requested.connect(self._on_dialog_check_requested)
        self._dialog.detect_requested.connect(self._on_dialog_detect_requested)
        self._dialog.tools_requested.connect(self.tools.open)
        self._dialog.finished.connect(self._on_dialog_finished)
        self._dialog.open()

    def _on_dialog_finished(self, _result: int) -> None:
        if self._dialog is not None:
            self._dialog.deleteLater()
            self._dialog = None

    def _on_dialog_check_requested(self, row: int, base_url: str, api_key: str) -> None:
        self.tasks.spawn(self._check_backend(row, base_url, api_key))

    def _on_dialog_detect_requested(self) -> None:
        self.tasks.spawn(self._detect_local_servers())

    async def _detect_local_servers(self) -> None:
        dialog = self._dialog
        if dialog is None:
            return
        client = self.context.client
        if client is None:
            dialog.show_found([], "Parley's server is not up")
            return
        try:
            found = await client.detect_local_servers()
        except ClientError as exc:
            if dialog is self._dialog:
                dialog.show_found([], exc.message)
            return
        if dialog is self._dialog:
            dialog.show_found(found)

    async def _check_backend(self, row: int, base_url: str, api_key: str) -> None:
        dialog = self._dialog
        client = self.context.client
        if client is None:
            found: BackendCheckJSON = {"reachable": False, "error": "Parley's server is not up"}
        else:
            try:
                found = await client.check_backend(base_url, api_key)
            except ClientError as exc:
                found = {"reachable": False, "error": exc.message}
        if dialog is not None and dialog is self._dialog:
            dialog.show_check(row, found["reachable"], found.get("models", []),
                              found.get("error", ""))  # fmt: skip

    def _on_dialog_settings_saved(self, errors: list[str], backends_changed: bool) -> None:
        self._apply_config()
        if errors:
            self.window.show_error("; ".join(errors))
        if not backends_changed:
            return  # a prompt or a limit: the running server and its loaded models stay
        # Backends are fixed for a server's life: restart it, once no reply is in flight.
        if self.window.reply_in_flight:
            self._restart_pending = True
            self.window.show_error(BACKENDS_LATER)
        else:
            self.tasks.spawn(self._restart_server())

    def _on_window_reply_finished(self, _message_id: str) -> None:
        if self._restart_pending and not self._shutting_down:
            self._restart_pending = False
            self.tasks.spawn(self._restart_server())

    async def _restart_server(self) -> None:
        await self._stop_server()
        await self._start_server()
        if self.window.banner.text() == BACKENDS_LATER:
            self.window.clear_error()  # they apply now: no longer "when the reply ends"


def _timing(event: str) -> None:
    """For bench/desktop.py: when an event happened, on the wall clock, if asked for."""
    if os.environ.get("PARLEY_PRINT_TIMINGS"):
        print(f"PARLEY_TIMING {event} {time.time():.6f}", flush=True)


DESKTOP_ENTRY_FLAGS = ("--install-desktop-entry", "--uninstall-desktop-entry")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in DESKTOP_ENTRY_FLAGS:
        from desktop import desktop_entry

        return desktop_entry.main(args[0])
    setup_logging()
    try:
        base = launch_settings(argv)
    except LaunchError as exc:
        print(f"parley: {exc}", file=sys.stderr)
        return 2
    existing = QApplication.instance()
    qapp = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    qapp.setApplicationName("Parley")
    qapp.setQuitOnLastWindowClosed(False)  # the quit path closes the window itself
    loop = WindowEventLoop(qapp)
    asyncio.set_event_loop(loop)
    app = App(base, config.DesktopConfig.load())

    def on_signal(_signum: int, _frame: object) -> None:
        # Any number of them: the first starts the quit path, the others join it; one that
        # comes once the loop is closed (the window being torn down) has nothing to do.
        if not loop.is_closed():
            loop.call_soon_threadsafe(app.request_close)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # Python runs signal handlers only between bytecodes: keep some Python running.
    pump = QTimer()
    pump.start(SIGNAL_PUMP_MS)
    pump.timeout.connect(lambda: None)
    with loop:
        code: int = loop.run_until_complete(app.run())
        # Nothing pending when the loop closes ("Task was destroyed but it is pending!").
        loop.run_until_complete(finish_tasks())
        # Finalize async generators (cancelled HTTP reads) while the loop still runs.
        loop.run_until_complete(loop.shutdown_asyncgens())
    pump.stop()
    finish_qt(qapp, app)
    return code


async def finish_tasks() -> None:
    """Cancel whatever still runs on the loop (the app's own tasks are done by now) and wait
    until it has unwound."""
    current = asyncio.current_task()
    others = [task for task in asyncio.all_tasks() if task is not current]
    for task in others:
        task.cancel()
    await asyncio.gather(*others, return_exceptions=True)


def finish_qt(qapp: QApplication, app: App) -> None:
    """A deterministic end rather than interpreter finalization (PySide6 aborts there)."""
    app.window.deleteLater()
    qapp.processEvents()
    qapp.shutdown()
