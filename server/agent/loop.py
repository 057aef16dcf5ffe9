"""The agent's steps inside a run: model call -> tool calls -> results -> model call.

An object the Run (server/turns/run.py) owns: it runs inside the run's cancel scope, writes into
the run's reply buffer (server/agent/buffer.py), and is stopped by its tree's one `stop`
(server/agent/tree.py). The model is leased for each model call only, never while tools run;
a stop cancels whatever is running (the model's stream, or every tool call at once) and no
new step starts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time

import anyio
import anyio.lowlevel

from server.agent import prompt
from server.agent.call_stats import CallStats
from server.agent.children import Children
from server.agent.compaction import Compactor, History
from server.agent.delegate import Delegation
from server.agent.feed import ToolCallsMade
from server.agent.steps import CallBuilder
from server.agent.tool_runs import ToolRuns, parsed_arguments, well_formed
from server.agent.toolbox import ToolBox
from server.agent.tree import Node
from server.errors import BackendError
from server.models.base import (
    ChatRequest,
    StopSignal,
    StreamEnd,
    StreamInfo,
    TextDelta,
    ToolCallDelta,
)
from server.models.registry import ModelEntry
from server.types import ToolCallJSON

log = logging.getLogger(__name__)


class AgentLoop:
    """The step loop of one loop of a turn's tree."""

    def __init__(self, node: Node, model: ModelEntry, delegation: Delegation | None = None) -> None:
        """`node`: its place in the turn's tree; `delegation`: it may hand sub-tasks to
        children (server/agent/delegate.py). It joins the tree as it is made."""
        self.node = node
        self.tree = node.tree
        self.id = node.id
        self.model = model
        self.buffer = node.buffer
        self.limits = node.limits
        self.provenance = node.provenance
        self.stats = CallStats()
        self.tool_calls: list[ToolCallJSON] | None = None  # a stateless reply's calls
        self.in_call = False  # a model call streams now
        self.out_of_steps = False  # its last step still asked for tools (not run)
        # New loops of the tree (a sub-agent's) are made by this class.
        self.children = Children(node, model, delegation, AgentLoop, self.stats.add)
        self.tools = ToolRuns(node, self.children)  # this loop's tool steps
        self._signal = StopSignal()  # the current model call's
        self.tree.join(self)

    def halt(self) -> None:
        """Synchronous: the model call's work is asked to end; its own `finally` gives the
        model's slot back (the run's cancel scope ends the rest)."""
        self._signal.request()

    async def compact(self, request: ChatRequest, history: History) -> StreamEnd | None:
        """ "Compact now": the earlier messages summarised even if the next turn would fit
        (all but the last exchange). Finishes ("stop") whether or not there was anything to
        summarise; None when stopped."""
        context = self.model.backend.context_length
        await self._compactor().fit(request, history, [], context=context, force=True)
        return StreamEnd("stop")

    def _compactor(self) -> Compactor:
        return Compactor(self.node, self.model, AgentLoop)

    async def run(
        self, request: ChatRequest, toolbox: ToolBox | None, history: History | None = None
    ) -> StreamEnd | None:
        """Model call, tool calls, model call... until the model answers without calling a
        tool. Returns how the last model call finished; None when the reply was cut at the
        size limit or its stream ended because the run is stopping. `history`: a stored
        turn's, compacted first if the prompt would not fit (server/agent/compaction.py)."""
        # What the prompt holds that the user did not write, before compaction may fold
        # some of it into a summary (which can carry what it said).
        self.provenance.extend(request.sources)
        offered: list[dict[str, object]] = []
        if toolbox is not None and self.model.backend.tools_unsupported is None:
            offered = prompt.offered(list(toolbox.specs()), self.children.offered)
        # Read once: an upstream's may become known meanwhile (asked in the background), and
        # compaction must count with the budget the prompt is then sent with.
        context = self.model.backend.context_length
        # What the tools' servers say about using them, fixed when the turn opened.
        instructions = toolbox.instructions() if offered and toolbox is not None else ""
        if history is not None:
            request = await self._compactor().fit(
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
                # A decision names a call by its id: unique in the whole tree.
                fallback = f"call-{self.id[:8]}-{self.stats.model_calls}"
                calls = self.tree.claim_ids(calls, fallback)
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
        # model is leased or the upstream contacted (and a loop of a stopped tree calls
        # nothing, whichever scope it runs in).
        await anyio.lowlevel.checkpoint()
        if self.tree.stopping:
            return None
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
