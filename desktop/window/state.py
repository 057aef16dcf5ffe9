"""What the window restores at the next launch: the conversation that was open, the window's
size and place (or that it was maximized), the sidebar's width and whether it is shown, the
text's zoom, and the folder each kind of file dialog last went to (desktop/file_folders.py).

A small JSON file beside the desktop config, written atomically whenever the chat or a view
choice changes and at quit (so a crash keeps all but the last moves), off the window's
thread. Unreadable or missing: nothing is restored; a value of the wrong kind is left out,
the others still apply.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from desktop.settings.config import config_dir, write_atomically

log = logging.getLogger(__name__)


def state_path() -> Path:
    return config_dir() / "window.json"


@dataclass
class WindowState:
    conversation_id: str | None = None
    # The window's size and place (QWidget.saveGeometry, base64): "" until first saved.
    geometry: str = ""
    maximized: bool = False
    sidebar_width: int = 280
    sidebar_shown: bool = True
    zoom: int = 0
    # Kind of file -> the folder its dialogs last went to (desktop/file_folders.py).
    folders: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path | None = None) -> WindowState:
        path = path or state_path()
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable window state %s: %s", path, exc)
            return cls()
        state = cls()
        for spec in fields(cls):
            value = data.get(spec.name)
            if _fits(getattr(state, spec.name), spec.name, value):
                setattr(state, spec.name, value)
        legacy = data.get("export_folder")  # before there was a folder per kind
        if isinstance(legacy, str) and legacy and "chats" not in state.folders:
            state.folders["chats"] = legacy
        return state

    def save(self, path: Path | None = None) -> None:
        _write(path or state_path(), json.dumps(asdict(self)))


class StateWriter:
    """Writes the window's state off the window's thread (a write and a rename take
    milliseconds, more on a busy disk: a stall at every chat opened), one at a time in the
    order asked, so the last one asked is the one on disk."""

    def __init__(self, path: Path | None = None) -> None:
        self._path = path
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parley-window-state")

    def save(self, state: WindowState) -> None:
        """The state as it is now (not as it is when the write comes)."""
        self._pool.submit(_write, self._path or state_path(), json.dumps(asdict(state)))

    def close(self) -> None:
        """Until every write asked for is on disk (at quit)."""
        self._pool.shutdown(wait=True)


def _write(path: Path, text: str) -> None:
    try:
        write_atomically(path, text)
    except OSError as exc:  # only a convenience: never an error for the user
        log.warning("could not save the window state: %s", exc)


def _fits(default: object, name: str, value: object) -> bool:
    """Whether a stored value is of the kind its field holds."""
    if name == "conversation_id":
        return value is None or isinstance(value, str)
    if name in ("sidebar_width", "zoom"):
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "folders":
        return isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        )
    return isinstance(value, type(default))
