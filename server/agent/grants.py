"""What the user allowed from an approval card for the rest of a chat (server/agent/
approvals.py): one tool; every tool of its server; or one tool's calls whose named string
argument lies under a prefix they fixed (a folder: server/agent/argument_scope.py).

Every grant is for one chat, and kept in memory on purpose: after a restart every chat asks
again, so nothing runs after a restart without an approval given since (docs/api.md). What
lasts beyond a chat is the tools' settings (a tool's trust, or its server's "allow", in the MCP
configuration), chosen where the user reads what the tool does, not on a card while the model
waits. A grant never satisfies the injection guard: a call it holds asks all the same (server/
agent/guard.py), whatever the grant's scope.

The tools' settings list the grants and revoke them one by one (`GET`/`DELETE
/api/tools/grants`); a change of a server's entry or of a tool's trust ends the grants of it.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from server.agent.argument_scope import lies_under
from server.ids import new_id
from server.types import AllowedJSON

GrantScope = Literal["chat", "server", "arguments"]


@dataclass(frozen=True)
class Grant:
    conversation_id: str
    server: str
    tool: str | None  # None: every tool of the server
    argument: str | None = None  # with `under`: the tool's calls whose argument lies there
    under: str | None = None
    id: str = field(default_factory=new_id, compare=False)
    granted_at: float = field(default_factory=time.time, compare=False)

    @property
    def scope(self) -> GrantScope:
        if self.tool is None:
            return "server"
        return "chat" if self.argument is None else "arguments"

    def covers(self, server: str, tool: str, arguments: Mapping[str, object] | None) -> bool:
        if server != self.server or self.tool not in (None, tool):
            return False
        if self.argument is None or self.under is None:
            return True
        return arguments is not None and lies_under(arguments.get(self.argument), self.under)

    def allowed(self, by: Literal["you", "grant"]) -> AllowedJSON:
        """How a call it let run says so on its step."""
        record: AllowedJSON = {"by": by, "scope": self.scope}
        if self.argument is not None and self.under is not None:
            record["argument"], record["under"] = self.argument, self.under
        return record


class ChatGrants:
    """Every chat's grants, while Parley runs (one per app, shared by its runs)."""

    def __init__(self) -> None:
        self._grants: list[Grant] = []

    def all(self) -> list[Grant]:
        return list(self._grants)

    def covering(
        self, conversation_id: str, server: str, tool: str, arguments: Mapping[str, object] | None
    ) -> Grant | None:
        """The grant of the chat that lets this call run unasked, if one does."""
        return next(
            (
                grant
                for grant in self._grants
                if grant.conversation_id == conversation_id
                and grant.covers(server, tool, arguments)
            ),
            None,
        )

    def grant(self, grant: Grant) -> Grant:
        """Keep a grant (the same one given again is kept once: the first)."""
        same = next((g for g in self._grants if g == grant), None)
        if same is not None:
            return same
        self._grants.append(grant)
        return grant

    def remove(self, grant_id: str) -> bool:
        """The user revoked it: the next call it covered asks again. False: no such grant."""
        kept = [grant for grant in self._grants if grant.id != grant_id]
        removed = len(kept) != len(self._grants)
        self._grants = kept
        return removed

    def forget(self, conversation_id: str) -> None:
        """The conversation was deleted."""
        self._grants = [g for g in self._grants if g.conversation_id != conversation_id]

    def revoke(self, server: str, tool: str | None = None) -> None:
        """The user changed how far this tool (None: every tool of the server) is trusted, or
        the server's entry: every chat's grant of it ends (a server-wide grant too), so the
        trust set now is the one the next call meets."""
        self._grants = [g for g in self._grants if not _of(g, server, tool)]


def _of(grant: Grant, server: str, tool: str | None) -> bool:
    return grant.server == server and (tool is None or grant.tool in (None, tool))
