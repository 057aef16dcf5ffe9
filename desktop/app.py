"""`parley`: QApplication + qasync loop, the embedded server, and the one quit path.

Closing the window, SIGTERM and Ctrl+C all take the same path: hang up the reply in flight
(exactly what Stop does), wait (bounded) until the server reports no active turn, stop the
server gracefully and join its thread, then close the window and quit.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication

from desktop import config
from desktop.client import ClientError, ParleyClient
from desktop.embedded import EmbeddedServer
from desktop.main_window import MainWindow
from desktop.widgets.settings_dialog import SettingsDialog
from server.cli import UsageError, add_backend_arguments, upstreams_from_args
from server.settings import LocalSettings, Settings, UpstreamSettings, default_data_dir, new_token

log = logging.getLogger(__name__)

SETTLE_WAIT_S = 2.0
SIGNAL_PUMP_MS = 200
# The GUI and the embedded server share one GIL. At Python's default 5 ms switch interval a
# busy server thread (a reply relayed at full speed) holds the GUI thread off for up to 5 ms
# each time it needs the GIL, several times per frame: max-rate stalls of 18-35 ms, 8-16 at 1 ms.
GIL_SWITCH_INTERVAL_S = 0.001


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="parley", description="Parley, the desktop chat app.")
    add_backend_arguments(parser)
    return parser


class App:
    """Owns the embedded server, the client and the window's life."""

    def __init__(self, args: argparse.Namespace, desktop_config: config.DesktopConfig) -> None:
        self.args = args
        self.config = desktop_config
        self.window = MainWindow()
        self.window.system_prompt = desktop_config.system_prompt or None
        self.server: EmbeddedServer | None = None
        self.client: ParleyClient | None = None
        self._done = asyncio.Event()
        self._shutting_down = False
        self._dialog: SettingsDialog | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._restart_pending = False
        self.window.close_requested.connect(self.request_close)
        self.window.reply_finished.connect(self._on_window_reply_finished)
        self.window.settings_requested.connect(self._on_window_settings_requested)

    def settings(self) -> Settings:
        upstreams = list(upstreams_from_args(self.args))
        for backend in self.config.backends:
            key = config.api_key(backend.base_url)
            upstreams.append(UpstreamSettings(backend.base_url, backend.model, api_key=key))
        gguf = self.args.gguf.expanduser() if self.args.gguf else None
        return Settings(
            data_dir=self.args.data_dir or default_data_dir(),
            token=new_token(),
            upstreams=tuple(upstreams),
            local=LocalSettings(gguf=gguf),
        )

    async def run(self) -> int:
        sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
        self.window.show()
        QTimer.singleShot(0, self._on_first_iteration)
        await self._start_server()
        await self._done.wait()
        return 0

    def _on_first_iteration(self) -> None:
        _timing("window_shown")

    async def _start_server(self) -> None:
        self.server = EmbeddedServer(self.settings())
        try:
            endpoint = await self.server.start()
        except (RuntimeError, OSError) as exc:
            self.window.show_error(f"Parley's server could not start: {exc}")
            self.server = None
            return
        self.client = ParleyClient(endpoint.url, endpoint.token)
        _timing("server_ready")
        self.window.connect_client(self.client)
        _freeze_startup_objects()

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)  # qasync keeps no reference of its own
        task.add_done_callback(self._tasks.discard)

    def request_close(self) -> None:
        if not self._shutting_down:
            self._shutting_down = True
            self._spawn(self.shutdown())

    async def shutdown(self) -> None:
        try:
            await self.window.hang_up()
            await self._stop_server()
        except Exception:
            log.exception("error while shutting down")
        finally:
            self.window.close_for_real()
            self._done.set()

    async def _stop_server(self) -> None:
        if self.client is not None:
            await self._wait_settled(self.client)
            await self.client.aclose()
            self.client = None
        if self.server is not None:
            server, self.server = self.server, None
            if not await server.stop():
                log.error("the embedded server did not stop in time")

    async def _wait_settled(self, client: ParleyClient) -> None:
        """Until the server reports no active turn (bounded: the stop settles them anyway)."""
        deadline = time.monotonic() + SETTLE_WAIT_S
        while time.monotonic() < deadline:
            try:
                if (await client.status())["active_turns"] == 0:
                    return
            except ClientError:
                return
            await asyncio.sleep(0.02)

    def _on_window_settings_requested(self) -> None:
        if self._dialog is not None:
            return
        self._dialog = SettingsDialog(self.config, self.window)
        self._dialog.settings_saved.connect(self._on_dialog_settings_saved)
        self._dialog.finished.connect(self._on_dialog_finished)
        self._dialog.open()

    def _on_dialog_finished(self, _result: int) -> None:
        if self._dialog is not None:
            self._dialog.deleteLater()
            self._dialog = None

    def _on_dialog_settings_saved(self, errors: list[str]) -> None:
        self.window.system_prompt = self.config.system_prompt or None
        if errors:
            self.window.show_error("; ".join(errors))
        # Backends are fixed for a server's life: restart it, once no reply is in flight.
        if self.window.stream is not None:
            self._restart_pending = True
            self.window.show_error("The new backends apply when the current reply ends.")
        else:
            self._spawn(self._restart_server())

    def _on_window_reply_finished(self, _message_id: str) -> None:
        if self._restart_pending and not self._shutting_down:
            self._restart_pending = False
            self._spawn(self._restart_server())

    async def _restart_server(self) -> None:
        await self._stop_server()
        await self._start_server()


_frozen = False


def _freeze_startup_objects() -> None:
    """Once per process: what exists after the first start (Qt, the libraries, the server)
    lives as long as the app; keep it out of the collector's full passes, which otherwise
    stall the GUI thread ~20 ms each. Not again after a server restart: a stopped server's
    objects must stay collectable."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()


def _timing(event: str) -> None:
    """For bench/desktop.py: when an event happened, on the wall clock, if asked for."""
    if os.environ.get("PARLEY_PRINT_TIMINGS"):
        print(f"PARLEY_TIMING {event} {time.time():.6f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    args = build_parser().parse_args(argv)
    try:
        upstreams_from_args(args)
        if args.gguf and not Path(args.gguf).expanduser().is_file():
            raise UsageError(f"--gguf: no file at {args.gguf}")
    except UsageError as exc:
        print(f"parley: {exc}", file=sys.stderr)
        return 2
    existing = QApplication.instance()
    qapp = existing if isinstance(existing, QApplication) else QApplication(sys.argv[:1])
    qapp.setApplicationName("Parley")
    qapp.setQuitOnLastWindowClosed(False)  # the quit path closes the window itself
    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    app = App(args, config.DesktopConfig.load())

    def on_signal(_signum: int, _frame: object) -> None:
        loop.call_soon_threadsafe(app.request_close)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # Python runs signal handlers only between bytecodes: keep some Python running.
    pump = QTimer()
    pump.start(SIGNAL_PUMP_MS)
    pump.timeout.connect(lambda: None)
    with loop:
        code: int = loop.run_until_complete(app.run())
        # Finalize async generators (cancelled HTTP reads) while the loop still runs.
        loop.run_until_complete(loop.shutdown_asyncgens())
    pump.stop()
    finish_qt(qapp, app)
    return code


def finish_qt(qapp: QApplication, app: App) -> None:
    """A deterministic end rather than interpreter finalization (PySide6 aborts there)."""
    app.window.deleteLater()
    qapp.processEvents()
    qapp.shutdown()
