"""What a reply's stream brings, as the window sees it: text, tool steps (a sub-agent's steps
inside its own), calls awaiting the user's approval or an answer on a long wait, servers'
questions, citations, and one ending (how the server saved the reply). Plain values, no
HTTP: desktop/client/ makes them from the server's events. `ReplyParts` holds what a reply
brought so far, once (desktop/replies/controller.py holds it; the transcript draws from it)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from server.types import (
    OPEN_STATUSES,
    CitationPartJSON,
    EndedBy,
    EndedJSON,
    FinishReason,
    MessageJSON,
    PartJSON,
    Status,
    ToolPartJSON,
    Usage,
)
from server.types.chunks import (
    ApprovalJSON,
    ChunkJSON,
    CompactionJSON,
    OutcomeJSON,
    OverdueJSON,
    QuestionEventJSON,
)


@dataclass(frozen=True)
class ReplyText:
    """More text of the reply."""

    text: str


@dataclass(frozen=True)
class ReplyEnd:
    """How a reply ended, as the server saved it: from the final chunk of its stream, or
    from the stored message (after a hang-up, when no final chunk came)."""

    status: Status
    ended_by: EndedBy | None = None
    error: str | None = None
    usage: Usage | None = None
    save_error: str | None = None
    # The whole saved text, when read from the store (it may hold a few characters the
    # view never received); None when the view received all of it.
    content: str | None = None
    # The saved parts, when read from the store and the reply has tool steps.
    parts: list[PartJSON] | None = None
    # Why a completed reply's model stopped ("length": cut at its token limit).
    finish_reason: FinishReason | None = None
    # A stopped reply: what the stop ended (its receipt).
    ended: EndedJSON | None = None

    @classmethod
    def from_message(cls, message: MessageJSON) -> ReplyEnd:
        return cls(
            status=message["status"],
            ended_by=message["ended_by"],
            error=message["error"],
            usage=message["usage"],
            content=message["content"],
            parts=message["parts"] if has_steps(message.get("parts", [])) else None,
            finish_reason=message.get("finish_reason"),
            ended=message.get("ended"),
        )

    @classmethod
    def from_final(cls, chunk: ChunkJSON, outcome: OutcomeJSON) -> ReplyEnd:
        return cls(
            status=outcome["status"],
            ended_by=outcome["ended_by"],
            error=outcome.get("error"),
            usage=chunk.get("usage"),
            save_error=outcome.get("save_error"),
            finish_reason=chunk["choices"][0]["finish_reason"] if chunk["choices"] else None,
            ended=outcome.get("ended"),
        )


@dataclass(frozen=True)
class ReplyStep:
    """A tool step of the reply began or changed (the whole step as it is now)."""

    part: ToolPartJSON


@dataclass(frozen=True)
class ReplyApproval:
    """A tool call waits for the user's decision: the tool, its server and its whole
    arguments (answer with `ParleyClient.decide_tool_call`). Its step came just before, with
    status `awaiting_approval`; the step's next change says how it was decided."""

    approval: ApprovalJSON


# The answer on a call asked about (server/agent/tool_runs.py's OverdueAction; not in
# server.types yet).
OverdueAction = Literal["wait", "stop"]


@dataclass(frozen=True)
class ReplyOverdue:
    """A call has run for its timeout: keep waiting, or stop it? (answer with
    `ParleyClient.answer_overdue`). Its step came just before, with `overdue` set; the
    step's next change without it says the question is over."""

    overdue: OverdueJSON


@dataclass(frozen=True)
class ReplyQuestion:
    """A tool's MCP server asks the user (a form, or a URL to visit) during its call (answer
    with `ParleyClient.questions.answer`). Its step carries it in `questions`, asked; the
    step's change that says it answered (or the step's end) says the question is over."""

    question: QuestionEventJSON


@dataclass(frozen=True)
class ReplyCitation:
    """A source of the reply: cited as [n] for the first time, or (`cited` false) a passage
    given to the model in its prompt that it has not cited (yet)."""

    part: CitationPartJSON


@dataclass(frozen=True)
class ReplyCompaction:
    """Earlier messages are being summarised before the reply ("running"), were ("done",
    with the summary the model is now given in their place), or could not be ("failed":
    the turn goes on without a summary)."""

    compaction: CompactionJSON


@dataclass(frozen=True)
class ReplySaveProblem:
    """The server cannot save the reply now (`problem`: why, e.g. the disk is full; it
    keeps it in memory and saves it when it can), or can again (`problem` None)."""

    problem: str | None


ReplyEvent = (
    ReplyText
    | ReplyStep
    | ReplyApproval
    | ReplyOverdue
    | ReplyQuestion
    | ReplyCitation
    | ReplyCompaction
    | ReplySaveProblem
    | ReplyEnd
)


class ReplyParts:
    """A reply as it came so far: its text pieces, tool steps and citations, in order. A step
    is kept where it first came, as it is now (each change of it replaces it there).

    Held once, by the reply in flight (replies/controller.py `Reply.parts`), whether or not its
    chat is on screen; the transcript reads it (`Transcript.begin_reply`, `reply_grew`)."""

    def __init__(self) -> None:
        self.items: list[str | ToolPartJSON | CitationPartJSON] = []
        self.length = 0  # characters of text
        self._pieces: list[str] = []
        self._steps: dict[str, int] = {}  # a step's id -> where it is in `items`

    def add_text(self, text: str) -> None:
        self.items.append(text)
        self._pieces.append(text)
        self.length += len(text)

    def add_step(self, step: ToolPartJSON) -> None:
        """A step began (added after the text so far) or changed (replaced where it is)."""
        at = self._steps.get(step["id"])
        if at is None:
            self._steps[step["id"]] = len(self.items)
            self.items.append(step)
        else:
            self.items[at] = step

    def add_citation(self, citation: CitationPartJSON) -> None:
        self.items.append(citation)

    def add_saved(self, parts: list[PartJSON]) -> None:
        """What a reply said before (the reply continued from it)."""
        for part in parts:
            if part["type"] == "text":
                self.add_text(part["text"])
            elif part["type"] == "tool":
                self.add_step(part)
            else:
                self.add_citation(part)

    @property
    def text(self) -> str:
        """All of its text."""
        return "".join(self._pieces)

    def steps(self) -> Iterator[tuple[int, ToolPartJSON]]:
        """Each tool step as it is now, with its place in `items`, in order."""
        for at in self._steps.values():
            step = self.items[at]
            if isinstance(step, dict) and step["type"] == "tool":
                yield at, step

    @property
    def has_steps(self) -> bool:
        """It has more than text (tool steps, citations): it is drawn from its parts."""
        return len(self._pieces) < len(self.items)

    def running_step(self) -> ToolPartJSON | None:
        """The last tool step still running or waiting for approval (a sub-agent's, rather
        than the sub-agent's own step, when one of its steps runs)."""
        for _, step in reversed(list(self.steps())):
            for inner in reversed(list(with_inner_steps(step))):
                if inner["status"] in OPEN_STATUSES:
                    return inner
        return None

    def as_parts(self, unseen: str = "") -> list[PartJSON]:
        """As a stored message's parts (consecutive text joined); `unseen`: text saved after
        it that the view never received."""
        parts: list[PartJSON] = []
        text: list[str] = []
        for item in [*self.items, unseen]:
            if isinstance(item, str):
                text.append(item)
                continue
            if text:
                parts.append({"type": "text", "text": "".join(text)})
                text = []
            parts.append(item)
        if text and "".join(text):
            parts.append({"type": "text", "text": "".join(text)})
        return parts


def has_steps(parts: list[PartJSON]) -> bool:
    """The reply has more than text (tool steps, citations): it is drawn from its parts."""
    return any(part["type"] != "text" for part in parts)


def with_inner_steps(step: ToolPartJSON) -> Iterator[ToolPartJSON]:
    """The step, then the steps of the sub-agent it ran (theirs too), in order."""
    yield step
    agent = step.get("agent")
    for part in agent["parts"] if agent is not None else []:
        if part["type"] == "tool":
            yield from with_inner_steps(part)
