"""Where the backends' API keys are kept: the OS keyring, else where the user chose.

The keyring is the default. On a system where no keyring works, a key is never dropped
silently: the user chooses to keep it for this session only (in memory, asked again at
the next launch) or in a file only their user can read (`keys.json`, mode 0600, in the
config directory; anyone who can read their files or backups can read the key).
"""

from __future__ import annotations

import json
import logging
import os
from enum import Enum
from pathlib import Path

from desktop.settings.config import config_dir

log = logging.getLogger(__name__)
KEYRING_SERVICE = "parley"


class Fallback(Enum):
    """Where a key goes when the keyring cannot take it."""

    SESSION = "session"
    FILE = "file"


_session: dict[str, str] = {}  # keys kept for this run of the app only


def keys_file() -> Path:
    return config_dir() / "keys.json"


def api_key(base_url: str) -> str | None:
    """The key for a backend: from the keyring, else the key file, else this session."""
    try:
        import keyring

        found = keyring.get_password(KEYRING_SERVICE, base_url)
        if found:
            return found
    except Exception as exc:  # no keyring backend on this system, or it refused
        log.info("no key from the keyring for %s: %s", base_url, exc)
    return _file_keys().get(base_url) or _session.get(base_url)


def store_in_keyring(base_url: str, key: str) -> str | None:
    """Save (or, with an empty key, forget) a key in the keyring. Returns why it could not,
    or None. An empty key also forgets it everywhere else."""
    if not key:
        forget(base_url)
    try:
        import keyring

        if key:
            keyring.set_password(KEYRING_SERVICE, base_url, key)
        elif keyring.get_password(KEYRING_SERVICE, base_url) is not None:
            keyring.delete_password(KEYRING_SERVICE, base_url)
    except Exception as exc:
        return f"no usable keyring ({exc})"
    return None


def store_elsewhere(base_url: str, key: str, where: Fallback) -> str | None:
    """Keep a key the keyring could not take. Returns an error message or None."""
    if where is Fallback.SESSION:
        _session[base_url] = key
        return None
    keys = _file_keys()
    keys[base_url] = key
    try:
        _write_private(keys_file(), json.dumps(keys, indent=2))
    except OSError as exc:
        _session[base_url] = key
        return f"the key file could not be written ({exc}); the key is kept for this session"
    return None


def forget(base_url: str) -> None:
    _session.pop(base_url, None)
    keys = _file_keys()
    if keys.pop(base_url, None) is not None:
        try:
            _write_private(keys_file(), json.dumps(keys, indent=2))
        except OSError as exc:
            log.warning("could not remove a key from %s: %s", keys_file(), exc)


def _file_keys() -> dict[str, str]:
    try:
        data = json.loads(keys_file().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("ignoring unreadable key file %s: %s", keys_file(), exc)
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str)}


def _write_private(path: Path, text: str) -> None:
    """Created 0600 from the start (never readable by others, even briefly), renamed whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temp, path)
