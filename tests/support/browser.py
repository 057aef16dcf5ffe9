"""A real browser (Debian's headless Chromium) loading hostile pages against Parley.

`AttackSite` is the attacker's web server on its own loopback port: it serves the pages in
tests/support/pages/ and collects what they report (the pages post their findings to it).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from server.serve import BackgroundServer, bind
from tests.support.waiting import wait_for

PAGES = Path(__file__).parent / "pages"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class AttackSite:
    def __init__(self, port: int = 0) -> None:
        self.reports: list[dict[str, Any]] = []
        self.go = threading.Event()
        self._server = BackgroundServer(
            self,  # type: ignore[arg-type]
            bind("127.0.0.1", port),
            lifespan="off",  # nothing to start: HTTP only
        )

    @property
    def port(self) -> int:
        return self._server.port

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> AttackSite:
        self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def wait_report(self, predicate: Any, timeout: float = 30.0) -> dict[str, Any]:
        found: dict[str, Any] = wait_for(
            lambda: next((r for r in self.reports if predicate(r)), None), timeout
        )
        return found

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope["path"]
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if path == "/report":
            self.reports.append(json.loads(body))
            await _answer(send, 204, b"", "text/plain")
        elif path == "/go":
            await _answer(
                send, 200, json.dumps({"go": self.go.is_set()}).encode(), "application/json"
            )
        elif path.endswith(".html") and (PAGES / path.lstrip("/")).is_file():
            await _answer(send, 200, (PAGES / path.lstrip("/")).read_bytes(), "text/html")
        else:
            await _answer(send, 404, b"not here", "text/plain")


async def _answer(send: Any, status: int, body: bytes, content_type: str) -> None:
    headers = [
        (b"content-type", content_type.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"access-control-allow-origin", b"*"),  # the attacker's own server lets its pages read
        (b"cache-control", b"no-store"),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class Chromium:
    """Headless Chromium showing one URL until closed; `rebind.test` resolves to 127.0.0.1."""

    def __init__(self, url: str) -> None:
        assert CHROMIUM is not None
        self._profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)
        self.proc = subprocess.Popen(
            [
                CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync",
                f"--user-data-dir={self._profile.name}",
                "--host-resolver-rules=MAP rebind.test 127.0.0.1",
                url,
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: closing ends all its processes
        )  # fmt: skip

    def close(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self._profile.cleanup()
