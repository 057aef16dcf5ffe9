"""The embedded server: Parley's Starlette app under uvicorn on a daemon thread.

Loopback, port 0 (the socket is bound before the thread starts, so the port is known), a
per-launch token. While it runs, a runtime file (mode 0600) tells local tools its URL and
token, as Jupyter does; it is removed on stop.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from desktop.errors import LaunchError, ServerStartError
from server.arguments import add_backend_arguments, settings_from_args
from server.errors import UsageError
from server.logs import log_dir, setup_logging
from server.serve import BackgroundServer, bind
from server.settings import APP_NAME, EMBEDDED_RELAY_PAUSE_S, Settings, new_token

if TYPE_CHECKING:
    from starlette.applications import Starlette

POLL_S = 0.01


# The server's log (its file, its directory) is the app's too: set up at launch, opened from
# Help → Open log folder.
__all__ = ["EmbeddedServer", "launch_settings", "log_dir", "setup_logging"]


def build_parser() -> argparse.ArgumentParser:
    """`parley`'s command line: the server's backend and data flags."""
    parser = argparse.ArgumentParser(prog="parley", description="Parley, the desktop chat app.")
    add_backend_arguments(parser)
    return parser


def launch_settings(argv: list[str] | None = None) -> Settings:
    """The embedded server's settings a command line asks for, checked once.

    Raises LaunchError with the message for the user (an unknown flag exits via argparse).
    """
    try:
        settings = settings_from_args(build_parser().parse_args(argv), token=new_token())
    except UsageError as exc:
        raise LaunchError(str(exc)) from exc
    # The server shares the window's process: a fast upstream is relayed in bursts.
    return replace(settings, limits=replace(settings.limits, relay_pause=EMBEDDED_RELAY_PAUSE_S))


def runtime_dir() -> Path:
    override = os.environ.get("PARLEY_RUNTIME_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_runtime_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True)
class Endpoint:
    url: str
    token: str


async def _server_app() -> Callable[[Settings], Starlette]:
    """`server.app.create_app`, imported on a thread of its own the first time: the server's
    modules (Starlette, the MCP SDK, ...) take ~0.6-0.9 s to import, and the window is shown
    and answers meanwhile instead of appearing only after them. Polled, like the start."""
    found: dict[str, Any] = {}
    done = threading.Event()

    def load() -> None:
        try:
            found["module"] = importlib.import_module("server.app")
        except BaseException as exc:  # handed to the caller
            found["error"] = exc
        finally:
            done.set()

    threading.Thread(target=load, name="parley-import", daemon=True).start()
    while not done.is_set():  # noqa: ASYNC110 - a thread's state
        await asyncio.sleep(POLL_S)
    if "error" in found:
        raise found["error"]
    create_app: Callable[[Settings], Starlette] = found["module"].create_app
    return create_app


class EmbeddedServer:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._server: BackgroundServer | None = None
        self._stopped = False  # stop() was called (a start under way gives up)
        self.runtime_file = runtime_dir() / f"server-{os.getpid()}.json"

    async def start(self) -> Endpoint:
        """Start serving and write the runtime file. Raises ServerStartError.

        Waits by polling on the GUI's loop rather than in an executor: a thread's result
        handed back through qasync's executor was seen, rarely, never to wake the loop.
        """
        wait = self.settings.limits.server_start_wait
        self._stopped = False
        try:
            create_app = await _server_app()
            if self._stopped:  # stopped while the server's modules were imported
                raise ServerStartError("the server was stopped while it started")
            sock = bind(self.settings.host, self.settings.port)
            # Kept in `_server` as soon as it runs: a stop (the quit path) joins it, also
            # when this start is cancelled or stopped meanwhile.
            server = self._server = BackgroundServer(create_app(self.settings), sock)
            server.launch()
            async with asyncio.timeout(wait):
                while not server.serving():
                    if self._server is not server:
                        raise ServerStartError("the server was stopped while it started")
                    await asyncio.sleep(POLL_S)
            endpoint = Endpoint(f"http://127.0.0.1:{server.port}", self.settings.token)
            self._write_runtime_file(endpoint)
        except TimeoutError:
            raise ServerStartError(f"the server did not start within {wait:.0f}s") from None
        except (RuntimeError, OSError) as exc:
            raise ServerStartError(str(exc)) from exc
        return endpoint

    async def stop(self) -> bool:
        """Stop gracefully (runs settle as "shutdown"), wait for the thread, remove the file."""
        self._stopped = True
        self.runtime_file.unlink(missing_ok=True)
        server, self._server = self._server, None
        if server is None:
            return True
        server.server.request_stop()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(self.settings.limits.server_stop_wait):
                while server.thread.is_alive():  # noqa: ASYNC110 - a thread's state
                    await asyncio.sleep(POLL_S)
        return not server.thread.is_alive()

    def _write_runtime_file(self, endpoint: Endpoint) -> None:
        self.runtime_file.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = json.dumps({"url": endpoint.url, "token": endpoint.token, "pid": os.getpid()})
        # Created 0600 from the start: the token is never readable by others, even briefly;
        # renamed into place whole, so a tool never reads half of it.
        temp = self.runtime_file.with_name(f".{self.runtime_file.name}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(data)
        os.replace(temp, self.runtime_file)
