"""The wire of the MCP servers' settings (`GET /api/tools`), and of servers found in other
apps' configurations."""

from __future__ import annotations

from typing import Literal, TypedDict

from server.types.attachments import AttachmentJSON

# How far a tool is trusted: "ask" before every call; "chat": ask once per chat (an allow
# then counts for the rest of that chat); "allow" every call; "never" (refused unasked).
Trust = Literal["ask", "chat", "allow", "never"]

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


class ToolEffectJSON(TypedDict, total=False):
    """What a tool can do, in MCP's annotations' words: a server's claim, or the user's
    override of some of it (`toolEffect`; a hint left out keeps the server's)."""

    readOnly: bool  # it changes nothing
    destructive: bool  # a change it makes may destroy something (meaningful when not readOnly)
    openWorld: bool  # it reaches beyond what Parley and the user's machine hold (the web...)


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
    toolEffect: dict[str, ToolEffectJSON]  # per tool, the user's word over its annotations
    # The injection guard (server/agent/guard.py): false turns it off for this server's tools.
    guard: bool
    # Seconds a call may run before the user is asked to keep waiting or stop it:
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
    effect: ToolEffectJSON  # what it can do (all three hints): its override, else its annotations
    effect_override: ToolEffectJSON | None  # the user's word (Settings), or None


class ToolServerJSON(TypedDict):
    """A configured MCP server and how it is doing (`GET /api/tools`)."""

    name: str
    config: ToolServerConfigJSON
    transport: Literal["stdio", "http"] | None  # None: the entry is not valid
    state: ToolServerState
    trust: Literal["ask", "allow"]  # its entry's `trust` ("ask" when not given)
    guard: bool  # the injection guard asks before its tools act on untrusted text (default)
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


class GrantJSON(TypedDict):
    """An allow given on an approval card for the rest of a chat (`GET /api/tools/grants`):
    `scope` "chat" one tool; "server" every tool of the server (`tool` null); "arguments" the
    tool's calls whose string `argument` lies under `under` (a folder)."""

    id: str  # revoked with DELETE /api/tools/grants/{id}
    conversation_id: str
    conversation_title: str | None  # None: the chat has no title (yet)
    server: str
    tool: str | None
    scope: Literal["chat", "server", "arguments"]
    argument: str | None
    under: str | None
    granted_at: float


class GrantsJSON(TypedDict):
    grants: list[GrantJSON]  # oldest first


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


class ResourceJSON(TypedDict):
    """A resource an MCP server offers (`resources/list`), in its own words."""

    uri: str
    name: str
    title: str | None
    description: str | None
    mime: str | None
    size: int | None  # bytes, as the server declares it (not checked until read)


class ResourceTemplateJSON(TypedDict):
    """A family of resources (`resources/templates/list`): an RFC 6570 URI template."""

    uri_template: str
    name: str
    title: str | None
    description: str | None
    mime: str | None


class ResourcesJSON(TypedDict):
    """`GET /api/tools/servers/{name}/resources`."""

    resources: list[ResourceJSON]
    templates: list[ResourceTemplateJSON]


ResourceKind = Literal["text", "image"]


class ResourceContentJSON(TypedDict):
    """A resource read to be shown (`.../resources/read`, a result's link opened): its text
    (at most as much as an attachment gives the model; `note` says what was left out) or
    its image (base64), checked as an attached file is."""

    uri: str
    kind: ResourceKind
    mime: str
    bytes: int
    text: str | None
    chars: int | None
    note: str | None
    data: str | None  # an image's bytes, base64


class ResourceReadJSON(TypedDict):
    """A resource read to be shown: its contents (most resources have one)."""

    contents: list[ResourceContentJSON]


class AttachedResourcesJSON(TypedDict):
    """`POST .../resources/attach`: the attachments a resource became (one for its text,
    one per image), sent with a message by id like any upload."""

    attachments: list[AttachmentJSON]


class PromptArgumentJSON(TypedDict):
    name: str
    title: str | None
    description: str | None
    required: bool


class PromptJSON(TypedDict):
    """A prompt an MCP server offers (`prompts/list`): a slash command of the composer."""

    name: str
    title: str | None
    description: str | None
    arguments: list[PromptArgumentJSON]


class PromptsJSON(TypedDict):
    """`GET /api/tools/servers/{name}/prompts`."""

    prompts: list[PromptJSON]


class PromptMessageJSON(TypedDict):
    role: Literal["user", "assistant"]
    text: str


class PromptResultJSON(TypedDict):
    """`POST /api/tools/servers/{name}/prompts/{prompt}`: the prompt filled in (`prompts/get`)
    for the composer: its messages' text, and its images as attachments (checked as
    uploads are), sent with the message by id."""

    description: str | None
    messages: list[PromptMessageJSON]
    attachments: list[AttachmentJSON]
    note: str | None  # what was left out (a kind of content Parley does not take, cut text)
