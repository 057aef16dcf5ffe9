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

import platformdirs

from server.logs import keep_secret

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

    def __post_init__(self) -> None:
        keep_secret(self.api_key)


# The embedded server's Limits.relay_pause (desktop/embedded.py; server/models/relay_duty.py).
EMBEDDED_RELAY_PAUSE_S = 0.004


@dataclass(frozen=True)
class Limits:
    """Every size limit and every deadline of the server, and the desktop's waits on it.

    Deadlines are in seconds. Those that bound a stop must keep this order (checked here,
    so a configuration that breaks it is refused with ValueError; pinned by
    tests/server/test_limits.py):

        stop_timeout < shutdown_runs_wait < graceful_shutdown < server_stop_wait
        settle_bound < settled_wait

    - `stop_timeout`: how long a settle waits for a run's real work (worker thread, upstream
      socket) to stop before it saves anyway; the model stays leased until the work ends.
      A cooperative worker stops within a token, so this is the normal worst case of a stop.
    - `settle_bound` (derived): the longest one settle can take: `stop_timeout`, then up to
      `final_write_attempts` final writes, each waiting up to `db_busy_timeout` for another
      program's write lock, with pauses in between.
    - `shutdown_runs_wait`: at shutdown the run manager waits this long (counted from the
      moment shutdown began) for every run to settle. Above `stop_timeout`, so a worker that
      ignores its stop is still saved on the normal path, by its own settle.
    - `graceful_shutdown`: uvicorn's backstop (counted from the same moment): responses
      still open then are cancelled. Above `shutdown_runs_wait`, so every run the manager
      waits for also gets to send its final chunk (what was saved) to its client.
    - `server_stop_wait`: how long the desktop joins the embedded server's thread. Above
      `graceful_shutdown`, so uvicorn's own backstop fires first and the thread ends by
      itself. A final write held up by another program's lock (up to `settle_bound`) may
      outlast it: the desktop then exits anyway and the next start marks that reply
      `interrupted`/`crash` with its last checkpoint. Nothing is deleted.
    - `settled_wait`: the bound of `GET .../messages/{id}?wait=settled`. Above
      `settle_bound`, so the long-poll returns a settled message whenever the settle ends
      at all.

    Outside that order, each for its own reason:

    - `close_settle_wait`: on close the window waits this long for the server to report no
      active turn, then stops the server. A UI bound, deliberately NOT above `stop_timeout`:
      a hang-up settles in milliseconds (the work stops at the next token or when its
      upstream socket closes), and a worker that ignores it is settled by the server stop
      that follows (its ending stays `client_hangup`: the first reason wins). Waiting longer
      would only delay the window's exit.
    - `server_start_wait`: how long the desktop waits for the embedded server to serve.
    - `header_timeout`, `body_timeout`: a client must send its request within these (a
      loopback client takes milliseconds); slower ones get 408 (server/http/protocol.py,
      server/http/jsonbody.py).
    - `send_timeout`: a client that reads nothing for this long while a response waits to
      be written (its socket's buffers full) is disconnected, and its reply takes the
      hang-up path (server/http/protocol.py). A slow reader is not dropped: only one that
      reads nothing at all.
    - `upstream_connect_timeout`, `upstream_write_timeout`, `upstream_pool_timeout`,
      `upstream_read_timeout`: how long a run waits on an OpenAI-compatible upstream before
      it ends with an error. They never delay a stop: stopping a run closes its request at
      once. The read timeout is long (a long prefill is legitimately silent for minutes);
      a hang-up, not this timeout, is how a user stops a stalled reply.
    - `tool_call_timeout`: how long one tool call may run before it is cancelled (its
      step ends as an error the model sees). A stop never waits for it.
    - `max_steps`: the most model calls in one turn; the last one may call no tool
      (`tool_choice: none`), so the model answers with what it has.
    - `relay_pause`: None (parley-server): an upstream's stream is relayed as fast as it
      comes. The desktop's embedded server sets it: input that piles up (an upstream
      faster than the relay) is handled in bursts with pauses this long between them, so
      the window's thread, which shares the process and its GIL, gets them and a core
      (server/models/relay_duty.py). An upstream at a model's rate is never paused.
    - `checkpoint_interval`: at most one checkpoint write per interval while a reply
      streams. It bounds what a crash loses (promise: 250 ms of delivered text,
      docs/reliability.md); 100 ms keeps a margin for the write itself and costs about
      one small transaction per interval (docs/benchmarks.md).
    """

    max_body_bytes: int = 1_000_000
    max_import_bytes: int = 256_000_000  # POST /api/import: a whole history
    max_content_chars: int = 200_000
    max_reply_tokens: int = 1_000_000  # the highest `max_tokens` a request may ask for
    # The longest reply kept, in characters (~1 million tokens): a reply that reaches it is
    # cut there and ends as an error saying so; the text up to it is kept (--max-reply-chars).
    max_reply_chars: int = 4_000_000
    max_title_chars: int = 500
    max_header_bytes: int = 32_768
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    send_timeout: float = 30.0
    stop_timeout: float = 5.0
    checkpoint_interval: float = 0.1
    db_busy_timeout: float = 5.0
    final_write_attempts: int = 3
    final_write_pause: float = 0.2  # before attempt n+1: n x this
    settled_wait: float = 30.0
    shutdown_runs_wait: float = 6.0
    graceful_shutdown: float = 8.0
    server_start_wait: float = 15.0
    server_stop_wait: float = 10.0
    close_settle_wait: float = 2.0
    upstream_connect_timeout: float = 10.0
    upstream_write_timeout: float = 30.0
    upstream_pool_timeout: float = 10.0
    upstream_read_timeout: float | None = 300.0
    tool_call_timeout: float = 60.0
    max_steps: int = 8
    relay_pause: float | None = None

    def __post_init__(self) -> None:
        for name, value in vars(self).items():
            if value is None or (name == "final_write_pause" and value == 0):
                continue  # no upstream read timeout, relay pause, or pause between writes
            if not value > 0:
                raise ValueError(f"Limits.{name} must be positive, got {value!r}")
        order = [
            ("stop_timeout", "shutdown_runs_wait"),
            ("shutdown_runs_wait", "graceful_shutdown"),
            ("graceful_shutdown", "server_stop_wait"),
            ("settle_bound", "settled_wait"),
        ]
        for shorter, longer in order:
            if not getattr(self, shorter) < getattr(self, longer):
                raise ValueError(
                    f"Limits.{shorter} ({getattr(self, shorter):g} s) must be shorter than "
                    f"Limits.{longer} ({getattr(self, longer):g} s); see the Limits docstring"
                )

    @property
    def settle_bound(self) -> float:
        """The longest one settle can take (see the class docstring)."""
        attempts = self.final_write_attempts
        pauses = self.final_write_pause * attempts * (attempts - 1) / 2
        return self.stop_timeout + attempts * self.db_busy_timeout + pauses


@dataclass(frozen=True)
class LocalSettings:
    """The in-process llama.cpp model. `gguf=None` means the bundled SmolLM2-135M-Instruct.

    `gguf` is checked once, where flags become settings (server/arguments.py).
    """

    enabled: bool = True
    gguf: Path | None = None
    n_ctx: int = 4096  # per conversation
    n_parallel: int = 2  # conversations streaming at once (the engine's slots)
    # Tokens per prompt batch: a stopped prefill ends at a batch boundary, so a batch must
    # be short (docs/benchmarks.md: the stop latency / prefill speed trade-off).
    n_batch: int = 64
    # 2 cores shared with a GUI and a server: one thread generates (robust under
    # contention, see docs/benchmarks.md), two evaluate the prompt.
    n_threads: int = 1
    n_threads_batch: int = 2
    n_gpu_layers: int = 0  # layers offloaded to a GPU (needs a GPU build of xllamacpp)


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
