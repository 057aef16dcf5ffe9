"""What the "Use tools" switch shows: the chat's own setting, as far as the model picked for it
can act on it.

A model that cannot call tools is offered none, whatever the chat says (server/agent/loop.py),
so a ticked switch beside it would claim what does not happen: it shows unticked and disabled,
saying why. The chat's setting is not changed by that: it is kept here, given to a chat created
meanwhile, and shown again once a model that calls tools is picked. No Qt: any surface draws
the look it returns.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.types import ModelStatusJSON

CAN_CALL = (
    "Let the model call the tools of your MCP servers in this chat "
    "(only models that can call tools do)"
)


@dataclass(frozen=True)
class SwitchLook:
    """How a switch is drawn: ticked or not, usable or not, and its tooltip."""

    checked: bool
    enabled: bool
    tooltip: str


def cannot_call(model: str) -> str:
    return (
        f"{model} cannot call tools, so none are offered to it. Pick a model that calls "
        "tools to use them: this chat keeps its own setting for it"
    )


class ToolsSwitch:
    """A chat's "Use tools" setting and the model it is shown beside."""

    def __init__(self) -> None:
        self.wanted = True  # the chat's own setting (a new chat's until it is created)
        self._unable: str | None = None  # the model picked, when it cannot call tools

    def show_model(self, model: ModelStatusJSON | None) -> None:
        """The model picked for the chat, as the server last reported it (None: not known
        yet). Only a model the server says cannot call tools holds the switch off; one not
        known yet (an upstream not asked) may call them."""
        self._unable = model["name"] if model is not None and model.get("tools") is False else None

    @property
    def usable(self) -> bool:
        """The user can change the chat's setting here (its model calls tools)."""
        return self._unable is None

    def look(self) -> SwitchLook:
        if self._unable is not None:
            return SwitchLook(checked=False, enabled=False, tooltip=cannot_call(self._unable))
        return SwitchLook(checked=self.wanted, enabled=True, tooltip=CAN_CALL)
