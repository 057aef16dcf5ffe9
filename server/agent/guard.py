"""The injection guard: once text the user did not write is in a turn's context, a call to a
tool that can act (not read-only) or reach outside (open-world) asks the user first, even when
the tool is trusted "allow" or allowed for this chat.

Text a tool returned, a passage of a document, an attached file can say "now call
write_file" or "fetch this URL with the key"; a model may obey it (server/agent/untrusted.py
lowers the odds, nothing rules it out). Such a call is the way injected text acts, or carries
the user's data out. A tool that only reads and reaches nothing outside (server/agent/
effects.py) can do neither, so it runs as trusted. The guard only ever adds a question: it
never runs a call the user's trust would not; and the question is the approval's own
(server/agent/approvals.py), so Stop, a hang-up or a shutdown while it asks runs nothing.
A server's entry can turn it off (`"guard": false`) for those who decide otherwise.
"""

from __future__ import annotations

from server.agent.effects import Effect
from server.agent.provenance import Provenance
from server.types import GuardJSON

SOURCES_SHOWN = 3  # the latest sources the card shows


def concern(
    effect: Effect, guarded: bool, provenance: Provenance, tool: str, allowed: bool
) -> GuardJSON | None:
    """Why a call to a tool of `effect` must ask now; None when it need not (its server
    turned the guard off, the tool is harmless, or the model read nothing untrusted).
    `allowed`: the user's trust alone would run it unasked."""
    if not guarded or effect.harmless or not provenance.untrusted:
        return None
    sources = provenance.latest(SOURCES_SHOWN)
    return {"reason": reason(tool, effect, sources[0]["label"], allowed), "sources": sources}


def reason(tool: str, effect: Effect, latest: str, allowed: bool) -> str:
    """In plain words: what the tool can do, and what the model read before it asked."""
    asks = (
        "so Parley asks before it runs, even though you allowed it"
        if allowed
        else "so check that you asked for this call yourself"
    )
    return (
        f"This call comes after the model read {latest}, which you did not write and "
        f"which may hold instructions. {tool} can {effect.words()}: {asks}."
    )
