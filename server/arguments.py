"""Command-line flags shared by `parley-server` and the desktop's `parley`, turned into
`Settings` in one place, with every check done once.

Imports no web framework and nothing of the running server: the desktop imports it to
parse its own flags before any server exists.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from server.errors import UsageError
from server.limits import AgentLimits, ModelLimits
from server.settings import (
    KEEP_LOADED,
    Limits,
    LocalSettings,
    Settings,
    UpstreamSettings,
    default_data_dir,
)

MIN_TOKEN_CHARS = 16  # a short token is guessed; any local page can try


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags shared by `parley-server` and the desktop app's `parley`."""
    parser.add_argument("--data-dir", type=Path, help="where conversations are stored")
    parser.add_argument(
        "--models-dir",
        type=Path,
        metavar="PATH",
        help="where models downloaded from Hugging Face go (default: DATA_DIR/models)",
    )
    parser.add_argument(
        "--gguf", type=Path, metavar="PATH", help="a GGUF model to run locally (default: bundled)"
    )
    parser.add_argument("--upstream", metavar="BASE_URL", help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--upstream-model", metavar="NAME", help="model name at the upstream")
    parser.add_argument(
        "--upstream-context",
        type=int,
        metavar="TOKENS",
        help="the upstream model's context length (the context meter; compaction begins near it)",
    )
    parser.add_argument(
        "--upstream-key-env",
        metavar="VAR",
        help="environment variable holding the upstream API key",
    )
    parser.add_argument(
        "--n-gpu-layers",
        type=int,
        metavar="N",
        help="layers of the local model to offload to a GPU (-1: all; needs a GPU build of "
        "xllamacpp, see the README; default 0, the CPU)",
    )
    parser.add_argument(
        "--keep-alive",
        metavar="SECONDS",
        help="unload a local model's engine after this long with no reply (0: after each "
        f"reply; 'never'; default {LocalSettings.keep_alive}); a model's own setting wins",
    )
    parser.add_argument(
        "--max-reply-chars",
        type=int,
        metavar="N",
        help=f"cut a reply at N characters (default {Limits.max_reply_chars:,})",
    )
    parser.add_argument(
        "--mcp-config",
        type=Path,
        metavar="FILE",
        help='MCP servers the model may call, as {"mcpServers": {...}} '
        "(default: mcp.json in the data dir)",
    )
    parser.add_argument(
        "--max-steps",
        type=int,
        metavar="N",
        help=f"the most model calls in one turn with tools (default {Limits.max_steps})",
    )
    parser.add_argument(
        "--tool-timeout",
        type=float,
        metavar="SECONDS",
        help=(
            "ask whether to keep waiting for a tool call after this long (default "
            f"{Limits.tool_call_timeout:g}; an MCP server's entry may set its own)"
        ),
    )
    parser.add_argument(
        "--sub-agents",
        type=int,
        metavar="N",
        help=(
            "sub-agents of a reply that run at once (default "
            f"{AgentLimits.children_at_once}; 0: the model may not hand tasks to sub-agents)"
        ),
    )


def settings_from_args(
    args: argparse.Namespace,
    *,
    token: str,
    host: str = "127.0.0.1",
    port: int = 0,
) -> Settings:
    """The settings the flags of `add_backend_arguments` ask for. Raises UsageError.

    The upstream named by flags is the default model; the desktop adds its own backends
    as `Settings.later_upstreams`, after the local model.
    """
    if len(token) < MIN_TOKEN_CHARS or token != token.strip():
        raise UsageError(
            f"the API token must be at least {MIN_TOKEN_CHARS} characters, with no spaces at "
            "either end (leave it out for a random one)"
        )
    data_dir: Path | None = args.data_dir
    return Settings(
        data_dir=data_dir.expanduser() if data_dir else default_data_dir(),
        host=host,
        port=port,
        token=token,
        upstreams=_upstream_from_args(args),
        local=_local_from_args(args),
        limits=_limits_from_args(args),
        mcp_config=_mcp_config_from_args(args),
        models_dir=_models_dir_from_args(args),
    )


def _models_dir_from_args(args: argparse.Namespace) -> Path | None:
    found: Path | None = getattr(args, "models_dir", None)
    if found is None:
        return None
    found = found.expanduser()
    if not found.is_absolute():
        raise UsageError(f"--models-dir must be an absolute path, got {found}")
    if found.exists() and not found.is_dir():
        raise UsageError(f"--models-dir: {found} is not a folder")
    return found


def _limits_from_args(args: argparse.Namespace) -> Limits:
    changes: dict[str, int | float | AgentLimits] = {}
    chars: int | None = getattr(args, "max_reply_chars", None)
    if chars is not None:
        if chars < 1:
            raise UsageError(f"--max-reply-chars must be at least 1, got {chars}")
        changes["max_reply_chars"] = chars
    steps: int | None = getattr(args, "max_steps", None)
    if steps is not None:
        if not 1 <= steps <= 100:
            raise UsageError(f"--max-steps must be 1 to 100, got {steps}")
        changes["max_steps"] = steps
    timeout: float | None = getattr(args, "tool_timeout", None)
    if timeout is not None:
        if not 0 < timeout <= 86_400:
            raise UsageError(f"--tool-timeout must be above 0 and at most a day, got {timeout:g}")
        changes["tool_call_timeout"] = timeout
    children: int | None = getattr(args, "sub_agents", None)
    if children is not None:
        if not 0 <= children <= 32:
            raise UsageError(f"--sub-agents must be 0 to 32, got {children}")
        agents = AgentLimits(children_at_once=max(children, 1), max_depth=min(children, 1))
        changes["agents"] = agents
    return Limits(**changes)  # type: ignore[arg-type]


def _mcp_config_from_args(args: argparse.Namespace) -> Path | None:
    path: Path | None = getattr(args, "mcp_config", None)
    if path is None:
        return None
    path = path.expanduser()
    if path.exists() and not path.is_file():
        raise UsageError(f"--mcp-config: {path} is not a file")
    return path  # a file that does not exist yet is created when a server is added


def _upstream_from_args(args: argparse.Namespace) -> tuple[UpstreamSettings, ...]:
    if not args.upstream and not args.upstream_model:
        return ()
    if not (args.upstream and args.upstream_model):
        raise UsageError("--upstream and --upstream-model go together")
    if not args.upstream.startswith(("http://", "https://")):
        raise UsageError(f"--upstream must be an http(s) URL, got {args.upstream!r}")
    key = None
    if args.upstream_key_env:
        key = os.environ.get(args.upstream_key_env)
        if not key:
            raise UsageError(f"the environment variable {args.upstream_key_env} is not set")
    context: int | None = getattr(args, "upstream_context", None)
    low, high = UpstreamSettings.min_context, UpstreamSettings.max_context
    if context is not None and not low <= context <= high:
        raise UsageError(f"--upstream-context must be {low:,} to {high:,} tokens, got {context}")
    return (
        UpstreamSettings(
            base_url=args.upstream, model=args.upstream_model, api_key=key, context=context
        ),
    )


def _local_from_args(args: argparse.Namespace) -> LocalSettings:
    keep_alive = _keep_alive_from_args(args)
    layers: int | None = args.n_gpu_layers
    if layers is None:
        return LocalSettings(gguf=_gguf_from_args(args), keep_alive=keep_alive)
    if layers < -1:
        raise UsageError(f"--n-gpu-layers must be -1 (all), 0 (none) or more, got {layers}")
    return LocalSettings(gguf=_gguf_from_args(args), n_gpu_layers=layers, keep_alive=keep_alive)


def _keep_alive_from_args(args: argparse.Namespace) -> int:
    given: str | None = getattr(args, "keep_alive", None)
    if given is None:
        return LocalSettings.keep_alive
    if given.strip().lower() == "never":
        return KEEP_LOADED
    try:
        seconds = int(given)
    except ValueError:
        seconds = -2
    most = ModelLimits.max_keep_alive
    if not 0 <= seconds <= most:
        raise UsageError(f"--keep-alive must be 0 to {most} seconds, or 'never'; got {given!r}")
    return seconds


def _gguf_from_args(args: argparse.Namespace) -> Path | None:
    # The one check of a named GGUF: the local backend trusts the settings it is given.
    if args.gguf is None:
        return None
    path: Path = args.gguf.expanduser()
    if not path.is_file():
        raise UsageError(f"--gguf: no file at {args.gguf}")
    return path
