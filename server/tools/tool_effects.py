"""An MCP tool's effect class (server/agent/effects.py): read from its annotations, with the
user's override from the tools' settings (`"toolEffect": {"TOOL": {"readOnly": true, ...}}`
in a server's entry), checked here once."""

from __future__ import annotations

from typing import Any, cast

import mcp_types

from server.agent.effects import Effect, from_hints, overridden
from server.errors import ConfigEntryError
from server.types.tools import ToolEffectJSON

EFFECT_KEYS = tuple(ToolEffectJSON.__annotations__)  # every key is optional


def check_effect(value: object, where: str) -> ToolEffectJSON:
    """An override as the file keeps it; ConfigEntryError naming what is wrong."""
    if not isinstance(value, dict) or not set(value) <= set(EFFECT_KEYS):
        raise ConfigEntryError(f"{where} must be an object of " + ", ".join(EFFECT_KEYS))
    for key, hint in value.items():
        if not isinstance(hint, bool):
            raise ConfigEntryError(f"{where}.{key} must be true or false")
    return cast(ToolEffectJSON, value)


def check_tool_effects(entry: dict[str, Any]) -> None:
    value = entry.get("toolEffect", {})
    if not isinstance(value, dict):
        raise ConfigEntryError("'toolEffect' must be an object of tool names and effects")
    for tool, effect in value.items():
        check_effect(effect, f"'toolEffect.{tool}'")


def announced(tool: mcp_types.Tool) -> Effect:
    """What the tool's server says it can do (the spec's defaults for what it leaves out)."""
    hints = tool.annotations
    if hints is None:
        return from_hints(None, None, None)
    return from_hints(hints.read_only_hint, hints.destructive_hint, hints.open_world_hint)


def effect_of(tool: mcp_types.Tool, override: ToolEffectJSON | None) -> Effect:
    """What the tool can do as the guard reads it: the user's word over the server's."""
    return overridden(announced(tool), override)
