"""Parley with the bundled GGUF under several names (each its own engine), and the facts a
test waits on: which models are loaded, their engines' processes, gone or not."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from server.limits import ModelLimits
from server.models.base import ChatBackend
from server.models.bundled import bundled_gguf
from server.models.local import LocalBackend
from server.models.openai_compat import OpenAICompatBackend
from server.models.residency import Residency
from server.settings import Limits, LocalSettings, UpstreamSettings
from tests.support.parley import MODEL, Parley

STORY = "Write a very long story about a dragon and a knight, at least 1000 words."


def one_estimate() -> int:
    """What one engine of the bundled model counts against a budget (its fits estimate)."""
    return Residency.needed(LocalBackend(LocalSettings(gguf=bundled_gguf())))


def local_parley(
    data_dir: Path,
    names: list[str],
    *,
    keep_alive: int = 600,
    budget: int | None = None,
    upstream_url: str | None = None,
) -> Parley:
    """Started; the first name is the default (it loads at once)."""
    limits = Limits(models=ModelLimits(memory_budget=budget))
    settings = LocalSettings(gguf=bundled_gguf(), keep_alive=keep_alive)
    backends: list[ChatBackend] = [LocalBackend(settings, limits, name=n) for n in names]
    if upstream_url is not None:  # after the local models: the first name stays the default
        backends.append(OpenAICompatBackend(UpstreamSettings(upstream_url, MODEL), limits))
    return Parley(data_dir, limits=limits, backends=backends).start()


def backend_of(server: Parley, name: str) -> LocalBackend:
    backend = server.services.models.resolve(name).backend
    assert isinstance(backend, LocalBackend)
    return backend


def engine_pid(server: Parley, name: str) -> int:
    engine = backend_of(server, name).engine
    assert engine is not None and engine.pid is not None, f"{name} is not loaded"
    return engine.pid


def gone(pid: int) -> bool:
    """The process has exited and been reaped (Linux /proc)."""
    return not os.path.exists(f"/proc/{pid}")


def lifecycles(server: Parley) -> dict[str, Any]:
    return {m["name"]: m.get("lifecycle") for m in server.status()["models"]}


def loaded(server: Parley) -> set[str]:
    """The models whose engine runs, by the status."""
    return {name for name, state in lifecycles(server).items() if state in ("loaded", "busy")}


def wait_loaded(server: Parley, name: str, timeout: float = 60.0) -> None:
    def ready() -> bool:
        state = lifecycles(server)[name]
        if state == "not_loaded" and backend_of(server, name).state == "error":
            raise AssertionError(backend_of(server, name).state_error)
        return state in ("loaded", "busy")

    server.wait_for(ready, timeout=timeout)
