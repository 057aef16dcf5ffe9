"""The wire of a streamed reply: OpenAI's `chat.completion.chunk`s with Parley's fields added,
the tool-call decision's answer, and OpenAI's error object. Like the rest of server/types, one
definition for both sides, holding nothing but types (tests/test_layering.py)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from server.types import (
    CitationPartJSON,
    Decision,
    EndedBy,
    EndedJSON,
    FinishReason,
    QuestionAction,
    QuestionMode,
    Remember,
    SourceJSON,
    Status,
    SummaryJSON,
    ToolFunctionJSON,
    ToolPartJSON,
    Usage,
)


class DeltaToolCallJSON(TypedDict):
    index: int
    id: str
    type: Literal["function"]
    function: ToolFunctionJSON


class DeltaJSON(TypedDict, total=False):
    role: Literal["assistant"]
    content: str
    tool_calls: list[DeltaToolCallJSON]


class ChoiceJSON(TypedDict):
    index: int
    delta: DeltaJSON
    finish_reason: FinishReason | None


class AskingAgentJSON(TypedDict):
    """The sub-agent whose call asks the user (an approval, a call past its timeout)."""

    call_id: str  # its `delegate` step's id: the step that holds the sub-agent's parts
    task: str  # what it was asked to do, whole


class ApprovalJSON(TypedDict):
    """A tool call that waits for the user's decision (`parley.approval` of a chunk):
    answer with `POST /api/conversations/{id}/tool-calls/{call_id}`."""

    call_id: str  # the step's id
    server: str
    tool: str  # its own name at the server
    function: str  # the name the model called (`server__tool`)
    arguments: str  # JSON text, as the model wrote it, whole
    sub_agent: NotRequired[AskingAgentJSON]  # the call is a sub-agent's (absent: the reply's)
    # The injection guard asks (server/agent/guard.py): why in plain words, and the text the
    # user did not write that the model read before it made the call (the latest first).
    reason: NotRequired[str]
    sources: NotRequired[list[SourceJSON]]


class QuestionEventJSON(TypedDict):
    """A tool's MCP server asks the user something during its call (`parley.question` of a
    chunk; MCP elicitation). Answer with `POST /api/conversations/{id}/questions/{id}`."""

    question_id: str
    call_id: str  # the step whose call asks
    server: str
    tool: str
    mode: QuestionMode
    message: str
    schema: NotRequired[dict[str, object]]  # form: the fields asked for
    url: NotRequired[str]  # url: where to go, whole (shown; opened only if the user says so)
    sub_agent: NotRequired[AskingAgentJSON]  # the call is a sub-agent's (absent: the reply's)


class QuestionAnswerJSON(TypedDict):
    """The answer to `POST /api/conversations/{id}/questions/{question_id}`."""

    action: QuestionAction
    step: ToolPartJSON  # the step as it is now, the question answered in its `questions`


class OverdueJSON(TypedDict):
    """A call has run for its timeout (`parley.overdue` of a chunk): keep waiting, or stop it?
    Answer with `POST /api/conversations/{id}/tool-calls/{call_id}/overdue`."""

    call_id: str
    server: str
    tool: str
    function: str
    waited_s: float
    sub_agent: NotRequired[AskingAgentJSON]  # the call is a sub-agent's (absent: the reply's)


class CompactionJSON(TypedDict):
    """Earlier messages are being summarised ("running") or were ("done", with the summary
    now given to the model in their place): `parley.compaction` of a chunk.

    "running" comes again as the summary is made: at each round (a long part is read in
    rounds, each a model call) with `round` of `rounds`, and during a round at most once a
    second with `tokens`, what its summary has taken so far (estimated from its characters).
    """

    state: Literal["running", "done", "failed"]  # failed: the turn goes on without it
    summary: NotRequired[SummaryJSON]
    round: NotRequired[int]  # the round being read, from 1
    rounds: NotRequired[int]  # the rounds planned: at most this many (fewer when it reads fast)
    tokens: NotRequired[int]  # the round's summary so far, in tokens (estimated)


# A usage key (of a stored reply and of its final chunk): 1 when a reply that completed at
# `finish_reason: "length"` was cut because the model's context was full (its prompt and the
# reply took all of it), not at its own `max_tokens` (server/turns/length_cut.py).
CONTEXT_FULL = "context_full"

OverdueAction = Literal["wait", "stop"]
# The start of the result of a call the user stopped after its timeout (the window draws such
# a step as "stopped by you").
STOPPED_BY_USER = "Stopped by the user after "


class OverdueAnswerJSON(TypedDict):
    """The answer to `POST /api/conversations/{id}/tool-calls/{call_id}/overdue`."""

    action: OverdueAction
    step: ToolPartJSON


class StepEventJSON(TypedDict, total=False):
    """A tool step began or changed, a call awaits approval or an answer on its wait, or the
    reply cited a source, or a server asks the user (`parley` of a chunk that is not the
    last): one of them."""

    step: ToolPartJSON
    approval: ApprovalJSON
    overdue: OverdueJSON
    question: QuestionEventJSON
    compaction: CompactionJSON
    citation: CitationPartJSON
    # The reply's writes fail (a full disk): why, while it is kept only in memory; null
    # once a write succeeds again.
    save_problem: str | None


class DecisionJSON(TypedDict):
    """The answer to `POST /api/conversations/{id}/tool-calls/{call_id}`."""

    decision: Decision
    remember: Remember
    step: ToolPartJSON  # the step as it is now ("running" once allowed, or "denied")


class OutcomeJSON(TypedDict):
    """What Parley saved, in the final chunk (`parley`) and a whole completion."""

    status: Status
    ended_by: EndedBy | None
    error: NotRequired[str]
    save_error: NotRequired[str]
    ended: NotRequired[EndedJSON]  # a stopped reply: what the stop ended


class ErrorBodyJSON(TypedDict):
    """OpenAI's error object: `{"error": ErrorBodyJSON}` answers a failed request."""

    code: str
    message: str
    type: str
    param: str | None


class ChunkJSON(TypedDict):
    """One server-sent event of a reply.

    The first chunk of a conversation turn also carries `conversation_id`,
    `user_message_id`, `message_id` and `conversation_title`; the last one carries `usage`
    and `parley` (an OutcomeJSON, and `error` when the backend failed). A tool step that
    begins or changes is a chunk with no choices and `parley` = StepEventJSON.
    """

    id: str
    object: Literal["chat.completion.chunk"]
    created: int
    model: str
    choices: list[ChoiceJSON]
    conversation_id: NotRequired[str]
    user_message_id: NotRequired[str]
    message_id: NotRequired[str]
    conversation_title: NotRequired[str]
    usage: NotRequired[Usage | None]
    parley: NotRequired[OutcomeJSON | StepEventJSON]
    error: NotRequired[ErrorBodyJSON]
