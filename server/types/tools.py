"""The wire of the MCP servers' settings (`GET /api/tools`), and of servers found in other
apps' configurations."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict

if TYPE_CHECKING:
    from server.types import Trust


# "needs_sign_in": a remote server answered 401; it waits for the user to sign in.
ToolServerState = Literal["disabled", "starting", "ready", "error", "needs_sign_in"]
SignInStatus = Literal["needs_sign_in", "waiting_for_browser", "signed_in", "failed"]


class SignInJSON(TypedDict):
    """How signing in to a remote server goes (server/tools/sign_in.py)."""

    status: SignInStatus | None  # None: the server asked for no sign-in (yet)
    issuer: str | None  # the authorization server it wants
    resource: str | None  # what its tokens are for (RFC 8707)
    authorization_url: str | None  # while waiting for the browser: the page to open
    error: str | None  # why the last sign-in failed


class ToolServerOAuthJSON(TypedDict, total=False):
    """How Parley identifies itself when it signs in to one remote server: a client the
    user registered with its authorization server beforehand (`clientId`, with
    `clientSecret` for a confidential one), or the HTTPS URL of a client ID metadata
    document (`clientMetadataUrl`) that names Parley; else Parley registers itself
    dynamically wherever the server allows it."""

    clientId: str
    clientSecret: str
    clientMetadataUrl: str


class ToolServerConfigJSON(TypedDict, total=False):
    """One entry of `mcpServers` in the MCP configuration file (the ecosystem's format):
    `command` (with `args`, `env`, `cwd`) for a server over stdio, or `url` (with
    `headers`) for one over streamable HTTP."""

    command: str
    args: list[str]
    env: dict[str, str]
    cwd: str
    url: str
    headers: dict[str, str]
    disabled: bool
    trust: Literal["ask", "allow"]  # the server's tools: ask before each call (default)
    toolTrust: dict[str, Trust]  # per tool, overriding `trust` (Settings)
    # Seconds a call may run before the user is asked to keep waiting or stop it (issue 41):
    # the server's, and per tool; else Parley's --tool-timeout.
    timeout: float
    toolTimeout: dict[str, float]
    oauth: ToolServerOAuthJSON  # a remote server's sign-in, where the default does not do


class ToolInfoJSON(TypedDict):
    """A tool a server offers, as the model is shown it, and how far it is trusted."""

    name: str  # its own name at the server
    function: str  # the name the model calls it by (`server__tool`)
    description: str
    input_schema: dict[str, object]
    trust: Trust  # effective: its own override, else its server's trust
    trust_override: Trust | None  # set per tool (Settings), or None


class ToolServerJSON(TypedDict):
    """A configured MCP server and how it is doing (`GET /api/tools`)."""

    name: str
    config: ToolServerConfigJSON
    transport: Literal["stdio", "http"] | None  # None: the entry is not valid
    state: ToolServerState
    trust: Literal["ask", "allow"]  # its entry's `trust` ("ask" when not given)
    tools: list[ToolInfoJSON]  # what it offers while ready
    error: str | None  # why it is not ready (invalid entry, failed start, crash)
    stderr_tail: list[str]  # its last lines on stderr (stdio)
    restarts: int  # restarts after crashes since Parley started
    definition_tokens: int  # what its tools' definitions take of a turn's prompt (estimated)
    sign_in: SignInJSON | None  # a remote server's OAuth sign-in; None over stdio


class ToolsJSON(TypedDict):
    """`GET /api/tools`: the MCP configuration and its servers."""

    config_path: str
    config_error: str | None  # the file cannot be read (bad JSON...): no server runs
    servers: list[ToolServerJSON]


class FoundToolServerJSON(TypedDict):
    """An MCP server another app is set up with (`GET /api/tools/found`), in Parley's form,
    its environment and header values masked."""

    name: str  # as that app names it
    suggested_name: str  # a name Parley takes for it
    config: ToolServerConfigJSON
    error: str | None  # why it cannot be added as it is


class FoundToolAppJSON(TypedDict):
    app: str  # "Claude Desktop", "Cursor", "VS Code", "Windsurf"
    path: str  # its file (POST /api/tools/found adds an entry of it by name)
    error: str | None  # why the file cannot be read: none of its servers is listed
    servers: list[FoundToolServerJSON]


class FoundToolsJSON(TypedDict):
    apps: list[FoundToolAppJSON]  # the files found
    looked_in: list[str]  # every place looked in


class ToolsSummaryJSON(TypedDict):
    servers: int
    ready: int
    tools: int  # offered by the ready servers
