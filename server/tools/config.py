"""The MCP configuration file, in the ecosystem's format (Claude Desktop, Cursor, VS Code):

    {"mcpServers": {"NAME": {"command": "...", "args": [...], "env": {...}, "cwd": "..."},
                    "OTHER": {"url": "https://...", "headers": {...}}}}

`command` runs a server over stdio; `url` reaches one over streamable HTTP. `"disabled":
true` keeps an entry without running it. `"trust": "ask"` (the default) or `"allow"`: whether
a call to its tools waits for the user's approval; `"toolTrust": {"TOOL": "ask" | "chat" |
"allow" | "never"}` overrides that per tool (Settings writes it; server/agent/approvals.py).
`"toolEffect": {"TOOL": {"readOnly": bool, "destructive": bool, "openWorld": bool}}`: the
user's word over what a tool's annotations claim it can do (server/tools/tool_effects.py);
`"guard": false` turns the injection guard off for the server (server/agent/guard.py).
`"timeout": SECONDS` and `"toolTimeout": {"TOOL": SECONDS}`: how long a call runs before the
user is asked whether to keep waiting (else Parley's `--tool-timeout`).
`"oauth": {"clientId": "...", "clientSecret": "..."}` signs in to a remote server as a client
registered with its authorization server beforehand; `"oauth": {"clientMetadataUrl":
"https://..."}` as the client a metadata document there names (server/tools/sign_in.py).
Other keys (of an entry or of the file) are kept as they are when Parley writes the file. An
entry that is not valid is reported with why, and the others still run; a file that cannot be
read at all runs no server at start, and is never written over (see McpConfigFile). Edits
made by hand while Parley runs are picked up (server/tools/manager.py watches the file).

No file means no servers: a new data dir has none, and the first change from Settings makes
it. A file there must be an object with `mcpServers`: an empty one, `{}` or another app's
shape is an error like a broken file (an editor saving in place empties the file first, and a
reader catching that moment must not stop every server, nor write over the edit).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from server.errors import ConfigChangingError, ConfigEntryError
from server.limits import ToolLimits
from server.tools.entry_fields import check_oauth, check_text, string, string_map, strings
from server.tools.file_version import (
    Signature,
    Version,
    read_steady,
    replace_version,
    signature,
    signature_written,
)
from server.tools.tool_effects import check_effect, check_tool_effects
from server.types import Trust
from server.types.tools import ToolEffectJSON, ToolServerConfigJSON, ToolServerOAuthJSON

SERVER_TRUSTS = ("ask", "allow")
TOOL_TRUSTS: tuple[Trust, ...] = ("ask", "chat", "allow", "never")
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class ServerEntry:
    """One configured server, validated."""

    name: str
    config: ToolServerConfigJSON  # as in the file
    transport: Literal["stdio", "http"] | None = None  # None: not valid (see `error`)
    error: str | None = None

    @property
    def disabled(self) -> bool:
        return bool(self.config.get("disabled"))

    @property
    def command(self) -> str:
        return self.config.get("command", "")

    @property
    def args(self) -> list[str]:
        return self.config.get("args", [])

    @property
    def env(self) -> dict[str, str]:
        return self.config.get("env", {})

    @property
    def cwd(self) -> str | None:
        return self.config.get("cwd")

    @property
    def url(self) -> str:
        return self.config.get("url", "")

    @property
    def headers(self) -> dict[str, str]:
        return self.config.get("headers", {})

    @property
    def oauth(self) -> ToolServerOAuthJSON:
        return self.config.get("oauth", {})

    @property
    def trust(self) -> Literal["ask", "allow"]:
        """Its tools' trust: "ask" unless the entry says "allow" (an invalid entry runs
        nothing, and shows as "ask")."""
        return "allow" if self.config.get("trust") == "allow" else "ask"

    def tool_trust(self, tool: str) -> Trust | None:
        """The tool's own override, if Settings set one."""
        trusts = self.config.get("toolTrust")
        found = trusts.get(tool) if isinstance(trusts, dict) else None
        return found if found in TOOL_TRUSTS else None

    def effective_trust(self, tool: str) -> Trust:
        return self.tool_trust(tool) or self.trust

    def tool_effect(self, tool: str) -> ToolEffectJSON | None:
        """The user's override of what the tool can do, if Settings set one."""
        effects = self.config.get("toolEffect")
        found = effects.get(tool) if isinstance(effects, dict) else None
        return found or None

    @property
    def guard(self) -> bool:
        """Whether the injection guard asks before its tools act on untrusted text (on
        unless the entry says `"guard": false`)."""
        return self.config.get("guard") is not False

    def timeout(self, tool: str) -> float | None:
        """Seconds a call of the tool runs before the user is asked (None: Parley's)."""
        per_tool = self.config.get("toolTimeout")
        found = per_tool.get(tool) if isinstance(per_tool, dict) else None
        return found if _seconds(found) else (self.config.get("timeout") or None)


def check_name(name: str) -> str:
    if not (0 < len(name) <= ToolLimits.server_name_chars and NAME_PATTERN.match(name)):
        raise ConfigEntryError(
            f"a server's name must be 1-{ToolLimits.server_name_chars} letters, digits, '_', '-' "
            "or '.', starting with a letter or digit"
        )
    return name


def check_entry(value: object) -> ToolServerConfigJSON:
    """An entry as Parley can run it; raises ConfigEntryError naming what is wrong."""
    if not isinstance(value, dict):
        raise ConfigEntryError("an entry must be an object")
    entry = cast(dict[str, Any], value)
    has_command, has_url = "command" in entry, "url" in entry
    if has_command == has_url:
        raise ConfigEntryError("give either 'command' (a server over stdio) or 'url' (over HTTP)")
    if has_command:
        string(entry, "command", required=True)
        strings(entry, "args")
        string_map(entry, "env")
        string(entry, "cwd")
    else:
        url = string(entry, "url", required=True)
        if not re.match(r"^https?://[^\s/]+", url):
            raise ConfigEntryError("'url' must be an http:// or https:// address")
        string_map(entry, "headers")
        check_oauth(entry)
    if "disabled" in entry and not isinstance(entry["disabled"], bool):
        raise ConfigEntryError("'disabled' must be true or false")
    if "trust" in entry and entry["trust"] not in SERVER_TRUSTS:
        raise ConfigEntryError(''''trust' must be "ask" or "allow"''')
    if "guard" in entry and not isinstance(entry["guard"], bool):
        raise ConfigEntryError("'guard' must be true or false")
    _tool_trusts(entry)
    check_tool_effects(entry)
    _timeouts(entry)
    check_text(entry, "the entry")
    return cast(ToolServerConfigJSON, entry)


def _seconds(value: object) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and 0 < value <= ToolLimits.max_call_timeout
    )


def _timeouts(entry: dict[str, Any]) -> None:
    if "timeout" in entry and not _seconds(entry["timeout"]):
        raise ConfigEntryError(
            f"'timeout' must be seconds, above 0 and at most {ToolLimits.max_call_timeout:g}"
        )
    value = entry.get("toolTimeout", {})
    if not isinstance(value, dict):
        raise ConfigEntryError("'toolTimeout' must be an object of tool names and seconds")
    for tool, seconds in value.items():
        check_tool_name(tool)
        if not _seconds(seconds):
            raise ConfigEntryError(f"'toolTimeout.{tool}' must be seconds, above 0")


def _tool_trusts(entry: dict[str, Any]) -> None:
    value = entry.get("toolTrust", {})
    if not isinstance(value, dict):
        raise ConfigEntryError("'toolTrust' must be an object of tool names and trusts")
    for tool, trust in value.items():
        check_tool_name(tool)
        if trust not in TOOL_TRUSTS:
            raise ConfigEntryError(
                f"'toolTrust.{tool}' must be one of " + ", ".join(f'"{t}"' for t in TOOL_TRUSTS)
            )


def check_tool_name(tool: str) -> str:
    if not (0 < len(tool) <= ToolLimits.tool_name_chars) or "\x00" in tool:
        raise ConfigEntryError(f"a tool's name must be 1-{ToolLimits.tool_name_chars} characters")
    return tool


def entry_from(name: str, value: object) -> ServerEntry:
    """A ServerEntry; an invalid one carries its error (and runs nothing)."""
    try:
        check_name(name)
        config = check_entry(value)
    except ConfigEntryError as exc:
        shown = cast(ToolServerConfigJSON, value if isinstance(value, dict) else {})
        return ServerEntry(name, shown, None, str(exc))
    return ServerEntry(name, config, "stdio" if "command" in config else "http")


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


class McpConfigFile:
    """The configuration file, the user's as much as Parley's: people edit it by hand, also
    while Parley runs. So each change from Settings is made to the file as it is
    on disk now (read again under the lock, then written whole, atomically); a file broken
    on disk is never written over (the change is refused, saying why); a symlink stays a
    symlink and the file keeps its mode. The write lands only over the file as read
    (server/tools/file_version.py): a save by hand in between makes the change again, to
    the file as saved. `changed` tells the tool manager's watch that the file was edited
    since it was last read or written."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.error: str | None = None  # why the file cannot be read; then nothing runs
        self._document: dict[str, Any] = {}
        self._seen: Signature | None = None  # the file as last read or written
        self._version: Version | None = None  # the file as last read (None: unreadable)
        self._lock = threading.Lock()
        self.reload()

    def reload(self) -> None:
        """Read the file again (blocking: call it from a worker thread)."""
        with self._lock:
            self._load()

    def changed(self) -> bool:
        """Whether the file on disk is not the one last read or written (blocking)."""
        return signature(self.path) != self._seen

    def _load(self) -> None:
        self._seen = signature(self.path)  # first: an edit made while reading is seen again
        self._document, self._version = {}, None
        try:
            version = read_steady(self.path, ToolLimits.config_bytes, ToolLimits.config_attempts)
        except OSError as exc:
            self.error = f"cannot read {self.path}: {exc}"
            return
        if version.data is None:
            self._document, self._version, self.error = {"mcpServers": {}}, version, None
            return
        try:
            text = version.data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            self.error = f"cannot read {self.path}: {exc}"
            return
        expected = f"{self.path}: expected an object with 'mcpServers' (an object)"
        if not text.strip():
            self.error = f"{expected}, and the file is empty"
            return
        try:
            document = json.loads(text, parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            self.error = f"{self.path} is not valid JSON: {exc}"
            return
        servers = document.get("mcpServers") if isinstance(document, dict) else None
        if not isinstance(servers, dict):
            self.error = expected
            return
        self._document, self._version, self.error = document, version, None

    def entries(self) -> list[ServerEntry]:
        servers: dict[str, object] = self._document.get("mcpServers", {})
        return [entry_from(name, value) for name, value in servers.items()]

    def put(self, name: str, config: ToolServerConfigJSON) -> ServerEntry:
        """Add or replace an entry (validated: raises ConfigEntryError). Raises OSError."""
        check_name(name)
        check_entry(config)

        def edit(servers: dict[str, Any]) -> bool:
            servers[name] = dict(config)
            return True

        self._change(edit)
        return entry_from(name, config)

    def set_tool_trust(self, name: str, tool: str, trust: Trust | None) -> ServerEntry | None:
        """Set (or with None, clear) one tool's trust in a server's entry; None if there is
        no entry of that name. Raises ConfigEntryError, OSError."""
        if trust is not None and trust not in TOOL_TRUSTS:
            raise ConfigEntryError(
                "'trust' must be one of " + ", ".join(f'"{t}"' for t in TOOL_TRUSTS) + " or null"
            )
        return self.set_per_tool(name, tool, {"toolTrust": trust})

    def set_per_tool(self, name: str, tool: str, values: dict[str, object]) -> ServerEntry | None:
        """Set (None: clear) one tool's values of per-tool keys (`toolTrust`, `toolEffect`)
        in a server's entry, in one write; None if there is no entry of that name. Raises
        ConfigEntryError, OSError."""
        check_tool_name(tool)
        if values.get("toolEffect") is not None:
            check_effect(values["toolEffect"], "'effect'")
        found: list[object] = []

        def edit(servers: dict[str, Any]) -> bool:
            entry = servers.get(name)
            if not isinstance(entry, dict):
                return False
            for key, value in values.items():
                per_tool = entry.setdefault(key, {})
                if not isinstance(per_tool, dict):
                    raise ConfigEntryError(f"'{key}' must be an object of tool names")
                if value is None:
                    per_tool.pop(tool, None)
                    if not per_tool:
                        entry.pop(key)
                else:
                    per_tool[tool] = value
            found.append(entry)
            return True

        self._change(edit)
        return entry_from(name, found[-1]) if found else None  # as last written

    def set_guard(self, name: str, on: bool) -> ServerEntry | None:
        """Turn the injection guard on (the default: the key is dropped) or off for a server;
        None if there is no entry of that name. Raises ConfigEntryError, OSError."""
        found: list[dict[str, Any]] = []

        def edit(servers: dict[str, Any]) -> bool:
            entry = servers.get(name)
            if not isinstance(entry, dict):
                return False
            if on:
                entry.pop("guard", None)
            else:
                entry["guard"] = False
            found.append(entry)
            return True

        self._change(edit)
        return entry_from(name, found[-1]) if found else None

    def remove(self, name: str) -> bool:
        """Remove an entry; False if there was none. Raises OSError."""
        return self._change(lambda servers: servers.pop(name, None) is not None)

    def _change(self, edit: Callable[[dict[str, Any]], bool]) -> bool:
        """Apply `edit` to the file as it is on disk now, and write it if `edit` says it
        changed something; what `edit` said. Made again (read, edited, written) while the
        file is saved by hand between the read and the write; at most
        `ToolLimits.config_attempts` times, then refused."""
        with self._lock:
            for _ in range(ToolLimits.config_attempts):
                self._load()
                if self.error is not None or self._version is None:
                    raise ConfigEntryError(
                        f"the configuration file is not changed, because it cannot be read as "
                        f"it is on disk now ({self.error}); fix it by hand, or move it away"
                    )
                document = json.loads(json.dumps(self._document))  # a copy, changed then written
                if not edit(document["mcpServers"]):
                    return False
                text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
                written = replace_version(self.path, self._version, text.encode("utf-8"))
                if written is not None:
                    self._document, self._seen = document, signature_written(self.path, written)
                    return True
            raise ConfigChangingError(
                f"the configuration file is not changed, because it was saved again each time "
                f"Parley read it ({ToolLimits.config_attempts} times): nothing in it was lost; "
                f"try again once it is no longer being edited"
            )
