"""Where Parley keeps its data and how the server is configured.

Values come from (highest first) command-line flags (server/arguments.py), environment
variables (`PARLEY_DATA_DIR`, `PARLEY_TOKEN`) and defaults.
"""

from __future__ import annotations

import gc
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import platformdirs

from server.limits import EMBEDDED_RELAY_PAUSE_S, Limits
from server.logs import keep_secret

__all__ = ["EMBEDDED_RELAY_PAUSE_S", "Limits"]  # their home is server/limits.py

APP_NAME = "parley"


_frozen = False


def freeze_startup_objects() -> None:
    """Once per process, when the app has started: what exists then (the libraries, the
    server; Qt in the window) lives as long as the process, so keep it out of the
    collector's full passes. Measured: a full collection took 53-65 ms with them (the GUI
    stalled; an API reply of a 2,000-message chat took 110-137 ms instead of ~45), a few ms
    without. Not again after a restart of the embedded server: a stopped server's objects
    must stay collectable."""
    global _frozen
    if not _frozen:
        _frozen = True
        gc.collect()
        gc.freeze()


def default_data_dir() -> Path:
    override = os.environ.get("PARLEY_DATA_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def new_token() -> str:
    token = secrets.token_urlsafe(32)
    keep_secret(token)
    return token


@dataclass(frozen=True)
class UpstreamSettings:
    """An OpenAI-compatible backend (Ollama, llama-server, vLLM, OpenAI...)."""

    base_url: str
    model: str
    api_key: str | None = None
    # Tokens the model sees at once (the context meter's limit, and when compaction begins);
    # None: asked of the upstream (server/models/upstream_context.py), not known until it says.
    context: int | None = None
    # What a context may be, set or said (fewer tokens than this is no model's; more is absurd).
    min_context: ClassVar[int] = 256
    max_context: ClassVar[int] = 10_000_000

    def __post_init__(self) -> None:
        keep_secret(self.api_key)


KEEP_LOADED = -1  # a keep-alive that never unloads (Ollama's negative keep_alive)


@dataclass(frozen=True)
class LocalSettings:
    """The in-process llama.cpp model. `gguf=None` means the bundled SmolLM2-135M-Instruct.

    `gguf` is checked once, where flags become settings (server/arguments.py).
    """

    enabled: bool = True
    gguf: Path | None = None
    n_ctx: int = 4096  # per conversation
    n_parallel: int = 2  # conversations streaming at once (the engine's slots)
    # Tokens per prompt batch. The engine stops a cancelled prefill only between batches, and
    # hears of the hang-up only when it writes a batch's progress, after the next batch has
    # begun: a Stop keeps the engine for the batch in flight and the next. At 16, ~0.1 s
    # (a Stop, then a send: the next reply's first token 0.4-0.5 s later at 64); prompts
    # evaluate ~20 % slower than at 64 (docs/benchmarks.md has the earlier trade-off).
    n_batch: int = 16
    # 2 cores shared with a GUI and a server: one thread generates (robust under
    # contention, see docs/benchmarks.md), two evaluate the prompt.
    n_threads: int = 1
    n_threads_batch: int = 2
    n_gpu_layers: int = 0  # layers offloaded to a GPU (needs a GPU build of xllamacpp)
    # Seconds the engine stays loaded with no reply before it is unloaded (its memory given
    # back): 0 after each reply, KEEP_LOADED never. A model's own setting overrides it.
    keep_alive: int = 600


@dataclass(frozen=True)
class Settings:
    """Everything one server needs: where its data lives, where it listens, its token,
    its models and its limits. Built from flags by `server.arguments.settings_from_args`
    (parley-server and the desktop alike), or directly (tests, benchmarks)."""

    data_dir: Path = field(default_factory=default_data_dir)
    host: str = "127.0.0.1"
    port: int = 0
    token: str = field(default_factory=new_token)
    upstreams: tuple[UpstreamSettings, ...] = ()
    local: LocalSettings = field(default_factory=LocalSettings)
    # Upstreams listed after the local model: the desktop's Settings backends, which do not
    # take the default away from the bundled model (a --upstream flag does).
    later_upstreams: tuple[UpstreamSettings, ...] = ()
    limits: Limits = field(default_factory=Limits)
    # The MCP servers' configuration file (server/tools/config.py); None: mcp.json in data_dir.
    mcp_config: Path | None = None
    # Where models downloaded from Hugging Face go (server/models/hub/); None: data_dir/models.
    models_dir: Path | None = None

    def __post_init__(self) -> None:
        keep_secret(self.token)  # a token supplied rather than made

    @property
    def db_path(self) -> Path:
        return self.data_dir / "parley.sqlite3"

    @property
    def mcp_config_path(self) -> Path:
        return self.mcp_config or self.data_dir / "mcp.json"

    @property
    def models_path(self) -> Path:
        return self.models_dir or self.data_dir / "models"
