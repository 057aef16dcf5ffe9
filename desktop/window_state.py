"""What the window restores at the next launch: the conversation that was open.

A small JSON file beside the desktop config, written atomically whenever it changes (not
at quit, so a crash keeps it too). Unreadable or missing: nothing is restored.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass
from pathlib import Path

from desktop.config import config_dir, write_atomically

log = logging.getLogger(__name__)


def state_path() -> Path:
    return config_dir() / "window.json"


@dataclass
class WindowState:
    conversation_id: str | None = None

    @classmethod
    def load(cls, path: Path | None = None) -> WindowState:
        path = path or state_path()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            conversation_id = data.get("conversation_id")
            return cls(conversation_id if isinstance(conversation_id, str) else None)
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError, AttributeError) as exc:
            log.warning("ignoring unreadable window state %s: %s", path, exc)
            return cls()

    def save(self, path: Path | None = None) -> None:
        try:
            write_atomically(path or state_path(), json.dumps(asdict(self)))
        except OSError as exc:  # only a convenience: never an error for the user
            log.warning("could not save the window state: %s", exc)
