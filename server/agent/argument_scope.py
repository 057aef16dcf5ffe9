"""Whether a call's string argument lies under a prefix the user fixed (an allow for "calls
whose path is under ~/notes": server/agent/grants.py).

Read as a path, component by component, and on the careful side: a value that could mean
somewhere else once a tool resolves it is not under anything. So `..` (also percent-encoded,
or in compatibility forms such as fullwidth dots) never matches: `notes/link/..` is not
`notes` when `link` is a symlink, so it cannot be normalised away. Both `/` and `\\` separate
(a server on Windows, or a backslash slipped into a POSIX path); `notes-old` is not under
`notes`. When both are absolute, the path as this machine resolves it (its symlinks followed)
must lie under the prefix as resolved too: a link inside the folder that points outside does
not take a call out of it. A server on another machine resolves its own links, which Parley
cannot see: the lexical rules still hold there.
"""

from __future__ import annotations

import os
import re
import unicodedata
from urllib.parse import unquote

from server.limits import Limits

_SEPARATORS = re.compile(r"[/\\]")


def _components(path: str) -> tuple[bool, list[str]] | None:
    """Whether the path is absolute, and its components (`.` and empty ones dropped);
    None when it cannot be read safely (`..`, a control character)."""
    if not path or any(unicodedata.category(c) == "Cc" for c in path):
        return None
    parts: list[str] = []
    for part in _SEPARATORS.split(path):
        if part in ("", "."):
            continue
        decoded = unicodedata.normalize("NFKC", unquote(part))
        if decoded in ("..", ".") or _SEPARATORS.search(decoded):
            return None  # a way up, or a separator hidden in an encoding
        parts.append(part)
    return bool(_SEPARATORS.match(path)), parts


def check_prefix(prefix: str) -> str:
    """A prefix as a grant keeps it (ValueError saying what is wrong): a path with at least
    one component, no `..`, no control characters."""
    most = Limits.max_grant_prefix_chars
    if len(prefix) > most:
        raise ValueError(f"the prefix is longer than {most} characters")
    read = _components(prefix.strip())
    if read is None or not read[1]:
        raise ValueError("the prefix must be a folder's path, without '..'")
    absolute, parts = read
    return ("/" if absolute else "") + "/".join(parts)


def lies_under(value: object, prefix: str) -> bool:
    """Whether `value` (a call's argument) is the path `prefix` or lies under it."""
    if not isinstance(value, str):
        return False
    read, under = _components(value), _components(prefix)
    if read is None or under is None or read[0] != under[0]:
        return False
    if read[1][: len(under[1])] != under[1]:
        return False
    if read[0] and os.sep == "/":
        return _resolved_under(value, prefix)
    return True


def _resolved_under(value: str, prefix: str) -> bool:
    """The same, with this machine's symlinks followed on both sides."""
    try:
        resolved, folder = os.path.realpath(value), os.path.realpath(prefix)
    except (OSError, ValueError):
        return False
    return resolved == folder or resolved.startswith(folder.rstrip("/") + "/")
