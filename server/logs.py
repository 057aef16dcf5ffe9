"""Parley's log: lines on stderr, and warnings and errors in a rotating file a user can find
(Help → Open log folder) in the platform's user log directory (`PARLEY_LOG_DIR` overrides it).

Secrets never reach either: the API token and the backends' API keys are registered with
`keep_secret` when they are made or read, and every line (its message, its arguments, its
traceback) is written with them replaced, as is any `Bearer …` credential.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import re
import threading
from pathlib import Path

import platformdirs

from server.limits import Limits

APP_NAME = "parley"
LOG_FILE = "parley.log"
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
REDACTED = "[redacted]"
BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]+")

_secrets: set[str] = set()
_lock = threading.Lock()


def log_dir() -> Path:
    override = os.environ.get("PARLEY_LOG_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def keep_secret(value: str | None) -> None:
    """Never write `value` to a log (short values are too common to be told apart)."""
    if value and len(value) >= 8:
        with _lock:
            _secrets.add(value)


def redact(text: str) -> str:
    with _lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        if secret in text:
            text = text.replace(secret, REDACTED)
    return BEARER.sub(rf"\1{REDACTED}", text)


class Redactor(logging.Filter):
    """Replaces secrets in a record before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: its handler reports it, as without a filter
            return True
        record.msg = redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def file_handler(directory: Path | None = None) -> logging.Handler | None:
    """The rotating file of warnings and errors; None (said on stderr) when the directory
    cannot be made: a log is never a reason not to start."""
    directory = directory or log_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            directory / LOG_FILE,
            maxBytes=Limits.log_file_bytes,
            backupCount=BACKUPS,
            encoding="utf-8",
        )
    except OSError as exc:
        logging.getLogger(__name__).warning("no log file in %s: %s", directory, exc)
        return None
    handler.setLevel(logging.WARNING)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.addFilter(Redactor())
    return handler


def setup_logging(to_file: bool = True) -> None:
    """The log of `parley` and `parley-server`: Parley's own lines at INFO on stderr; the
    HTTP and MCP libraries only when something goes wrong (they log a line per request
    otherwise); warnings and errors also in the log file."""
    logging.basicConfig(level=logging.INFO, format=FORMAT)
    root = logging.getLogger()
    for handler in root.handlers:
        handler.addFilter(Redactor())
    if to_file:
        found = file_handler()
        if found is not None:
            root.addHandler(found)
    for chatty in ("httpx", "httpx2", "mcp"):
        logging.getLogger(chatty).setLevel(logging.WARNING)
