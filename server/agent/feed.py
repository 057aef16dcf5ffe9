"""What a run tells its followers besides text: tool calls the model made, tool steps that
began or changed, calls that wait for the user's approval, sources cited. Text itself is fed
as plain `str` pieces (the hot path)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from server.types import CitationPartJSON, SummaryJSON, ToolCallJSON, ToolPartJSON
from server.types.chunks import ApprovalJSON, CompactionJSON, OverdueJSON, QuestionEventJSON


@dataclass(frozen=True)
class ToolCallsMade:
    """The model ended a step asking for these calls (`delta.tool_calls` on the wire)."""

    calls: list[ToolCallJSON]


@dataclass(frozen=True)
class StepChanged:
    """A tool step began or ended (`parley.step` on the wire)."""

    step: ToolPartJSON


@dataclass(frozen=True)
class ApprovalNeeded:
    """A tool call waits for the user's decision (`parley.approval` on the wire)."""

    approval: ApprovalJSON


@dataclass(frozen=True)
class QuestionAsked:
    """A tool's MCP server asks the user something (`parley.question` on the wire)."""

    question: QuestionEventJSON


@dataclass(frozen=True)
class CallOverdue:
    """A call has run for its timeout: the user is asked (`parley.overdue` on the wire)."""

    overdue: OverdueJSON


@dataclass(frozen=True)
class Compaction:
    """Earlier messages are being summarised ("running", with how far it is when known), or
    were ("done", the summary), or could not be ("failed": the turn goes on without):
    `parley.compaction`."""

    state: Literal["running", "done", "failed"]
    summary: SummaryJSON | None
    round: int | None = None  # the round being read, from 1
    rounds: int | None = None  # the rounds planned, at most
    tokens: int | None = None  # the round's summary so far, estimated

    def json(self) -> CompactionJSON:
        event: CompactionJSON = {"state": self.state}
        if self.summary is not None:
            event["summary"] = self.summary
        if self.round is not None and self.rounds is not None:
            event["round"], event["rounds"] = self.round, self.rounds
        if self.tokens is not None:
            event["tokens"] = self.tokens
        return event


@dataclass(frozen=True)
class Cited:
    """A source the reply was given, once (`parley.citation` on the wire): cited as [n] for the
    first time, or (`cited` false) a passage put in its prompt that it has not cited (yet)."""

    citation: CitationPartJSON


@dataclass(frozen=True)
class SaveProblem:
    """The reply's writes began to fail (a full disk: `problem` says why; it is kept in
    memory and written again), or succeed again (`problem` None): `parley.save_problem`."""

    problem: str | None


FeedItem = (
    ToolCallsMade
    | StepChanged
    | ApprovalNeeded
    | QuestionAsked
    | CallOverdue
    | Compaction
    | Cited
    | SaveProblem
)
