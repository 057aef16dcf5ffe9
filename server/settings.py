"""Where Parley keeps its data and how the server is configured.

Values come from (highest first) command-line flags, environment variables
(`PARLEY_DATA_DIR`, `PARLEY_TOKEN`) and defaults.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

APP_NAME = "parley"


def default_data_dir() -> Path:
    override = os.environ.get("PARLEY_DATA_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class UpstreamSettings:
    """An OpenAI-compatible backend (Ollama, llama-server, vLLM, OpenAI...)."""

    base_url: str
    model: str
    api_key: str | None = None
    # Streaming reads may legitimately be silent for minutes during a long prefill;
    # a hang-up by the client, not this timeout, is how a user stops a stalled reply.
    read_timeout: float | None = 300.0


@dataclass(frozen=True)
class Limits:
    max_body_bytes: int = 1_000_000
    max_content_chars: int = 200_000
    max_title_chars: int = 500
    max_header_bytes: int = 32_768
    # A client must finish sending its request line and headers, then its body, within these
    # (loopback clients take milliseconds); slower ones are answered 408 (see http_protocol).
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    # How long a settle waits for the real work (thread, upstream socket) to stop.
    stop_timeout: float = 5.0
    # At most one checkpoint write per interval while a reply streams.
    checkpoint_interval: float = 0.25


@dataclass(frozen=True)
class LocalSettings:
    """The in-process llama.cpp model. `gguf=None` means the bundled SmolLM2-135M-Instruct."""

    enabled: bool = True
    gguf: Path | None = None
    n_ctx: int = 4096
    n_threads: int = 1
    n_threads_batch: int = 2


@dataclass(frozen=True)
class Settings:
    data_dir: Path = field(default_factory=default_data_dir)
    host: str = "127.0.0.1"
    port: int = 0
    token: str = field(default_factory=new_token)
    upstreams: tuple[UpstreamSettings, ...] = ()
    local: LocalSettings = field(default_factory=LocalSettings)
    limits: Limits = field(default_factory=Limits)

    @property
    def db_path(self) -> Path:
        return self.data_dir / "parley.sqlite3"
