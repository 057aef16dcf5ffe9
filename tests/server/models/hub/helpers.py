"""Driving downloads through the API, waiting on facts (a state, bytes on disk)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.parley import Parley
from tests.support.waiting import wait_for

MiB = 1024 * 1024


def download(server: Parley, download_id: str) -> dict[str, Any]:
    for found in server.call("GET", "/api/downloads").json()["downloads"]:
        if found["id"] == download_id:
            return dict(found)
    raise KeyError(download_id)


def start(server: Parley, repo: str, file: str) -> str:
    reply = server.call("POST", "/api/downloads", json_body={"repo": repo, "file": file})
    assert reply.status == 202, reply.body
    return str(reply.json()["id"])


def wait_state(server: Parley, download_id: str, *states: str, timeout: float = 30) -> dict:  # type: ignore[type-arg]
    def reached() -> dict[str, Any] | None:
        found = download(server, download_id)
        return found if found["state"] in states else None

    found: dict[str, Any] = wait_for(reached, timeout)
    return found


def wait_bytes(path: Path, at_least: int, timeout: float = 30) -> None:
    wait_for(lambda: path.exists() and path.stat().st_size >= at_least, timeout)


def models(server: Parley) -> list[str]:
    return [m["name"] for m in server.call("GET", "/api/models").json()["models"]]


def child_pid(server: Parley) -> int:
    """The running download's child process."""

    def pid() -> int | None:
        child = server.app.state.downloads._child
        return child.process.pid if child is not None and child.process is not None else None

    found: int = wait_for(pid, 10)
    return found
