"""A keyring backend that keeps its items in a JSON file the test chooses (in its temp dir,
outside Parley's data dir), so a test can see what Parley put in "the keyring"."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from keyring.backend import KeyringBackend
from keyring.errors import PasswordDeleteError


class FileKeyring(KeyringBackend):
    priority = 1

    def __init__(self, path: Path) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.path = path
        self._lock = threading.Lock()  # Parley reaches the keyring from worker threads

    def _items(self) -> dict[str, str]:
        try:
            found: dict[str, str] = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        return found

    def get_password(self, service: str, username: str) -> str | None:
        return self._items().get(f"{service}\n{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        with self._lock:
            items = self._items()
            items[f"{service}\n{username}"] = password
            self.path.write_text(json.dumps(items), encoding="utf-8")

    def delete_password(self, service: str, username: str) -> None:
        with self._lock:
            items = self._items()
            if items.pop(f"{service}\n{username}", None) is None:
                raise PasswordDeleteError(username)
            self.path.write_text(json.dumps(items), encoding="utf-8")

    def text(self) -> str:
        return self.path.read_text(encoding="utf-8") if self.path.exists() else ""
