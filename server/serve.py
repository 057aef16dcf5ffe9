"""Running the app under uvicorn: in the main thread (parley-server) or a background thread.

uvicorn's graceful shutdown waits for in-flight responses but never tells them to end, so
every stop path here first stops the runs (they settle with ended_by = "shutdown" and their
streams finish), then lets uvicorn exit; `timeout_graceful_shutdown` is only a backstop
(`Limits.graceful_shutdown`; the order of all the deadlines is in the Limits docstring).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

import uvicorn
from starlette.applications import Starlette

from server.http.protocol import with_deadlines
from server.settings import Limits

if TYPE_CHECKING:
    from server.routes.services import Services

log = logging.getLogger(__name__)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket, bound before the server starts so the port is known (port 0 = any)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted connections only when the
    # socket says it is TCP. Without it every kept-alive request waited ~40 ms (Nagle and
    # delayed ACKs), the window's own and every pooled client's.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _limits(app: Starlette) -> Limits:
    services: Services | None = getattr(getattr(app, "state", None), "services", None)
    return services.settings.limits if services is not None else Limits()


def config_for(app: Starlette, **overrides: object) -> uvicorn.Config:
    limits = _limits(app)
    options: dict[str, object] = {
        "http": with_deadlines(limits),
        "h11_max_incomplete_event_size": limits.max_header_bytes,
        "log_level": "warning",
        "access_log": False,
        "timeout_graceful_shutdown": limits.graceful_shutdown,
        "lifespan": "on",
    }
    options.update(overrides)
    return uvicorn.Config(app, **options)  # type: ignore[arg-type]


class ParleyServer(uvicorn.Server):
    """uvicorn.Server that stops Parley's runs before it stops serving."""

    def __init__(
        self, config: uvicorn.Config, on_started: Callable[[], None] | None = None
    ) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._on_started = on_started

    async def serve(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().serve(sockets)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._on_started is not None:
            self._on_started()

    def _services(self) -> Services | None:
        found: Services | None = getattr(getattr(self.config.app, "state", None), "services", None)
        return found

    def _limits(self) -> Limits:
        services = self._services()
        return services.settings.limits if services is not None else Limits()

    def _stop_runs(self) -> None:
        services = self._services()
        if services is not None:
            services.runs.shutdown()
            services.imports.shutdown()

    def request_stop(self) -> None:
        """Stop gracefully; safe from any thread."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(self._stop_runs)
        self.should_exit = True

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # SIGINT/SIGTERM in parley-server: settle every run as "shutdown", then exit.
        if self.should_exit and self._runs_settling():
            # A second Ctrl+C would make uvicorn force its exit and cut the settles short
            # (replies saved as crashes). The wait is bounded anyway (Limits docstring).
            log.warning(
                "still saving %d repl%s; exiting once saved (at most %.0f s)",
                self._runs_settling(),
                "y" if self._runs_settling() == 1 else "ies",
                self._limits().graceful_shutdown,
            )
            return
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._stop_runs)
        super().handle_exit(sig, frame)

    def _runs_settling(self) -> int:
        services = self._services()
        return services.runs.active_count if services is not None else 0


class BackgroundServer:
    """A uvicorn server on a daemon thread with its own event loop."""

    def __init__(self, app: Starlette, sock: socket.socket, **config: object) -> None:
        self.sock = sock
        self.port: int = sock.getsockname()[1]
        self.server = ParleyServer(config_for(app, **config))
        self.limits = _limits(app)
        self.thread = threading.Thread(target=self._run, name="parley-server", daemon=True)
        self.failure: BaseException | None = None

    def _run(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        except BaseException as exc:  # uvicorn exits with SystemExit when start-up fails
            self.failure = exc
        finally:
            self.sock.close()

    def launch(self) -> None:
        """Start the thread and return at once; `serving()` tells when it is ready."""
        self.thread.start()

    def serving(self) -> bool:
        """True once serving; False while starting. Raises RuntimeError if start-up failed."""
        if self.server.started:
            return True
        if not self.thread.is_alive():
            state = getattr(self.server.config.app, "state", None)
            reason = getattr(state, "startup_error", None)  # the app's own words (app.py)
            raise RuntimeError(
                reason
                or f"the server thread exited during start-up ({self.failure!r}; see the log)"
            )
        return False

    def start(self, timeout: float | None = None) -> None:
        """Start and wait until serving (default bound: `Limits.server_start_wait`).

        Raises RuntimeError if it failed to start."""
        timeout = self.limits.server_start_wait if timeout is None else timeout
        self.launch()
        deadline = time.monotonic() + timeout
        while not self.serving():
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start within {timeout:.0f}s")
            time.sleep(0.01)

    def stop(self, timeout: float | None = None) -> bool:
        """Stop gracefully and join the thread (default bound: `Limits.server_stop_wait`).

        Returns False if it did not end in time."""
        timeout = self.limits.server_stop_wait if timeout is None else timeout
        self.server.request_stop()
        self.thread.join(timeout)
        return not self.thread.is_alive()
