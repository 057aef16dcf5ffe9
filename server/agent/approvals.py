"""Asking before a tool acts: which calls wait for the user, the wait, and the
user's decision, with how far an allow reaches (this call, this tool for the chat, every tool
of its server for the chat, or calls whose named argument lies under a prefix: server/agent/
grants.py). Who let each call run, under which scope, is kept on its step (`allowed`).

A call to a tool trusted "ask" (the default for an MCP server's tools) or "chat" waits for a
decision, unless a grant of this chat covers it; "allow" runs at once; "never" is
refused unasked. The wait is an `anyio.Event` inside the run's cancel scope, so Stop, a
hang-up or shutdown end it like anything else the run awaits; `close()` (called by the run's
synchronous `stop`) makes every later decision a 409, so nothing runs once the run stops. The
model is not leased while a call waits (it is leased per model call only).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import anyio

from server.agent.argument_scope import check_prefix, lies_under
from server.agent.grants import ChatGrants, Grant
from server.agent.steps import DENIED, ToolStep, parse_arguments
from server.errors import BadRequestError, ConflictError
from server.types import AllowedJSON, Decision, Remember, Trust

__all__ = ["Approvals", "ChatGrants", "Scope"]


@dataclass(frozen=True)
class Scope:
    """How far an allow on a card reaches: `remember`, and with "arguments" the string
    argument and the prefix (a folder) its value must lie under."""

    remember: Remember = "once"
    argument: str | None = None
    under: str | None = None


Verdict = Literal["run", "ask", "refuse"]


@dataclass
class _Waiting:
    step: ToolStep
    trust: Trust
    decided: anyio.Event = field(default_factory=anyio.Event)


class Approvals:
    """The calls of one turn that wait for the user's decision."""

    def __init__(self, conversation_id: str | None, grants: ChatGrants) -> None:
        self.conversation_id = conversation_id  # None: a turn no one can answer (stateless)
        self._grants = grants
        self._waiting: dict[str, _Waiting] = {}
        self._asked: set[str] = set()  # every call id that waited, decided or not
        self._closed = False

    def allowed_by(self, step: ToolStep, trust: Trust) -> AllowedJSON | None:
        """What lets the call run unasked as the trust and this chat's grants stand (None:
        nothing does)."""
        if trust == "never":
            return None
        if trust == "allow":
            return {"by": "trust", "scope": "always"}
        if self.conversation_id is None:
            return None
        grant = self._grants.covering(
            self.conversation_id, step.server, step.name, _arguments(step)
        )
        return grant.allowed("grant") if grant is not None else None

    def verdict(self, step: ToolStep, trust: Trust, held: bool = False) -> Verdict:
        """Whether a call runs at once, waits for the user, or is refused unasked. `held`:
        the injection guard asks, whatever the trust short of "never" or the grants (server/
        agent/guard.py); with no one to ask, the call is refused."""
        if trust == "never":
            return "refuse"
        if held:
            return "ask" if self.conversation_id is not None else "refuse"
        if self.allowed_by(step, trust) is not None:
            return "run"
        return "ask" if self.conversation_id is not None else "refuse"

    def ask(self, step: ToolStep, trust: Trust) -> None:
        """The call waits for the user from now (a decision may come before `wait`)."""
        step.status = "awaiting_approval"
        self._waiting[step.id] = _Waiting(step, trust)
        self._asked.add(step.id)

    async def wait(self, step: ToolStep) -> bool:
        """Until the user decides on an asked call: True if allowed. Cancelled by the run's
        stop, like any await of the run."""
        waiting = self._waiting.get(step.id)
        if waiting is not None:
            try:
                await waiting.decided.wait()
            finally:
                self._waiting.pop(step.id, None)
        return step.status == "running"

    def close(self) -> None:
        """The run is stopping: no decision is taken from now on."""
        self._closed = True

    def knows(self, call_id: str) -> bool:
        return call_id in self._asked

    def decide(self, call_id: str, decision: Decision, scope: Scope) -> list[ToolStep]:
        """Take the user's decision on a waiting call; return the steps it changed (the
        call's first; an allow for the chat also frees the other waiting calls it covers,
        but not those the guard holds). Raises ConflictError when the call is not waiting
        (decided, or its turn ends), BadRequestError for an argument scope that does not
        fit the call."""
        if self._closed:
            raise ConflictError(
                "this call is no longer waiting for a decision: its turn has ended",
                code="not_awaiting_approval",
            )
        waiting = self._waiting.get(call_id)
        if waiting is None:
            raise ConflictError(
                "this call is not waiting for a decision (it was decided already)",
                code="not_awaiting_approval",
            )
        step = waiting.step
        grant = None
        if decision == "allow":
            grant = self._grant_of(waiting, scope)  # BadRequestError: nothing changed yet
        del self._waiting[call_id]
        changed = [step]
        if decision == "deny":
            step.end("denied", DENIED)
        else:
            step.approve()
            step.allowed = grant.allowed("you") if grant else {"by": "you", "scope": "once"}
        if grant is not None:
            self._grants.grant(grant)
            for other in list(self._waiting.values()):
                # A call the injection guard holds is shown and decided on its own.
                args = _arguments(other.step)
                if grant.covers(other.step.server, other.step.name, args) and not other.step.guard:
                    del self._waiting[other.step.id]
                    other.step.approve()
                    other.step.allowed = grant.allowed("grant")
                    other.decided.set()
                    changed.append(other.step)
        waiting.decided.set()
        return changed

    def _grant_of(self, waiting: _Waiting, scope: Scope) -> Grant | None:
        """The grant an allow gives (None: this call only). A tool trusted "chat" ("ask once
        per chat") is granted for the chat by any allow."""
        step, remember = waiting.step, scope.remember
        if self.conversation_id is None:
            return None
        if remember == "once" and waiting.trust == "chat":
            remember = "chat"
        if remember == "chat":
            return Grant(self.conversation_id, step.server, step.name)
        if remember == "server":
            return Grant(self.conversation_id, step.server, None)
        if remember != "arguments":
            return None
        if not scope.argument or scope.under is None:
            raise BadRequestError(
                "an allow for arguments needs 'argument' (a string argument of the call) and "
                "'under' (the prefix its value must lie under)",
                code="missing_field",
            )
        try:
            under = check_prefix(scope.under)
        except ValueError as exc:
            raise BadRequestError(f"'under': {exc}", code="invalid_field") from exc
        value = (_arguments(step) or {}).get(scope.argument)
        if not isinstance(value, str):
            raise BadRequestError(
                f"this call has no string argument {scope.argument!r}", code="invalid_field"
            )
        if not lies_under(value, under):
            raise BadRequestError(
                f"this call's {scope.argument} ({value!r}) does not lie under {under!r}",
                code="invalid_field",
            )
        return Grant(self.conversation_id, step.server, step.name, scope.argument, under)


def _arguments(step: ToolStep) -> dict[str, object] | None:
    try:
        return parse_arguments(step.arguments)
    except ValueError:
        return None
