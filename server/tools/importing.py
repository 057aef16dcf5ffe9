"""The MCP servers other apps are set up with, offered to import (Settings → MCP servers →
"Import from other apps"): Claude Desktop, Cursor, VS Code and Windsurf keep them in JSON
files of their own, in the ecosystem's format (`mcpServers`; VS Code: `servers`, in its
`mcp.json` or under `"mcp"` in its settings).

Every such file is hostile input: another program writes it, and anything can be put in its
place. So it is only ever one of the known places below the user's home folder, opened one
name at a time without following a link (a link swapped in for `~/.ssh/id_rsa` is refused),
never blocking on a FIFO, at most `ToolLimits.import_file_bytes` read within
`ToolLimits.import_read`; on a worker thread, never on the event loop. A file that cannot be
read is reported with why, and the others are still listed. Each entry is brought to
Parley's form (only the keys Parley runs by) and checked as an entry of Parley's own
(`check_entry`); an entry that is not valid is listed with why, and cannot be added.
Secrets stay on the server: the list shows environment and header values masked, and an
entry is added by its file and name (`entry_to_add`), read again then, not from the list.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from server.errors import ConfigEntryError
from server.limits import ToolLimits
from server.tools.config import check_entry, check_name
from server.types.tools import (
    FoundToolAppJSON,
    FoundToolServerJSON,
    FoundToolsJSON,
    ToolServerConfigJSON,
)

MASK = "••••••"
# What Parley runs an entry by; the other keys of another app's entry are not imported.
KEPT_KEYS = ("command", "args", "env", "cwd", "url", "headers", "disabled")
READ_BLOCK = 64 * 1024

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


@dataclass(frozen=True)
class Place:
    """A file where an app keeps its MCP servers: its path below the home folder, and where
    in the file they are (a key, then a key below it)."""

    app: str
    relative: str
    keys: tuple[str, ...] = ("mcpServers",)


PLACES = [
    Place("Claude Desktop", ".config/Claude/claude_desktop_config.json"),
    Place("Claude Desktop", "Library/Application Support/Claude/claude_desktop_config.json"),
    Place("Claude Desktop", "AppData/Roaming/Claude/claude_desktop_config.json"),
    Place("Cursor", ".cursor/mcp.json"),
    *(
        Place("VS Code", f"{base}/Code/User/{name}", keys)
        for base in (".config", "Library/Application Support", "AppData/Roaming")
        for name, keys in (("mcp.json", ("servers",)), ("settings.json", ("mcp", "servers")))
    ),
    Place("Windsurf", ".codeium/windsurf/mcp_config.json"),
]


def known_path(home: Path, path: str) -> Place | None:
    """The place `path` is, if it is one of the known files (nothing else is ever read)."""
    return next((p for p in PLACES if str(home / p.relative) == path), None)


def find_all(home: Path, limits: ToolLimits) -> FoundToolsJSON:
    """Every known file that exists below `home`, with its servers (blocking: run it on a
    worker thread)."""
    apps: list[FoundToolAppJSON] = []
    for place in PLACES:
        path = home / place.relative
        try:
            servers = _servers_in(home, place, limits)
        except FileNotFoundError:
            continue
        except ConfigEntryError as exc:
            apps.append({"app": place.app, "path": str(path), "error": str(exc), "servers": []})
            continue
        found = [_listed(name, value) for name, value in servers.items()]
        apps.append({"app": place.app, "path": str(path), "error": None, "servers": found})
    return {"apps": apps, "looked_in": [str(home / p.relative) for p in PLACES]}


def entry_to_add(home: Path, path: str, name: str, limits: ToolLimits) -> ToolServerConfigJSON:
    """The entry `name` of the known file `path`, read again now, in Parley's form and
    checked (blocking). Raises LookupError (no such file or entry), ConfigEntryError."""
    place = known_path(home, path)
    if place is None:
        raise LookupError(f"{path} is not a file Parley imports MCP servers from")
    try:
        servers = _servers_in(home, place, limits)
    except FileNotFoundError as exc:
        raise LookupError(f"{path} is gone") from exc
    if name not in servers:
        raise LookupError(f"{path} has no MCP server named {name!r}")
    return _runnable(servers[name])


def _listed(name: str, value: object) -> FoundToolServerJSON:
    config = _parley_form(value) if isinstance(value, dict) else {}
    error: str | None = None
    try:
        _runnable(value)
    except ConfigEntryError as exc:
        error = str(exc)
    for key in ("env", "headers"):
        if isinstance(config.get(key), dict):
            config[key] = {k: MASK for k in config[key]}
    shown = cast(ToolServerConfigJSON, config)
    return {"name": name, "suggested_name": suggested_name(name), "config": shown, "error": error}


def suggested_name(name: str) -> str:
    """A name Parley takes for a server named `name` in another app ("My files" →
    "My-files")."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-._")[: ToolLimits.server_name_chars]
    try:
        return check_name(cleaned)
    except ConfigEntryError:
        return "server"


def _parley_form(value: dict[str, Any]) -> dict[str, Any]:
    """Another app's entry with only the keys Parley runs by (Windsurf's `serverUrl` is
    `url`)."""
    entry = {k: v for k, v in value.items() if k in KEPT_KEYS}
    if "url" not in entry and "serverUrl" in value:
        entry["url"] = value["serverUrl"]
    return entry


def _runnable(value: object) -> ToolServerConfigJSON:
    """Another app's entry as Parley runs it. Raises ConfigEntryError saying why it cannot
    be run as it is."""
    if not isinstance(value, dict):
        raise ConfigEntryError("an entry must be an object")
    entry = check_entry(_parley_form(value))
    if "${" in json.dumps(entry):
        raise ConfigEntryError(
            "it uses variables (${...}) that only its own app fills in: add it by hand"
        )
    return entry


def _servers_in(home: Path, place: Place, limits: ToolLimits) -> dict[str, object]:
    """The servers of the file at `place`. Raises FileNotFoundError (no file),
    ConfigEntryError (saying why it cannot be used)."""
    text = _read(home, place.relative, limits)
    try:
        document: object = json.loads(_without_comments(text), parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise ConfigEntryError(f"it is not valid JSON: {exc}") from exc
    for key in place.keys:
        document = document.get(key, {}) if isinstance(document, dict) else None
    if not isinstance(document, dict):
        raise ConfigEntryError(f"its '{'.'.join(place.keys)}' is not an object")
    return cast(dict[str, object], document)


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _read(home: Path, relative: str, limits: ToolLimits) -> str:
    """The file's text, opened from `home` down one name at a time with no link followed.
    Raises FileNotFoundError, ConfigEntryError."""
    try:
        fd = _open_below(str(home), Path(relative).parts)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
            raise ConfigEntryError("it is a link, or inside a linked folder") from exc
        if exc.errno == errno.ENOENT:
            raise FileNotFoundError(relative) from exc
        raise ConfigEntryError(f"it cannot be read ({exc.strerror or exc})") from exc
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigEntryError("it is not a regular file")
        data = _read_bounded(fd, limits.import_file_bytes, limits.import_read)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigEntryError("it is not UTF-8 text") from exc


def _open_below(home: str, parts: tuple[str, ...]) -> int:
    if not _NOFOLLOW:  # (Windows) each step checked as a link instead
        return _open_checked(Path(home), parts)
    folder = os.open(home, os.O_RDONLY | _DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for name in parts[:-1]:
            below = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=folder)
            os.close(folder)
            folder = below
        return os.open(parts[-1], _FLAGS, dir_fd=folder)
    finally:
        os.close(folder)


def _open_checked(home: Path, parts: tuple[str, ...]) -> int:
    path = home
    for name in parts:
        path = path / name
        if path.is_symlink():
            raise OSError(errno.ELOOP, "a link", str(path))
    return os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))


def _read_bounded(fd: int, limit: int, time_limit: float) -> bytes:
    os.set_blocking(fd, True)  # a regular file: reads are ordinary from here
    deadline = time.monotonic() + time_limit
    pieces: list[bytes] = []
    total = 0
    while piece := os.read(fd, min(READ_BLOCK, limit + 1 - total)):
        pieces.append(piece)
        total += len(piece)
        if total > limit:
            raise ConfigEntryError(f"it is larger than {limit // 1000:,} kB")
        if time.monotonic() > deadline:
            raise ConfigEntryError(f"it took longer than {time_limit:g} s to read")
    return b"".join(pieces)


def _without_comments(text: str) -> str:
    """JSON with comments and trailing commas (VS Code's settings) as plain JSON; plain JSON
    comes out as it was."""
    out: list[str] = []
    i, n = 0, len(text)
    in_string = False
    while i < n:
        c = text[i]
        if in_string:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
            out.append(c)
        elif text.startswith("//", i):
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        elif c in "}]":
            _drop_trailing_comma(out)
            out.append(c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _drop_trailing_comma(out: list[str]) -> None:
    at = len(out) - 1
    while at >= 0 and out[at].isspace():
        at -= 1
    if at >= 0 and out[at] == ",":
        del out[at]
