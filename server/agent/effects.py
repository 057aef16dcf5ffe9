"""What a tool can do, as the injection guard reads it (server/agent/guard.py).

An MCP tool says it in its annotations: `readOnlyHint` (it changes nothing), `destructiveHint`
(a change may destroy something), `openWorldHint` (it reaches beyond the user's machine and
Parley: the web, someone's mailbox). The spec's defaults for a hint left out are the careful
ones: not read-only, destructive, open-world. The annotations are the server's own claim, so
the user's override (`toolEffect` in the tools' settings) wins hint by hint.

Parley's own tools are classified here too: `search_documents` reads the user's library and
nothing else (read-only, closed-world); `remember` adds a line to a memory file in Parley's
data dir (a write that destroys nothing, closed-world); `delegate` can do whatever the tools
its sub-agent may call can do, so its effect is the widest of theirs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from server.types.tools import ToolEffectJSON


@dataclass(frozen=True)
class Effect:
    """A tool's effect class (the spec's defaults when nothing is known)."""

    read_only: bool = False
    destructive: bool = True
    open_world: bool = True

    @property
    def harmless(self) -> bool:
        """It neither changes anything nor reaches outside: a call of it cannot act on what
        injected text asks, nor carry data out. Such a tool runs as trusted on any text."""
        return self.read_only and not self.open_world

    def widest(self, other: Effect) -> Effect:
        """What a tool that may do what either does can do."""
        return Effect(
            read_only=self.read_only and other.read_only,
            destructive=(not self.read_only and self.destructive)
            or (not other.read_only and other.destructive),
            open_world=self.open_world or other.open_world,
        )

    def words(self) -> str:
        """What it can do, for a person: "can change or delete things and reach the internet"."""
        does: list[str] = []
        if not self.read_only:
            does.append("change or delete things" if self.destructive else "change things")
        if self.open_world:
            does.append("reach beyond this computer")
        return " and ".join(does) if does else "only read"

    def json(self) -> ToolEffectJSON:
        return {
            "readOnly": self.read_only,
            "destructive": self.destructive,
            "openWorld": self.open_world,
        }


UNKNOWN = Effect()  # nothing said: the spec's careful defaults
READS_HERE = Effect(read_only=True, destructive=False, open_world=False)
WRITES_HERE = Effect(read_only=False, destructive=False, open_world=False)
NOTHING = READS_HERE  # a tool that reaches no one (a stand-in that only says what to do)


def from_hints(read_only: bool | None, destructive: bool | None, open_world: bool | None) -> Effect:
    """An effect from MCP's hints as a server gave them (None: not given)."""
    reads = bool(read_only)
    return Effect(
        read_only=reads,
        destructive=False if reads else (True if destructive is None else bool(destructive)),
        open_world=True if open_world is None else bool(open_world),
    )


def overridden(effect: Effect, override: ToolEffectJSON | None) -> Effect:
    """`effect` with the user's word where they gave it."""
    if not override:
        return effect
    read_only = override.get("readOnly", effect.read_only)
    # A tool the user says writes, where its server said it only reads: the careful default.
    claimed = True if effect.read_only else effect.destructive
    return Effect(
        read_only=read_only,
        destructive=False if read_only else override.get("destructive", claimed),
        open_world=override.get("openWorld", effect.open_world),
    )


def widest(effects: Iterable[Effect]) -> Effect:
    """What a tool that may call any of these can do (`delegate`); nothing to call: nothing."""
    found = READS_HERE
    for effect in effects:
        found = found.widest(effect)
    return found
