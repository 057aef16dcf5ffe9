"""Where a file dialog opens: the folder last chosen for that kind of file, while it still
exists; else the kind's own start: the home folder, or Documents (when there is one) for a
file being saved. Never the process's working directory, which for an app started from a
menu or a launcher is anywhere (often `/`).

One `FileFolders` is shared by every dialog of the app; the app remembers its folders across
launches (desktop/window/state.py) and saves them whenever `folder_chosen` says they changed.
"""

from __future__ import annotations

from pathlib import Path

import platformdirs
from PySide6.QtCore import QObject, Signal

# The kinds of file, each with a folder of its own.
ATTACHMENTS = "attachments"  # files attached to a message
CHATS = "chats"  # exports and imports of chats: one kind, so an import starts where exports go
DOCUMENTS = "documents"  # folders added to the Library
SAVED = "saved"  # a chat's attachment saved to a file
KINDS = (ATTACHMENTS, CHATS, DOCUMENTS, SAVED)


class FileFolders(QObject):
    """`remembered`: kind -> the folder last chosen for it."""

    folder_chosen = Signal(str, str)  # kind, folder: a new folder to remember

    def __init__(self, remembered: dict[str, str] | None = None) -> None:
        super().__init__()
        self.remembered = {k: v for k, v in (remembered or {}).items() if k in KINDS and v}

    def start(self, kind: str, *, saving: bool = False) -> str:
        """The folder a dialog for `kind` opens in; `saving`: a file is being written."""
        last = self.remembered.get(kind)
        if last and Path(last).is_dir():
            return last
        return str(documents() if saving else home())

    def start_file(self, kind: str, name: str) -> str:
        """A save dialog's start: `name` in the folder for `kind`."""
        return str(Path(self.start(kind, saving=True)) / name)

    def chosen(self, kind: str, path: str, *, folder: bool = False) -> None:
        """The user chose `path` (a file, or a folder when `folder`): its folder is where
        the next dialog of this kind opens."""
        where = path if folder else str(Path(path).parent)
        if Path(where).is_absolute() and self.remembered.get(kind) != where:
            self.remembered[kind] = where
            self.folder_chosen.emit(kind, where)


def home() -> Path:
    return Path.home()


def documents() -> Path:
    """The user's Documents folder (as the desktop names it: XDG's user-dirs on Linux) if it
    exists, else the home folder."""
    found = Path(platformdirs.user_documents_dir())
    return found if found.is_dir() else home()
