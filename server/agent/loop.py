"""The agent's steps inside a run: model call -> tool calls -> results -> model call.

A mixin of `Run` (server/turns/run.py): the steps are the run's own methods, on its one path, with
its stop, its lease and its settle; they live here because they are their own concept. The
model is leased for each model call only, never while tools run; a stop cancels whatever is
running (the model's stream, or every tool call at once) and no new step starts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import re
import time

import anyio
import anyio.lowlevel

from server.agent.approvals import Approvals
from server.agent.feed import ApprovalNeeded, FeedItem, StepChanged, ToolCallsMade
from server.agent.steps import (
    NEVER_ALLOWED,
    NOT_APPROVED,
    NOT_STARTED,
    CallBuilder,
    ReplyParts,
    ToolStep,
    parse_arguments,
)
from server.agent.toolbox import ToolBox, ToolCallError
from server.agent.untrusted import with_agent_note
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
    ChatMessage,
    CitationPartJSON,
    Decision,
    EndedBy,
    Remember,
    ToolCallJSON,
    ToolFunctionJSON,
    Usage,
)
from server.types.chunks import ApprovalJSON

log = logging.getLogger(__name__)

# Token counts summed over a turn's model calls; other usage fields are the last call's.
SUMMED_USAGE = ("prompt_tokens", "completion_tokens", "total_tokens")
# A call's id names it in the path of a decision (/tool-calls/{call_id}) and in the history the
# model is sent back; one from the model that is not a plain token is replaced by Parley's own.
# Dots alone are no token: a client resolves "." and ".." segments (issue 37).
PLAIN_CALL_ID = re.compile(r"(?!\.+$)[A-Za-z0-9_.:-]{1,100}")


class AgentSteps:
    """The step loop of a Run; what it uses of the run is declared here."""

    id: str
    model: ModelEntry
    parts: list[str]
    reply: ReplyParts
    stop_reason: EndedBy | None
    model_calls: int
    _toolbox: ToolBox | None
    _approvals: Approvals
    _limits: Limits
    _tool_calls: list[ToolCallJSON] | None
    _signal: StopSignal
    _started_at: float | None
    _info: Usage
    _usage_sum: Usage
    _sources: dict[int, CitationPartJSON]
    _feed: list[str | FeedItem]
    _chars: int
    _over_limit: str | None

    def _append(self, text: str) -> bool:
        raise NotImplementedError  # the Run's

    def _wake(self) -> None:
        raise NotImplementedError  # the Run's

    def _schedule_checkpoint(self) -> None:
        raise NotImplementedError  # the Run's

    async def _steps(self, request: ChatRequest) -> StreamEnd | None:
        """Model call, tool calls, model call... until the model answers without calling a
        tool. Returns how the last model call finished; None when the reply was cut at the
        size limit or its stream ended because the run is stopping."""
        toolbox = self._toolbox
        offered: list[dict[str, object]] = []
        if toolbox is not None and self.model.backend.tools_unsupported is None:
            offered = list(toolbox.specs())
        messages = list(request.messages)
        if offered:  # the agent's instructions: what tools and documents say is data
            messages = with_agent_note(messages)
        limit = self._limits.max_steps
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
            first_piece = len(self.parts)
            called = await self._model_call(step_request)
            if called is None:
                return None
            end, calls = called
            if not calls:
                return end
            if toolbox is not None:
                calls = self._unique_ids(calls)
            self._publish(ToolCallsMade(calls))
            if toolbox is None:  # the client runs them: they are the reply
                self._tool_calls = calls
                return end
            said = "".join(self.parts[first_piece:])
            echoed = [_well_formed(call) for call in calls]
            messages.append({"role": "assistant", "content": said, "tool_calls": echoed})
            messages.extend(await self._run_tools(toolbox, calls, limited=last))
            if last:
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
        try:
            self.model_calls += 1
            if self._started_at is None:
                self._started_at = time.monotonic()
            events = self.model.backend.stream(request, signal)
            streamed = True
            async with contextlib.aclosing(events):
                async for event in events:
                    if isinstance(event, TextDelta):
                        if not self._append(event.text):
                            return None  # at the size limit: closing `events` stops the work
                    elif isinstance(event, ToolCallDelta):
                        if not self._add_call_piece(builder, event):
                            return None  # over the size limit: the call is not run
                    elif isinstance(event, StreamInfo):
                        self._info.update(event.usage)
                    else:
                        finished = event
        finally:
            # Whatever ended this call (a stop, the size limit, a failure), its work must end
            # too; then the model's slot is given back, once that work has really stopped.
            # Shielded: a stop's cancellation must not skip it.
            signal.request()
            with anyio.CancelScope(shield=True):
                await self._release_model(signal, streamed)
        if finished is None:
            return None
        self._add_usage(finished.usage)
        return finished, builder.calls(f"call-{self.id[:8]}-{self.model_calls}")

    async def _run_tools(
        self, toolbox: ToolBox, calls: list[ToolCallJSON], *, limited: bool
    ) -> list[ChatMessage]:
        """Run the calls (at once, concurrently) as steps of the reply; return the `tool`
        messages that tell the model their results. A call that needs the user's approval
        waits for it (server/agent/approvals.py). A stop cancels every call and every wait."""
        runnable: list[tuple[ToolStep, dict[str, object]]] = []
        steps = []
        for call in calls:
            function = call["function"]["name"]
            target = toolbox.target(function)
            step = ToolStep(
                id=call["id"],
                function=function,
                server=target.server if target else "",
                name=target.tool if target else function,
                arguments=call["function"]["arguments"],
            )
            steps.append(step)
            self.reply.step_added(step)
            if limited:
                step.end(
                    "error",
                    f"not run: the turn reached its limit of {self._limits.max_steps} steps",
                )
            elif target is None:
                step.end("error", f"there is no tool named {function!r}")
            else:
                try:
                    arguments = parse_arguments(step.arguments)
                except ValueError as exc:
                    step.end("error", str(exc))
                else:
                    trust = toolbox.trust(function)
                    verdict = self._approvals.verdict(step, trust)
                    if verdict == "refuse":
                        step.end("denied", NEVER_ALLOWED)
                    else:
                        if verdict == "ask":
                            self._approvals.ask(step, trust)
                        runnable.append((step, arguments))
            self._step_changed(step)
            if step.status == "awaiting_approval":
                self._publish(ApprovalNeeded(_approval(step)))
        if runnable:
            async with anyio.create_task_group() as tg:
                for step, arguments in runnable:
                    tg.start_soon(self._run_tool, toolbox, step, arguments)
        return [{"role": "tool", "tool_call_id": s.id, "content": s.for_model()} for s in steps]

    async def _run_tool(
        self, toolbox: ToolBox, step: ToolStep, arguments: dict[str, object]
    ) -> None:
        called = False
        try:
            if step.status == "awaiting_approval" and not await self._approvals.wait(step):
                return  # denied: the decision ended the step and told the followers
            if self.stop_reason is not None:
                # Allowed, but the run was stopped before this task went on: nothing runs.
                # (No await between this check and the call: a stop cannot slip in.)
                step.end("interrupted", NOT_STARTED)
                self._step_changed(step)
                return
            called = True
            outcome = await toolbox.call(step.function, arguments, self._limits.tool_call_timeout)
        except anyio.get_cancelled_exc_class():
            # Stopped: the call was cancelled (the server told) and is no longer waited on;
            # whatever it answers later is dropped. A call still awaiting approval never ran.
            if called:
                step.end("interrupted", None)
            else:
                waited = step.status == "awaiting_approval"
                step.end("interrupted", NOT_APPROVED if waited else NOT_STARTED)
            self._step_changed(step)
            raise
        except ToolCallError as exc:
            step.end("error", str(exc))
        except Exception as exc:
            log.exception("run %s: tool %s failed", self.id, step.function)
            step.end("error", f"internal error: {type(exc).__name__}")
        else:
            if self.stop_reason is not None:
                # Its result came in the very moment the run was stopped: not taken.
                step.end("interrupted", None)
            else:
                step.from_tool = True
                step.end("error" if outcome.is_error else "completed", outcome.text)
                for source in outcome.sources:
                    self._sources[source["n"]] = source
        self._step_changed(step)

    def _add_call_piece(self, builder: CallBuilder, piece: ToolCallDelta) -> bool:
        """A piece of a tool call; its arguments count with the reply's text against
        `Limits.max_reply_chars`. False once over: the run must end, the call not run."""
        builder.add(piece)
        self._chars += len(piece.arguments)
        if self._chars <= self._limits.max_reply_chars:
            return True
        self._over_limit = (
            f"the model's tool call reached Parley's limit of {self._limits.max_reply_chars:,} "
            "characters and was not run (--max-reply-chars)"
        )
        return False

    def _unique_ids(self, calls: list[ToolCallJSON]) -> list[ToolCallJSON]:
        """The calls, each with a plain id no other step of the reply has: a decision names a
        call by its id (a model may repeat ids across steps, or within one)."""
        taken = {step.id for step in self.reply.steps}
        unique: list[ToolCallJSON] = []
        for index, call in enumerate(calls):
            wanted = call["id"]
            if not PLAIN_CALL_ID.fullmatch(wanted):
                wanted = f"call-{self.id[:8]}-{self.model_calls}-{index}"
            call_id, n = wanted, 1
            while call_id in taken:
                n += 1
                call_id = f"{wanted}-{n}"
            taken.add(call_id)
            unique.append({**call, "id": call_id})
        return unique

    def decide(self, call_id: str, decision: Decision, remember: Remember) -> ToolStep | None:
        """The user's decision on a call of this run that awaits approval (synchronous, on
        the run's loop): returns the step as it is now; None if this run has no such call.
        Raises ConflictError when it is not waiting (decided, or the run is stopping)."""
        if not self._approvals.knows(call_id):
            if any(step.id == call_id for step in self.reply.steps):
                raise ConflictError(
                    "this call did not wait for a decision", code="not_awaiting_approval"
                )
            return None
        changed = self._approvals.decide(call_id, decision, remember)
        for step in changed:
            self._step_changed(step)
        return changed[0]

    def _publish(self, item: FeedItem) -> None:
        self._feed.append(item)
        self._wake()

    def _step_changed(self, step: ToolStep) -> None:
        self._publish(StepChanged(step.json()))
        self._schedule_checkpoint()

    def _add_usage(self, reported: Usage | None) -> None:
        for key, value in (reported or {}).items():
            if key in SUMMED_USAGE:
                self._usage_sum[key] = self._usage_sum.get(key, 0) + value
            else:
                self._usage_sum[key] = value

    async def _release_model(self, signal: StopSignal, streamed: bool) -> None:
        """Give the model's slot back once the call's work has really stopped (bounded by
        `stop_timeout`; after that, the slot is given back when the work ends)."""
        lease = self.model.lease
        if not lease.held_by(self):
            return
        if streamed:
            with anyio.move_on_after(self._limits.stop_timeout):
                await signal.wait_stopped()
        if signal.stopped or not streamed:
            lease.release(self)
            return
        log.error(
            "run %s: the model's work did not stop within %.1fs; "
            "the model stays in use until it does",
            self.id,
            self._limits.stop_timeout,
        )

        def release_late() -> None:
            lease.release(self)

        signal.when_stopped(release_late)


def _approval(step: ToolStep) -> ApprovalJSON:
    return {
        "call_id": step.id,
        "server": step.server,
        "tool": step.name,
        "function": step.function,
        "arguments": step.arguments,
    }


def _well_formed(call: ToolCallJSON) -> ToolCallJSON:
    """A call as it goes back to the model in the history: a name and JSON-object arguments
    even when the model wrote neither (strict upstreams refuse anything else; the step's
    error result tells the model what was wrong)."""
    name, arguments = call["function"]["name"], call["function"]["arguments"]
    try:
        parse_arguments(arguments)
    except ValueError:
        arguments = "{}"
    function: ToolFunctionJSON = {"name": name or "unnamed_tool", "arguments": arguments}
    return {"id": call["id"], "type": "function", "function": function}
