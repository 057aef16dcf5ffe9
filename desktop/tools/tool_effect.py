"""What a tool can do, as the user says (the tools' table, beside its trust): "As the server
says", or one of read-only / writes / destructive / open-world, kept in its server's entry
(`toolEffect`, written by `PUT /api/tools/servers/{name}/tools/{tool}` with `effect`). The
injection guard reads it from the next call on: a tool said to only read here runs as trusted
after text the user did not write; one said to write or reach outside is asked then
(server/agent/effects.py). A server's annotations are its own claim; the user's word wins.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import QComboBox, QWidget

from server.types.tools import ToolEffectJSON, ToolInfoJSON

# The user's words for a tool, each as the hints it sets (all three: no hint of the server's
# is left half-overridden).
EFFECTS: tuple[tuple[str, ToolEffectJSON], ...] = (
    ("Only reads, here", {"readOnly": True, "destructive": False, "openWorld": False}),
    ("Writes, here", {"readOnly": False, "destructive": False, "openWorld": False}),
    ("May delete, here", {"readOnly": False, "destructive": True, "openWorld": False}),
    ("Reaches outside", {"readOnly": False, "destructive": True, "openWorld": True}),
)
SERVER_SAYS = "As the server says"


def effect_words(effect: ToolEffectJSON) -> str:
    """What a tool can do, in a few words (as the guard reads it)."""
    does: list[str] = []
    if effect.get("readOnly"):
        does.append("only reads")
    else:
        does.append("may delete" if effect.get("destructive", True) else "writes")
    does.append("reaches outside" if effect.get("openWorld", True) else "here")
    return ", ".join(does)


class EffectBox(QComboBox):
    """One tool's effect: the server's word (no override) or one of EFFECTS."""

    chosen = Signal(str, object)  # the tool's name, its override (a dict) or None

    def __init__(self, tool: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tool = tool
        self.setAccessibleName(f"What {tool} can do")
        self.addItem(SERVER_SAYS)
        for label, _effect in EFFECTS:
            self.addItem(label)
        self.currentIndexChanged.connect(self._on_current_index_changed)

    def effect(self) -> ToolEffectJSON | None:
        index = self.currentIndex()
        return EFFECTS[index - 1][1].copy() if 0 < index <= len(EFFECTS) else None

    def show_effect(self, tool: ToolInfoJSON) -> None:
        """Show the stored override (not emitted: only the user's choices are); one set by
        hand that is none of EFFECTS is shown as it is, as an extra item."""
        override = tool.get("effect_override")
        with QSignalBlocker(self):
            while self.count() > 1 + len(EFFECTS):
                self.removeItem(self.count() - 1)
            server_says = effect_words(tool.get("effect") or {}) if override is None else ""
            self.setItemText(0, f"{SERVER_SAYS} ({server_says})" if server_says else SERVER_SAYS)
            if override is None:
                self.setCurrentIndex(0)
            else:
                index = next((i for i, (_, e) in enumerate(EFFECTS) if e == override), None)
                if index is None:
                    self.addItem(f"Set by hand: {effect_words(override)}")
                    self.setCurrentIndex(self.count() - 1)
                else:
                    self.setCurrentIndex(1 + index)
        self.setToolTip(f"As Parley takes it now: {effect_words(tool.get('effect') or {})}")

    def _on_current_index_changed(self, index: int) -> None:
        if index <= len(EFFECTS):  # the extra item says what the file holds: not a choice
            self.chosen.emit(self.tool, self.effect())
