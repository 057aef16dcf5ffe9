"""The tool steps of one agent loop (server/agent/loop.py): the calls the model made, run at
once as steps of the reply, each after the user's approval where its trust says so.

A long call is never cut without asking: what its tool reports of its progress is
shown on its step as it comes, and once it has run for its timeout (the tool's, the
server's, or Parley's `--tool-timeout`) the user is asked whether to keep waiting or stop it
(`parley.overdue`); a stopped call's step tells the model the user stopped it. Nobody to ask
(a turn no window follows): the call goes on. The run's stop cancels every call and wait.
"""

from __future__ import annotations

import logging
import time

import anyio

from server.agent import delegate, guard
from server.agent.children import Children
from server.agent.feed import ApprovalNeeded
from server.agent.provenance import document, tool_result
from server.agent.steps import NEVER_ALLOWED, ToolStep, parse_arguments
from server.agent.toolbox import Answer, Question, ToolBox, ToolOutcome
from server.agent.tree import Node
from server.errors import ToolCallError
from server.types import ChatMessage, ToolCallJSON, ToolFunctionJSON, Trust
from server.types.chunks import STOPPED_BY_USER, ApprovalJSON

log = logging.getLogger(__name__)


class ToolRuns:
    def __init__(self, node: Node, children: Children) -> None:
        """`children`: runs its `delegate` calls."""
        self._node = node
        self._children = children
        self._progress_sent: dict[str, float] = {}

    async def run(
        self,
        toolbox: ToolBox,
        calls: list[ToolCallJSON],
        parsed: list[dict[str, object] | ValueError],
        *,
        limited: bool,
    ) -> list[ChatMessage]:
        """Run the calls (at once, concurrently) as steps of the reply; return the `tool`
        messages that tell the model their results. A call that needs the user's approval
        waits for it (server/agent/approvals.py). A stop cancels every call and every wait."""
        node, tree = self._node, self._node.tree
        runnable: list[tuple[ToolStep, dict[str, object]]] = []
        steps = []
        for call, arguments in zip(calls, parsed, strict=True):
            function = call["function"]["name"]
            delegating = function == delegate.FUNCTION and self._children.offered
            target = delegate.target(toolbox, arguments) if delegating else toolbox.target(function)
            step = ToolStep(
                id=call["id"],
                function=function,
                server=target.server if target else "",
                name=target.tool if target else function,
                arguments=call["function"]["arguments"],
                read_only=target.read_only if target else False,
            )
            steps.append(step)
            node.buffer.step_added(step)
            if limited:
                step.end(
                    "error",
                    f"not run: the limit of {node.limits.max_steps} steps was reached",
                )
            elif target is None:
                step.end("error", f"there is no tool named {function!r}")
            elif isinstance(arguments, ValueError):
                step.end("error", str(arguments))
            else:
                # A sub-agent's own calls ask, each as its tool's trust says.
                trust: Trust = "allow" if delegating else toolbox.trust(function)
                allowed = tree.approvals.allowed_by(step, trust)
                # Text the user did not write may have asked for this call.
                step.guard = guard.concern(
                    target.effect, target.guarded, node.provenance, step.name, bool(allowed)
                )
                verdict = tree.approvals.verdict(step, trust, held=step.guard is not None)
                if verdict == "refuse":
                    step.guard = None  # refused by the user's settings, not held
                    step.end("denied", NEVER_ALLOWED)
                else:
                    if verdict == "ask":
                        tree.approvals.ask(step, trust)
                    elif not delegating:  # a sub-agent's own calls say who let them run
                        step.allowed = allowed
                    runnable.append((step, arguments))
            node.buffer.step_changed(step)
            if step.status == "awaiting_approval":
                node.buffer.publish(ApprovalNeeded(_approval(step)))
        if runnable:
            async with anyio.create_task_group() as tg:
                for step, arguments in runnable:
                    tg.start_soon(self._run_one, toolbox, step, arguments)
        return [{"role": "tool", "tool_call_id": s.id, "content": s.for_model()} for s in steps]

    async def _run_one(
        self, toolbox: ToolBox, step: ToolStep, arguments: dict[str, object]
    ) -> None:
        node, tree = self._node, self._node.tree
        try:
            if step.status == "awaiting_approval" and not await tree.approvals.wait(step):
                return  # denied: the decision ended the step and told the followers
            if tree.stopping:
                # Allowed, but the run was stopped before this task went on: nothing runs.
                # (No await between this check and the call: a stop cannot slip in.)
                step.interrupt()
                node.buffer.step_changed(step)
                return
            step.called = True
            if step.target_is(delegate.TARGET) and self._children.offered:
                outcome = await self._children.run(step, arguments, toolbox)
            else:
                outcome = await self._call(toolbox, step, arguments)
        except anyio.get_cancelled_exc_class():
            # Stopped: the call was cancelled (the server told) and is no longer waited on;
            # whatever it answers later is dropped. A call still awaiting approval never ran.
            step.interrupt()
            node.buffer.step_changed(step)
            raise
        except ToolCallError as exc:
            step.end("error", str(exc))
        except Exception as exc:
            log.exception("run %s: tool %s failed", node.id, step.function)
            step.end("error", f"internal error: {type(exc).__name__}")
        else:
            if tree.stopping:
                # Its result came in the very moment the run was stopped: not taken.
                step.interrupt()
            else:
                step.from_tool = True
                step.links = list(outcome.links)
                step.end("error" if outcome.is_error else "completed", outcome.text)
                for source in outcome.sources:
                    node.buffer.sources[source["n"]] = source
                self._read(step, outcome)
        node.buffer.step_changed(step)

    def _read(self, step: ToolStep, outcome: ToolOutcome) -> None:
        """The model reads a call's result: what the user did not write is in its context
        from now (a sub-agent's answer was counted by Children.run)."""
        provenance = self._node.provenance
        if step.agent is not None:
            return
        if outcome.sources:  # passages of the user's documents
            provenance.extend(document(source) for source in outcome.sources)
        else:
            provenance.add(
                tool_result(step.server, step.name, step.id, step.arguments, outcome.text)
            )

    # -- a long call -----------------------------------------------------------------------

    async def _call(
        self, toolbox: ToolBox, step: ToolStep, arguments: dict[str, object]
    ) -> ToolOutcome:
        """The call, with its progress shown and the user asked each time it has run for
        its timeout. ToolCallError when it failed, or the user stopped it."""
        node, tree = self._node, self._node.tree
        timeout = toolbox.timeout(step.function) or node.limits.tool_call_timeout
        found: list[ToolOutcome] = []
        failed: list[Exception] = []
        done = anyio.Event()
        began = time.monotonic()

        def progress(done_: float, total: float | None, message: str | None) -> None:
            step.progress = {"progress": done_, "total": total, "message": message}
            self._progress_changed(step)

        async def ask(question: Question) -> Answer:
            return await tree.questions.ask(node.buffer, step, question)

        async def call() -> None:
            try:
                found.append(await toolbox.call(step.function, arguments, progress, ask))
            except Exception as exc:  # given to the caller as it is
                failed.append(exc)
            finally:
                done.set()
                # A question its server asked with a request of its own outlives the call.
                tree.questions.drop(step)

        stopped = False
        async with anyio.create_task_group() as group:
            group.start_soon(call)
            while not done.is_set():
                with anyio.move_on_after(timeout):
                    await done.wait()
                if done.is_set() or tree.questions.asking(step):
                    continue  # a call waiting for the user's answer is not late
                if await tree.overdue.ask(node.buffer, step, time.monotonic() - began):
                    continue
                stopped = True
                group.cancel_scope.cancel()  # the tool's server is told (MCP: cancelled)
                break
        if stopped:  # raised out here: inside, the task group would wrap it in a group
            waited = _duration(time.monotonic() - began)
            raise ToolCallError(
                f"{STOPPED_BY_USER}{waited}: the call took longer than they wanted to wait."
            )
        if failed:
            raise failed[0]
        return found[0]

    def _progress_changed(self, step: ToolStep) -> None:
        """A progress report: the step is sent at most once per interval (the last report
        of a burst is sent with the next change, or the result)."""
        now = time.monotonic()
        if now - self._progress_sent.get(step.id, 0.0) >= self._node.limits.agents.update_interval:
            self._progress_sent[step.id] = now
            self._node.buffer.step_changed(step)


def _duration(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _approval(step: ToolStep) -> ApprovalJSON:
    approval: ApprovalJSON = {
        "call_id": step.id,
        "server": step.server,
        "tool": step.name,
        "function": step.function,
        "arguments": step.arguments,
    }
    if step.guard is not None:
        approval["reason"] = step.guard["reason"]
        approval["sources"] = step.guard["sources"]
    return approval


def parsed_arguments(call: ToolCallJSON) -> dict[str, object] | ValueError:
    """A call's arguments as an object, or what is wrong with them."""
    try:
        return parse_arguments(call["function"]["arguments"])
    except ValueError as exc:
        return exc


def well_formed(call: ToolCallJSON, arguments: dict[str, object] | ValueError) -> ToolCallJSON:
    """A call as it goes back to the model in the history: a name and JSON-object arguments
    even when the model wrote neither (strict upstreams refuse anything else; the step's
    error result tells the model what was wrong)."""
    name = call["function"]["name"]
    text = "{}" if isinstance(arguments, ValueError) else call["function"]["arguments"]
    function: ToolFunctionJSON = {"name": name or "unnamed_tool", "arguments": text}
    return {"id": call["id"], "type": "function", "function": function}
