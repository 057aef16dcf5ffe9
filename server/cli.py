"""`parley-server`: the server alone, headless, in the main thread (SIGINT/SIGTERM settle runs)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys

from server.app import create_app
from server.arguments import add_backend_arguments, settings_from_args
from server.errors import StorageError, UsageError
from server.logs import setup_logging
from server.serve import ParleyServer, bind, config_for
from server.settings import freeze_startup_objects, new_token
from server.storage.db import DataDirLock, check_database


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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    setup_logging()
    supplied = args.token or os.environ.get("PARLEY_TOKEN")
    token = supplied or new_token()
    try:
        settings = settings_from_args(args, token=token, host=args.host, port=args.port)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        # Fail here, with one clear line, rather than in the server's start-up.
        probe = DataDirLock(settings.db_path)
        probe.acquire()
        try:
            check_database(settings.db_path)
        finally:
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
        freeze_startup_objects()
        print(f"Parley server listening on http://{host}:{port}", flush=True)
        if supplied is None:
            # The only place a generated token is shown: the user needs it to call the API.
            print(f"API token (this launch only): {token}", flush=True)

    server = ParleyServer(config_for(create_app(settings)), on_started=announce)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    return 0 if server.started else 1
