"""What "Use tools" shows for a chat's setting beside each kind of model (no Qt)."""

from __future__ import annotations

from desktop.composer.tools_switch import CAN_CALL, SwitchLook, ToolsSwitch
from server.types import ModelStatusJSON


def model(name: str, tools: bool | None) -> ModelStatusJSON:
    return {
        "name": name, "kind": "local", "state": "ready", "error": None, "in_use": False,
        "slots": 1, "slots_busy": 0, "queue_length": 0, "tools": tools,
    }  # fmt: skip


def test_a_model_that_cannot_call_tools_holds_the_switch_off_and_says_why() -> None:
    switch = ToolsSwitch()
    switch.show_model(model("tiny", tools=False))
    look = switch.look()
    assert (look.checked, look.enabled) == (False, False)
    assert look.tooltip.startswith("tiny cannot call tools")
    assert switch.wanted and not switch.usable  # the chat's setting is not touched


def test_beside_a_model_that_calls_tools_or_is_not_known_the_chat_setting_shows() -> None:
    switch = ToolsSwitch()
    switch.wanted = False
    for ability in (True, None):  # None: not known yet (an upstream not asked)
        switch.show_model(model("big", tools=ability))
        assert switch.look() == SwitchLook(checked=False, enabled=True, tooltip=CAN_CALL)
    switch.show_model(None)  # the picker has no status yet
    switch.wanted = True
    assert switch.look() == SwitchLook(checked=True, enabled=True, tooltip=CAN_CALL)
