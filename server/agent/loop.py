"""The agent's steps inside a run: model call -> tool calls -> results -> model call.

An object the Run (server/turns/run.py) owns: it runs inside the run's cancel scope, writes into
the run's reply buffer (server/agent/buffer.py), and is stopped by the run's one `stop`. The
model is leased for each model call only, never while tools run; a stop cancels whatever is
running (the model's stream, or every tool call at once) and no new step starts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import time
from dataclasses import dataclass, field

import anyio
import anyio.lowlevel

from server.agent import prompt
from server.agent.approvals import Approvals, ChatGrants, Scope
from server.agent.buffer import ReplyBuffer
from server.agent.children import Children, loops, receipt, tree
from server.agent.compaction import Compactor, History
from server.agent.delegate import Delegation
from server.agent.feed import ToolCallsMade
from server.agent.provenance import Provenance
from server.agent.questions import Questions
from server.agent.steps import (
    CallBuilder,
    ToolStep,
)
from server.agent.tool_runs import ToolRuns, parsed_arguments, well_formed
from server.agent.toolbox import ToolBox
from server.errors import BackendError, ConflictError
from server.models.base import (
    ChatRequest,
    StopSignal,
    StreamEnd,
    StreamInfo,
    TextDelta,
    ToolCallDelta,
)
from server.models.registry import ModelEntry
from server.settings import Limits
from server.types import (
    Decision,
    EndedJSON,
    QuestionAction,
    ToolCallJSON,
    Usage,
)
from server.types.chunks import OverdueAction

log = logging.getLogger(__name__)

# Token counts summed over a turn's model calls; other usage fields are the last call's.
SUMMED_USAGE = ("prompt_tokens", "completion_tokens", "total_tokens")
# A call's id names it in the path of a decision (/tool-calls/{call_id}) and in the history the
# model is sent back; one from the model that is not a plain token is replaced by Parley's own.
# Dots alone are no token: a client resolves "." and ".." segments.
PLAIN_CALL_ID = re.compile(r"(?!\.+$)[A-Za-z0-9_.:-]{1,100}")


@dataclass
class CallStats:
    """What the turn's model calls reported, for its usage."""

    model_calls: int = 0
    started_at: float | None = None  # the first call's start (monotonic)
    # The start of the call that gave the reply's first token: "first token" counts from it,
    # so a wait for the user's approval (or a tool) before it is not the model's.
    first_token_call: float | None = None
    info: Usage = field(default_factory=dict)  # a stream's own figures (the last call's)
    summed: Usage = field(default_factory=dict)  # token counts summed over the calls

    def add(self, reported: Usage | None) -> None:
        for key, value in (reported or {}).items():
            if key in SUMMED_USAGE:
                self.summed[key] = self.summed.get(key, 0) + value
            else:
                self.summed[key] = value


class AgentLoop:
    """The step loop of one run."""

    def __init__(
        self,
        run_id: str,
        model: ModelEntry,
        buffer: ReplyBuffer,
        limits: Limits,
        approvals: Approvals | None = None,
        delegation: Delegation | None = None,
        ids: set[str] | None = None,
        questions: Questions | None = None,
        provenance: Provenance | None = None,
    ) -> None:
        """`delegation`: the loop may hand sub-tasks to children (server/agent/delegate.py);
        `ids`: the call ids taken in the whole tree (a child shares its parent's), and
        `questions` its servers' questions waiting for the user (server/agent/questions.py);
        `provenance`: what its model read that the user did not write (a child starts with
        its parent's: server/agent/provenance.py)."""
        self.id = run_id
        self.model = model
        self.buffer = buffer
        self.limits = limits
        self.stats = CallStats()
        self.tool_calls: list[ToolCallJSON] | None = None  # a stateless reply's calls
        self.stopping = False
        self.in_call = False  # a model call streams now
        self.out_of_steps = False  # its last step still asked for tools (not run)
        # Calls waiting for the user's decision (a conversation turn's; server/agent/approvals.py);
        # shared with the children, so one decision route and one `close` serve the tree.
        self.approvals = approvals or Approvals(None, ChatGrants())
        self.questions = Questions() if questions is None else questions
        self.children = Children(self, delegation)
        self.tools = ToolRuns(self)  # this loop's tool steps (server/agent/tool_runs.py)
        self.ids: set[str] = set() if ids is None else ids
        self.provenance = Provenance() if provenance is None else provenance
        self._signal = StopSignal()  # the current model call's

    def stop(self) -> None:
        """Synchronous: no decision runs anything from now, the model call's work is asked to
        end (the run's cancel scope ends the rest)."""
        self.stopping = True
        self.approvals.close()  # a decision from now on is a 409 and runs nothing
        self.questions.close()  # each server asking is answered "cancel"; later answers 409
        self._signal.request()  # a model call's own `finally` gives its slot back
        self.children.stop()

    async def compact(self, request: ChatRequest, history: History) -> StreamEnd | None:
        """ "Compact now": the earlier messages summarised even if the next turn would fit
        (all but the last exchange). Finishes ("stop") whether or not there was anything to
        summarise; None when stopped."""
        context = self.model.backend.context_length
        await Compactor(self).fit(request, history, [], context=context, force=True)
        return StreamEnd("stop")

    def receipt(self) -> EndedJSON:
        """What a stop now would end, in the whole tree (server/agent/children.py)."""
        return receipt(self)

    def child_limits(self) -> Limits:
        """A sub-agent's: its own, shorter, number of steps."""
        return dataclasses.replace(self.limits, max_steps=self.limits.agents.max_steps)

    async def run(
        self, request: ChatRequest, toolbox: ToolBox | None, history: History | None = None
    ) -> StreamEnd | None:
        """Model call, tool calls, model call... until the model answers without calling a
        tool. Returns how the last model call finished; None when the reply was cut at the
        size limit or its stream ended because the run is stopping. `history`: a stored
        turn's, compacted first if the prompt would not fit (server/agent/compaction.py)."""
        # What the prompt holds that the user did not write, before compaction may fold
        # some of it into a summary (which can carry what it said).
        self.provenance.opened(request.messages, request.sources)
        offered: list[dict[str, object]] = []
        if toolbox is not None and self.model.backend.tools_unsupported is None:
            offered = prompt.offered(list(toolbox.specs()), self.children.offered)
        # Read once: an upstream's may become known meanwhile (asked in the background), and
        # compaction must count with the budget the prompt is then sent with.
        context = self.model.backend.context_length
        # What the tools' servers say about using them, fixed when the turn opened.
        instructions = toolbox.instructions() if offered and toolbox is not None else ""
        if history is not None:
            request = await Compactor(self).fit(
                request, history, offered, context=context, instructions=instructions
            )
        messages = prompt.given(request.messages, offered, instructions, context=context)
        limit = self.limits.max_steps
        for number in range(1, limit + 1):
            last = number == limit
            if toolbox is None:  # stateless: the client's own tools, passed through
                step_request = dataclasses.replace(request, messages=messages)
            else:
                # The last step may call no tool (`tool_choice: none`), so the model answers;
                # the tools stay listed, as some upstreams require beside earlier tool calls.
                choice = "none" if last and offered else None
                step_request = dataclasses.replace(
                    request,
                    messages=messages,
                    tools=offered or None,
                    tool_choice=choice,
                    tools_optional=True,
                )
            first_piece = len(self.buffer.pieces)
            called = await self._model_call(step_request)
            if called is None:
                return None
            end, calls = called
            if not calls:
                return end
            if toolbox is not None:
                calls = self._unique_ids(calls)
            self.buffer.publish(ToolCallsMade(calls))
            if toolbox is None:  # the client runs them: they are the reply
                self.tool_calls = calls
                return end
            said = "".join(self.buffer.pieces[first_piece:])
            parsed = [parsed_arguments(call) for call in calls]  # parsed once, here
            echoed = [well_formed(c, a) for c, a in zip(calls, parsed, strict=True)]
            messages.append({"role": "assistant", "content": said, "tool_calls": echoed})
            messages.extend(await self.tools.run(toolbox, calls, parsed, limited=last))
            if last:
                self.out_of_steps = True
                return end
        return None  # not reached: the last step returns

    async def _model_call(
        self, request: ChatRequest
    ) -> tuple[StreamEnd, list[ToolCallJSON]] | None:
        """One model call, streamed into the reply, with the model leased for it alone.
        Returns how it finished and the tool calls it made; None if it did not finish
        (stopped, or cut at the size limit)."""
        # A stopped run starts no new step: its cancelled scope raises here, before the
        # model is leased or the upstream contacted.
        await anyio.lowlevel.checkpoint()
        if self.model.lease.held_by(self):  # its previous call's work has not stopped yet
            raise BackendError("the model's previous call did not stop; not calling it again")
        signal = StopSignal()
        self._signal = signal
        lease = self.model.lease
        builder = CallBuilder()
        finished: StreamEnd | None = None
        streamed = False
        await lease.acquire(self)
        self.in_call = True
        try:
            self.stats.model_calls += 1
            call_started = time.monotonic()
            if self.stats.started_at is None:
                self.stats.started_at = call_started
            events = self.model.backend.stream(request, signal)
            streamed = True
            async with contextlib.aclosing(events):
                async for event in events:
                    if isinstance(event, TextDelta):
                        if not self.buffer.append(event.text):
                            return None  # at the size limit: closing `events` stops the work
                    elif isinstance(event, ToolCallDelta):
                        if not self._add_call_piece(builder, event):
                            return None  # over the size limit: the call is not run
                    elif isinstance(event, StreamInfo):
                        self.stats.info.update(event.usage)
                    else:
                        finished = event
        finally:
            # Whatever ended this call (a stop, the size limit, a failure), its work must end
            # too; then the model's slot is given back, once that work has really stopped.
            # Shielded: a stop's cancellation must not skip it.
            self.in_call = False
            signal.request()
            with anyio.CancelScope(shield=True):
                await self._release_model(signal, streamed)
        if self.buffer.first_token_at is not None and self.stats.first_token_call is None:
            self.stats.first_token_call = call_started
        if finished is None:
            return None
        self.stats.add(finished.usage)
        return finished, builder.calls(f"call-{self.id[:8]}-{self.stats.model_calls}")

    def _add_call_piece(self, builder: CallBuilder, piece: ToolCallDelta) -> bool:
        """A piece of a tool call; False once the reply is over its size limit."""
        builder.add(piece)
        return self.buffer.add_call_chars(len(piece.arguments))

    def _unique_ids(self, calls: list[ToolCallJSON]) -> list[ToolCallJSON]:
        """The calls, each with a plain id no other step of the reply has: a decision names a
        call by its id (a model may repeat ids across steps, or within one)."""
        taken = self.ids  # the whole tree's: a decision names one call of it
        unique: list[ToolCallJSON] = []
        for index, call in enumerate(calls):
            wanted = call["id"]
            if not PLAIN_CALL_ID.fullmatch(wanted):
                wanted = f"call-{self.id[:8]}-{self.stats.model_calls}-{index}"
            call_id, n = wanted, 1
            while call_id in taken:
                n += 1
                call_id = f"{wanted}-{n}"
            taken.add(call_id)
            unique.append({**call, "id": call_id})
        return unique

    def decide(self, call_id: str, decision: Decision, scope: Scope) -> ToolStep | None:
        """The user's decision on a call of this run that awaits approval (synchronous, on
        the run's loop): returns the step as it is now; None if this run has no such call.
        Raises ConflictError when it is not waiting (decided, or the run is stopping)."""
        owners = {step.id: owner for owner, step in tree(self)}
        if not self.approvals.knows(call_id):
            if call_id in owners:
                raise ConflictError(
                    "this call did not wait for a decision", code="not_awaiting_approval"
                )
            return None
        changed = self.approvals.decide(call_id, decision, scope)
        for step in changed:
            owners.get(step.id, self).buffer.step_changed(step)
        return changed[0]

    def answer_question(
        self, question_id: str, action: QuestionAction, content: object
    ) -> ToolStep | None:
        """The user's answer to a question a server of the tree asks (synchronous, on the
        run's loop): the step that asks, as it is now; None if no question of this run has
        that id. Raises ConflictError when it no longer waits, BadRequestError for content
        the form does not take."""
        if not self.questions.knows(question_id):
            asked = (q["id"] for _, step in tree(self) for q in step.questions)
            if question_id in asked:
                raise ConflictError("this question is not waiting for an answer", code="not_asking")
            return None
        _, step = self.questions.answer(question_id, action, content)
        return step

    def answer_overdue(self, call_id: str, action: OverdueAction) -> ToolStep | None:
        """The user's answer on a call of the tree that ran for its timeout: the step; None
        if no call of this run has that id. ConflictError when it is not asked now."""
        for each in loops(self):
            if each.tools.asked(call_id):
                return each.tools.answer(call_id, action)
        if any(step.id == call_id for _, step in tree(self)):
            raise ConflictError("this call is not waiting for an answer", code="not_overdue")
        return None

    async def _release_model(self, signal: StopSignal, streamed: bool) -> None:
        """Give the model's slot back once the call's work has really stopped (bounded by
        `stop_timeout`; after that, the slot is given back when the work ends)."""
        lease = self.model.lease
        if not lease.held_by(self):
            return
        if streamed:
            with anyio.move_on_after(self.limits.stop_timeout):
                await signal.wait_stopped()
        if signal.stopped or not streamed:
            lease.release(self)
            return
        log.error(
            "run %s: the model's work did not stop within %.1fs; "
            "the model stays in use until it does",
            self.id,
            self.limits.stop_timeout,
        )

        def release_late() -> None:
            lease.release(self)

        signal.when_stopped(release_late)
