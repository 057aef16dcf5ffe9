"""An MCP entry's keys are read from its TypedDicts; the lists that sort them (what an import
keeps, what a change restarts nothing for) must place every key, so a new one is not left
out of either by accident."""

from __future__ import annotations

from server.tools.entry_fields import OAUTH_KEYS
from server.tools.importing import KEPT_KEYS
from server.tools.manager import TRUST_KEYS
from server.tools.tool_effects import EFFECT_KEYS
from server.types.tools import ToolEffectJSON, ToolServerConfigJSON, ToolServerOAuthJSON

# Neither kept from another app's entry (its sign-in is another client's) nor a trust key
# (a change to it restarts the server).
NEITHER = {"oauth"}


def test_every_key_of_an_entry_is_placed_once() -> None:
    placed = [*KEPT_KEYS, *TRUST_KEYS, *NEITHER]
    assert sorted(placed) == sorted(ToolServerConfigJSON.__annotations__)


def test_the_sign_in_and_effect_keys_are_their_shapes() -> None:
    assert set(OAUTH_KEYS) == set(ToolServerOAuthJSON.__annotations__)
    assert set(EFFECT_KEYS) == set(ToolEffectJSON.__annotations__)
