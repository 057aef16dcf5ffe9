"""The sign-ins waiting for the browser to come back: the authorization server redirects the
browser to Parley's own loopback address (`CALLBACK_PATH`), with the authorization code and the
`state` the flow sent.

That route cannot ask for Parley's per-launch token (the browser does not have it), so the
`state` is what binds a redirect to a flow: a 256-bit value the SDK drew for that one flow.
A redirect whose `state` is not waiting here is refused; one that is, is taken (single use),
within `ToolLimits.redirect_ttl` of the flow's start. A flow that ends (signed in, failed,
cancelled by a stop or a shutdown) discards its entry.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import anyio

from server.limits import ToolLimits

CALLBACK_PATH = "/oauth/callback"


@dataclass(frozen=True)
class Redirect:
    """What the authorization server sent back through the browser."""

    state: str
    code: str | None = None
    iss: str | None = None  # RFC 9207, when the server sends it
    error: str | None = None  # RFC 6749 §4.1.2.1: the user refused, the server failed...
    error_description: str | None = None


@dataclass
class Waiting:
    """One flow's wait for its redirect."""

    server: str
    deadline: float  # time.monotonic()
    came: anyio.Event = field(default_factory=anyio.Event)
    redirect: Redirect | None = None
    # The flow ended, however (the redirect's page waits for it to say how).
    finished: anyio.Event = field(default_factory=anyio.Event)
    failure: str | None = None  # why it did not sign in, when it did not


@dataclass
class PendingRedirects:
    ttl: float = ToolLimits.redirect_ttl
    _waiting: dict[str, Waiting] = field(default_factory=dict)

    def expect(self, state: str, server: str) -> Waiting:
        waiting = Waiting(server, time.monotonic() + self.ttl)
        self._waiting[state] = waiting
        return waiting

    def take(self, redirect: Redirect) -> Waiting | None:
        """The flow this redirect is for, handed its redirect; None: no flow waits for that
        `state` (never sent, already used, ended, or expired)."""
        waiting = self._waiting.pop(redirect.state, None)
        if waiting is None or time.monotonic() > waiting.deadline:
            return None
        waiting.redirect = redirect
        waiting.came.set()
        return waiting

    def discard(self, state: str) -> None:
        self._waiting.pop(state, None)

    def __len__(self) -> int:
        return len(self._waiting)
