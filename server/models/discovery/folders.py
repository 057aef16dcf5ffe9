"""The folders of GGUF files the user adds (`/api/models/folders`), remembered in the data dir.

`model_folders.json`: `{"folders": ["/absolute/folder", ...]}`, written whole and renamed
over the old file (server/files.py), so a crash leaves the old list or the new one. A file
that cannot be read is reported in the log and treated as empty; it is not overwritten until
the user adds or removes a folder.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from pathlib import Path

from server.errors import FolderListFullError
from server.files import write_json_atomically
from server.limits import ScanLimits

log = logging.getLogger(__name__)

FILE_NAME = "model_folders.json"


class ModelFolders:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.folders: list[str] = []
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        try:
            if self.path.stat().st_size > ScanLimits.folders_file_bytes:
                raise ValueError(f"over {ScanLimits.folders_file_bytes:,} bytes")
            data = json.loads(self.path.read_text(encoding="utf-8"))
            folders = data["folders"]
            if not isinstance(folders, list):
                raise TypeError("'folders' is not a list")
            self.folders = [f for f in folders if isinstance(f, str) and os.path.isabs(f)]
            self.folders = self.folders[: ScanLimits.max_folders]
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            log.error("cannot read the model folders from %s (%s); starting without them",
                      self.path, exc)  # fmt: skip

    # Each change is made and written under one lock (they run in worker threads).

    def add(self, folder: str) -> bool:
        """False if it is listed already. Raises OSError (not remembered; nothing changed),
        FolderListFullError."""
        with self._lock:
            if folder in self.folders:
                return False
            if len(self.folders) >= ScanLimits.max_folders:
                raise FolderListFullError(f"at most {ScanLimits.max_folders} folders")
            self._save([*self.folders, folder])
            return True

    def remove(self, folder: str) -> bool:
        """False if it is not listed. Raises OSError (nothing changed)."""
        with self._lock:
            if folder not in self.folders:
                return False
            self._save([f for f in self.folders if f != folder])
            return True

    def _save(self, folders: list[str]) -> None:
        write_json_atomically(self.path, {"folders": folders})
        self.folders = folders
