"""The wire: shapes of the JSON the server stores and serves, one definition for both sides.

The desktop imports this package (and only a few other modules, see tests/test_layering.py),
so it holds nothing but types and the wire's own rules read from them (`continuable`): no
imports beyond `typing`. The wire of a streamed reply is its module `chunks`.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from server.types.attachments import AttachmentJSON as AttachmentJSON
from server.types.library import (
    LibraryProgressJSON,
)
from server.types.tools import (
    ToolsSummaryJSON,
)
from server.types.tools import (
    Trust as Trust,
)

Role = Literal["system", "user", "assistant", "tool"]
MessageRole = Literal["user", "assistant"]  # what a stored message is
Status = Literal["streaming", "completed", "interrupted", "error"]
EndedBy = Literal["client_hangup", "shutdown", "error", "crash"]
# "tool_calls": the model asked for tools (a step of a turn; the whole reply of a /v1 call).
FinishReason = Literal["stop", "length", "tool_calls"]
TurnKind = Literal["send", "edit", "regenerate", "continue"]  # how a turn starts
# The kinds of turn that bring a new user message (its text and files).
NEW_MESSAGE_KINDS: tuple[TurnKind, ...] = ("send", "edit")


def continuable(status: Status, finish_reason: FinishReason | None) -> bool:
    """Whether a reply (with some text, ending its branch) can be continued in place: it was
    stopped, interrupted, cut by an error, or cut at its length limit."""
    return status in ("interrupted", "error") or (
        status == "completed" and finish_reason == "length"
    )


# "awaiting_approval": the call waits for the user's decision; "denied": it was
# not run, because the user denied it or their settings never allow that tool.
# A step's `result` when it was never run (docs/api.md, "Asking before a tool acts"): the
# agent writes them, storage and imports write the one a crash leaves.
NOT_APPROVED = "Not run: the turn ended while this call awaited approval."
NOT_STARTED = "Not run: the turn ended before this call began."
NOT_APPROVED_AT_CRASH = "Not run: Parley stopped while this call awaited approval."
DENIED = "Denied by the user: this call was not run."
NEVER_ALLOWED = "Not allowed: the user's settings never allow this tool, so this call was not run."
ToolStatus = Literal["running", "completed", "error", "interrupted", "awaiting_approval", "denied"]
# Statuses of a step that has not ended yet.
OPEN_STATUSES: tuple[ToolStatus, ...] = ("running", "awaiting_approval")
Decision = Literal["allow", "deny"]
# How far an allow reaches (server/agent/grants.py): this call; this tool for this chat;
# every tool of its server for this chat; this tool's calls in this chat whose named string
# argument lies under a prefix the user fixed (a folder).
Remember = Literal["once", "chat", "server", "arguments"]
ModelState = Literal["unloaded", "loading", "ready", "error"]
# Where a local model's engine is (server/models/residency.py): "busy" is loaded and used by
# a reply (its own, a sub-agent's or a compaction's), between its model calls too.
ModelLifecycle = Literal["not_loaded", "loading", "loaded", "busy"]
# How a stopped reply was continued: "prefix" (the model went on from its own partial text),
# "fallback" (the backend cannot do that: the model was asked to go on, and may repeat).
Continued = Literal["prefix", "fallback"]

# Token counts as reported by a backend (OpenAI's names: prompt_tokens, completion_tokens,
# total_tokens) plus Parley's own: completion_tokens_estimated (1 when counted by deltas),
# context_dropped_messages, ttft_ms and tokens_per_s.
Usage = dict[str, int | float]


class ToolFunctionJSON(TypedDict):
    name: str
    arguments: str  # JSON text, as the model wrote it


class ToolCallJSON(TypedDict):
    """A tool call in OpenAI's shape (an assistant message's `tool_calls`, a chunk's delta)."""

    id: str
    type: Literal["function"]
    function: ToolFunctionJSON


class ImageJSON(TypedDict):
    """An image a user message carries to the model: its attachment, and once read for the
    model call (server/attachments/images.py) its `url`, a data: URL."""

    id: str
    name: str
    mime: str
    url: NotRequired[str]


class ChatMessage(TypedDict):
    role: Role
    content: str
    tool_calls: NotRequired[list[ToolCallJSON]]  # assistant: the calls it made
    tool_call_id: NotRequired[str]  # tool: the call this message answers
    # A stored reply's parts, when it has tool steps: Parley's own, turned into its calls and
    # their results (or dropped) before any backend sees the message (server/agent/history.py).
    parts: NotRequired[list[PartJSON]]
    # A user message's images: sent as OpenAI `image_url` parts once read.
    images: NotRequired[list[ImageJSON]]


class TextPartJSON(TypedDict):
    type: Literal["text"]
    text: str


# Where text the user did not write came into a turn's context (server/agent/provenance.py):
# a tool's result, a passage of their documents, an attached file, an MCP resource attached,
# a sub-agent's result, a message imported from another chat.
SourceKind = Literal["tool_result", "document", "attachment", "resource", "sub_agent", "imported"]


class SourceJSON(TypedDict):
    """One piece of text in a turn's context that the user did not write."""

    kind: SourceKind
    label: str  # a short description in words ("the result of fetch(url=…) of web")
    excerpt: str  # the start of the text (bounded)
    server: NotRequired[str]  # a tool's result: its server, tool and call
    tool: NotRequired[str]
    call_id: NotRequired[str]
    path: NotRequired[str]  # a document's or an attached file's name
    message_id: NotRequired[str]  # the stored message that holds it (an earlier turn's)


class GuardJSON(TypedDict):
    """Why the injection guard asked before a call (server/agent/guard.py): in words, and the
    text the user did not write that the model had read by then (the latest first)."""

    reason: str
    sources: list[SourceJSON]


class AllowedJSON(TypedDict):
    """Who let a call run, and how far that allow reached (saved with its step): `by` "you"
    on its approval card, "grant" an allow given earlier in the chat, "trust" the tool's
    trust in the settings ("Always allow"; then `scope` is "always"). `argument` and `under`
    with the scope "arguments": the argument and the prefix its value lay under."""

    by: Literal["you", "grant", "trust"]
    scope: Literal["once", "chat", "server", "arguments", "always"]
    argument: NotRequired[str]
    under: NotRequired[str]


class ToolPartJSON(TypedDict):
    """One tool step of a reply: what was called, and how it went."""

    type: Literal["tool"]
    id: str  # the model's call id
    server: str  # the MCP server's name in the configuration
    name: str  # the tool's own name at that server
    arguments: str  # JSON text, as the model wrote it
    status: ToolStatus
    result: str | None  # the result's text (capped), or what went wrong
    started_at: float
    ended_at: float | None
    read_only: NotRequired[bool]  # the tool says it changes nothing (MCP's readOnlyHint)
    # The injection guard asked before this call: why, and what the model had read.
    guard: NotRequired[GuardJSON]
    allowed: NotRequired[AllowedJSON]  # who let it run, under which scope (absent: not run)
    progress: NotRequired[ProgressJSON]  # what a long call's tool last reported
    overdue: NotRequired[float]  # seconds it had run when the user was asked (while asked)
    agent: NotRequired[AgentPartJSON]  # the sub-agent this step ran (the `delegate` tool)
    # What its MCP server asked the user during the call (elicitation), in the order asked.
    questions: NotRequired[list[QuestionJSON]]
    # Resources its result links to (MCP `resource_link`), opened only through the step's
    # own server (POST /api/conversations/{id}/messages/{mid}/links).
    links: NotRequired[list[ResourceLinkJSON]]


class ResourceLinkJSON(TypedDict):
    """A resource a tool's result links to (MCP `resource_link`), as its server named it."""

    uri: str
    name: str
    title: str | None
    description: str | None
    mime: str | None
    size: int | None  # bytes, as the server declares it (not checked until read)


# How an MCP server asks (elicitation): a form drawn from a schema, or a URL to visit.
QuestionMode = Literal["form", "url"]
QuestionAction = Literal["accept", "decline", "cancel"]
# "asked": waiting for the user; "cancel" is also what a stop, a hang-up, shutdown or a
# crash answers for them.
QuestionState = Literal["asked", "accept", "decline", "cancel"]


class QuestionJSON(TypedDict):
    """A question a tool's MCP server asked the user during its call (MCP elicitation), kept
    in the call's step: what was asked and how it was answered."""

    id: str  # answered with POST /api/conversations/{id}/questions/{question_id}
    mode: QuestionMode
    message: str  # the server's own words
    # form: the fields asked for (MCP's restricted JSON Schema: a flat object of primitives)
    schema: NotRequired[dict[str, object]]
    url: NotRequired[str]  # url: where the server asks the user to go (never opened by Parley)
    state: QuestionState
    content: NotRequired[dict[str, object]]  # an accepted form's answer
    asked_at: float
    answered_at: float | None


# How deep a stored reply's sub-agents (a tool part's `agent.parts`) are read, at most.
MAX_AGENT_DEPTH = 8


class ProgressJSON(TypedDict):
    """A long call's progress as its tool reports it (MCP progress notifications)."""

    progress: float
    total: float | None
    message: str | None


class AgentPartJSON(TypedDict):
    """A sub-agent a step handed a task to (the `delegate` tool): what it was asked and what it did.
    Its text and steps are parts like a reply's; its result is the step's `result`."""

    task: str
    instructions: str | None
    model: str
    parts: list[PartJSON]


class ActedJSON(TypedDict):
    """A tool call a stop cut while it ran: it may have acted already."""

    server: str
    name: str
    arguments: str


class EndedJSON(TypedDict):
    """What a stop ended (the receipt of a stopped reply; `parley.ended` on the wire): the
    model calls, tool calls, sub-agents, approval waits and servers' questions that were under
    way, and the calls that had started and may have acted (their tool does not say it is
    read-only)."""

    model_calls: int
    tool_calls: int
    sub_agents: int
    approvals: int
    questions: NotRequired[int]  # MCP servers' questions waiting for the user (absent: older)
    may_have_acted: list[ActedJSON]


class CitationPartJSON(TypedDict):
    """A source the reply cited as [n]: a passage of the user's documents."""

    type: Literal["citation"]
    n: int
    path: str
    page: int | None  # a PDF's page (1-based)
    lines: list[int] | None  # [first, last] lines of a text file
    quote: str  # the start of the passage
    # False: a passage put in the prompt ("Use my documents") that the reply did not cite,
    # listed so the user sees what the model was given; absent: cited.
    cited: NotRequired[bool]


PartJSON = TextPartJSON | ToolPartJSON | CitationPartJSON


class MessageJSON(TypedDict):
    id: str
    conversation_id: str
    role: MessageRole
    content: str  # the reply's plain text: its text parts, in order
    parts: list[PartJSON]  # text and tool steps, in order
    status: Status
    ended_by: EndedBy | None
    error: str | None
    model: str | None
    created_at: float
    completed_at: float | None
    usage: Usage | None  # of the reply's last generation
    parent_id: str | None  # the message it follows (None: the first)
    continued: Continued | None  # how it was last continued, if it was
    # Why a completed reply's model stopped ("length": cut at its token limit); else None.
    finish_reason: FinishReason | None
    # Where a message is read (a branch, one message): the ids of the messages that share its
    # parent (itself included; other versions of it), in the order written, and its place.
    siblings: NotRequired[list[str]]
    sibling_index: NotRequired[int]
    ended: NotRequired[EndedJSON]  # a stopped reply: what the stop ended
    attachments: NotRequired[list[AttachmentJSON]]  # a user message's files


class SummaryJSON(TypedDict):
    """Earlier messages summarised (compaction): the model is given `content` in place of the
    branch's messages up to `through_id`; they stay in the chat, shown and searched."""

    id: str
    through_id: str  # the last message it covers
    content: str
    model: str | None  # the model that wrote it (None: the user edited it)
    created_at: float
    updated_at: float


class ContextJSON(TypedDict):
    """A chat's context meter (`GET /api/conversations/{id}/context`): what the next
    turn would give the model, in tokens."""

    model: str
    limit: int | None  # the model's context (None: not known)
    budget: int | None  # the prompt's room in it (a reply's room kept): compaction begins above
    estimated: bool  # counted without the model's tokenizer
    used: int
    system: int  # the system prompt, with the summary in force and the saved memory
    memory: int  # the saved memory's share of `system` (server/memory/): 0 for none
    history: int  # the messages the model is given
    tools: int  # the tools' definitions offered
    # what the passages "Use my documents" puts in the next prompt would take, estimated as
    # those the last question is given (0 when it is off, the library holds nothing, or none
    # matches; never more than the room three passages may take)
    documents: int
    messages: int  # how many messages the model is given
    summarised: int  # how many messages the summary stands for
    summary_id: str | None


class ChatParams(TypedDict, total=False):
    """A conversation's own sampling parameters (absent: the backend's default)."""

    temperature: float
    top_p: float
    max_tokens: int
    seed: int


class SearchMatch(TypedDict):
    message_id: str | None
    snippet: str


class ConversationJSON(TypedDict):
    id: str
    title: str
    model: str | None
    system: str | None
    tools: bool  # the model may call the configured tools in this conversation
    tool_servers: list[str] | None  # the MCP servers whose tools it offers (None: every one)
    documents: bool  # its model is given the user's documents ("Use my documents"): passages
    # in the prompt, and the search_documents tool in a turn that offers tools
    params: ChatParams
    leaf_id: str | None  # the last message of the selected branch
    project_id: str | None  # the project it belongs to (None: outside every project)
    created_at: float
    updated_at: float
    messages: NotRequired[list[MessageJSON]]
    # with `messages`: how many messages of the branch come before them (0: they are all)
    earlier: NotRequired[int]
    # with `messages`: the branch's summaries in force, oldest first
    summaries: NotRequired[list[SummaryJSON]]
    match: NotRequired[SearchMatch]


class ConversationListJSON(TypedDict):
    conversations: list[ConversationJSON]


class ModelStatusJSON(TypedDict):
    name: str
    kind: str
    state: ModelState
    error: str | None
    in_use: bool  # slots_busy > 0
    slots: int  # replies it serves at once
    slots_busy: int
    queue_length: int  # replies waiting for a slot
    # In /api/status: can it call tools (a local model's chat template; None: not known)
    tools: NotRequired[bool | None]
    # In /api/status: false when the server refuses images for it (a send with one is
    # refused); true when it takes them or may (an upstream says so itself when it cannot)
    images: NotRequired[bool]
    # A local model's engine: where it is, the resident memory of its process (None while
    # none runs), and how long it stays loaded with no reply (seconds; -1: never).
    lifecycle: NotRequired[ModelLifecycle]
    memory_bytes: NotRequired[int | None]
    keep_alive: NotRequired[int]


class FitJSON(TypedDict):
    """Whether a model fits this machine at a context size (server/models/fit.py)."""

    verdict: Literal["fits", "slow", "won't fit", "unknown"]
    needed_bytes: int | None  # weights + context + overhead
    available_bytes: int | None  # memory available now
    weights_bytes: int
    context_bytes: int | None  # the KV cache at `context` tokens
    overhead_bytes: int
    context: int
    tokens_per_s: float  # estimated on the CPU, from the weights' size
    why: str  # the verdict in words, with its figures


class GGUFJSON(TypedDict):
    """What a local model's GGUF file says about itself (read from its header)."""

    path: str
    size_bytes: int
    quantization: str | None
    context_length: int | None  # what the model was trained for; Parley uses its own n_ctx
    architecture: str | None
    tools: NotRequired[bool | None]  # its chat template takes tools (None: not known)
    fit: NotRequired[FitJSON]  # at the model's own n_ctx, with the memory free now


class LocalModelSettingsJSON(TypedDict):
    """A local model's own settings (`PATCH /api/models/{name}`)."""

    n_ctx: int  # each conversation's context, in tokens
    n_threads: int  # generation threads
    n_gpu_layers: int  # layers offloaded to a GPU (-1: all; needs a GPU build)
    # Seconds loaded with no reply before its engine is unloaded (0: after each reply; -1: never)
    keep_alive: NotRequired[int]


class ModelJSON(ModelStatusJSON):
    """One model in `GET /api/models`."""

    default: bool
    removable: bool  # added with POST /api/models/local (not the bundled or a flag's model)
    gguf: NotRequired[GGUFJSON]
    settings: NotRequired[LocalModelSettingsJSON]


class BackendCheckJSON(TypedDict):
    """`POST /api/backends/check`: is an upstream there, and which models it lists."""

    reachable: bool
    models: NotRequired[list[str]]
    error: NotRequired[str]


class FoundServerJSON(TypedDict):
    """A local OpenAI-compatible server found running (`GET /api/backends/detect`)."""

    name: str  # "Ollama", "LM Studio"
    base_url: str
    models: list[str]


class ImportProgressJSON(TypedDict):
    """An import running (`POST /api/import`), as `GET /api/status` shows it."""

    id: str  # DELETE /api/imports/{id} cancels it
    state: str  # reading (and writing, hidden), showing, cancelling
    source: str | None  # parley or chatgpt
    bytes_read: int
    bytes_total: int
    conversations: int  # read, checked and written so far
    messages: int


class StatusJSON(TypedDict):
    models: list[ModelStatusJSON]
    default_model: str | None
    active_turns: int
    tools: ToolsSummaryJSON
    library: LibraryProgressJSON
    imports: list[ImportProgressJSON]
    search_backlog: int  # imported messages shown but not yet found by search (indexing)
