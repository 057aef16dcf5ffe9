"""Folders that hold secrets rather than documents.

Whatever the library indexes, `search_documents` hands to the model without asking (it is
read-only and built in), and an upstream model is another company's server. So a folder that
is, or lies inside, a well-known place for keys, passwords, tokens or a browser's profile is
not added unless the user confirms it knowing why; nor is a hidden folder (settings and keys
live in them). Below a folder's root, hidden files and folders and the secret places are
never indexed (the walk passes over them): adding a home folder indexes neither `~/.ssh`
nor `~/snap/firefox` (a browser's `logins.json` is a file Parley could read). The system's own
pseudo-filesystems are refused outright: they hold no documents, only devices and the
running processes' secrets.

The walk (server/library/indexer.py) and the cited-source route (server/library/sources.py)
ask the same question of each name below a root (`passed_over_name`), so a citation's path
can never reach a file the walk would not have indexed (`.env`, `.git/config`, a key in
`.ssh`), whatever else says it is there.
"""

from __future__ import annotations

import os
from pathlib import Path

# Relative to the user's home folder.
SECRET_PLACES = (
    ".ssh",
    ".gnupg",
    ".password-store",
    ".pki",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".netrc",
    ".config/gcloud",
    ".config/gh",
    ".local/share/keyrings",
    ".mozilla",
    ".thunderbird",
    ".config/google-chrome",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    "snap/firefox",
    "snap/chromium",
    "Library/Keychains",
    "Library/Application Support/Google/Chrome",
    "Library/Application Support/Firefox",
    "AppData/Roaming/Mozilla",
    "AppData/Local/Google/Chrome",
)
SYSTEM_PLACES = ("/proc", "/sys", "/dev", "/run")
# Folders of tools' data, never the user's documents (their hidden ones are passed over anyway).
IGNORED_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", "venv", ".tox"}


def refusal(folder: Path) -> str | None:
    """Why `folder` (resolved) is never added; None if it may be."""
    for place in SYSTEM_PLACES:
        if _within(folder, Path(place)):
            return f"{folder} is part of the system ({place}), not a folder of documents"
    return None


def warning(folder: Path, home: Path) -> str | None:
    """Why the user should confirm adding `folder` (resolved); None if nothing is amiss."""
    for place in SECRET_PLACES:
        secret = home / place
        if _within(folder, secret):
            where = "" if folder == secret else f", inside {secret}"
            return (
                f"{folder} holds keys, passwords or a browser's data{where}. Its files would "
                "be searchable, and passages of them would be sent to the model without asking."
            )
    hidden = [part for part in folder.parts if part.startswith(".") and part not in (".", "..")]
    if hidden:
        return (
            f"{folder} is a hidden folder ({hidden[0]}): settings and keys often live in one. "
            "Its files would be searchable, and passages of them would be sent to the model "
            "without asking."
        )
    return None


def passed_over(root: Path, home: Path) -> frozenset[str]:
    """The secret places a walk of `root` never enters (all but one that holds `root` itself,
    which the user confirmed adding)."""
    places = (home / place for place in SECRET_PLACES)
    return frozenset(str(place) for place in places if not _within(root, place))


def passed_over_name(name: str, path: str, folder: bool, secret: frozenset[str]) -> str | None:
    """Why a walk below a library folder's root passes over `name` (at `path`, a folder or a
    file), given the root's secret places (`passed_over`); None if the walk goes there."""
    if name.startswith("."):
        return "hidden (settings and keys live in hidden files and folders)"
    if folder and name in IGNORED_DIRS:
        return f"inside {name}, a folder of tools' data"
    if folder and path in secret:
        return "inside a place that holds keys, passwords or a browser's data"
    return None


def passed_over_path(root: str, path: str, home: Path) -> str | None:
    """Why the walk of `root` never reaches the file `path` below it (both absolute and
    normalised): `passed_over_name` asked of each name on the way down, as the walk does."""
    secret = passed_over(Path(root), home)
    names = Path(os.path.relpath(path, root)).parts
    current = root
    for depth, name in enumerate(names):
        current = os.path.join(current, name)
        reason = passed_over_name(name, current, depth < len(names) - 1, secret)
        if reason is not None:
            return reason
    return None


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
