"""`parley-server`: the server alone, headless, in the main thread (SIGINT/SIGTERM settle runs)."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from pathlib import Path

from server.app import create_app
from server.db import DataDirLock
from server.errors import StorageError
from server.serve import ParleyServer, bind, config_for
from server.settings import (
    LocalSettings,
    Settings,
    UpstreamSettings,
    default_data_dir,
    new_token,
)


class UsageError(Exception):
    """A flag or environment variable the server cannot start with."""


def add_backend_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags shared by `parley-server` and the desktop app's `parley`."""
    parser.add_argument("--data-dir", type=Path, help="where conversations are stored")
    parser.add_argument(
        "--gguf", type=Path, metavar="PATH", help="a GGUF model to run locally (default: bundled)"
    )
    parser.add_argument("--upstream", metavar="BASE_URL", help="OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--upstream-model", metavar="NAME", help="model name at the upstream")
    parser.add_argument(
        "--upstream-key-env",
        metavar="VAR",
        help="environment variable holding the upstream API key",
    )


def port_number(text: str) -> int:
    port = int(text)
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (0-65535)")
    return port


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="parley-server", description="Parley's chat server, headless."
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (loopback)")
    parser.add_argument("--port", type=port_number, default=0, help="port (0 picks a free one)")
    parser.add_argument("--token", help="API token (default: $PARLEY_TOKEN, else a random one)")
    add_backend_arguments(parser)
    return parser


def upstreams_from_args(args: argparse.Namespace) -> tuple[UpstreamSettings, ...]:
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
    return (UpstreamSettings(base_url=args.upstream, model=args.upstream_model, api_key=key),)


def settings_from_args(args: argparse.Namespace, *, token: str) -> Settings:
    return Settings(
        data_dir=args.data_dir or default_data_dir(),
        host=args.host,
        port=args.port,
        token=token,
        upstreams=upstreams_from_args(args),
        local=LocalSettings(gguf=args.gguf.expanduser() if args.gguf else None),
    )


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    supplied = args.token or os.environ.get("PARLEY_TOKEN")
    token = supplied or new_token()
    try:
        settings = settings_from_args(args, token=token)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        if args.gguf and not args.gguf.expanduser().is_file():
            raise UsageError(f"--gguf: no file at {args.gguf}")
        probe = DataDirLock(settings.db_path)
        probe.acquire()  # fail here, clearly, rather than in the server's start-up
        probe.release()
    except (UsageError, StorageError, OSError) as exc:
        print(f"parley-server: {exc}", file=sys.stderr)
        return 2
    try:
        sock = bind(settings.host, settings.port)
    except OSError as exc:
        print(f"parley-server: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 2
    port = sock.getsockname()[1]
    host = f"[{settings.host}]" if ":" in settings.host else settings.host

    def announce() -> None:
        print(f"Parley server listening on http://{host}:{port}", flush=True)
        if supplied is None:
            # The only place a generated token is shown: the user needs it to call the API.
            print(f"API token (this launch only): {token}", flush=True)

    server = ParleyServer(config_for(create_app(settings)), on_started=announce)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    return 0 if server.started else 1
