"""How far the tools of an MCP server are trusted: the selected server's tools, each
with a choice of when its calls may run, and the server's own trust in its entry.

A tool's choice is the override kept in its entry's `toolTrust` (the server writes it:
`PUT /api/tools/servers/{name}/tools/{tool}`); "Server default" is no override, so the entry's
`trust` applies. The table only shows and asks: a choice is emitted and stays shown while it
is on its way; once the dialog says it was answered, the stored value is shown again (the new
one, or the old one after a failure). Beside it, what the tool can do as the user says
(tool_effect.py), saved the same way.
"""

from __future__ import annotations

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from desktop.tools.tool_effect import EffectBox
from server.types import Trust
from server.types.tools import ToolInfoJSON, ToolServerJSON

# A tool's own choices, in the order offered (after "Server default").
TOOL_TRUSTS: tuple[tuple[Trust, str], ...] = (
    ("ask", "Ask every time"),
    ("chat", "Ask once per chat"),
    ("allow", "Always allow"),
    ("never", "Never"),
)
SERVER_TRUSTS = {"ask": "Ask before each call", "allow": "Allow every call without asking"}
TOOL, TRUST, EFFECT, DESCRIPTION = range(4)


def describe_trust(trust: Trust | None, server_trust: str) -> str:
    """A tool's choice as the dialog words it ("Server default (ask)" for no override)."""
    if trust is None:
        return f"Server default ({server_trust})"
    return dict(TOOL_TRUSTS)[trust]


def as_trust(value: object) -> Trust | None:
    """A tool's trust as a signal carried it (None: the server's default)."""
    return next((trust for trust, _label in TOOL_TRUSTS if trust == value), None)


class TrustBox(QComboBox):
    """One tool's choice: the server's default (no override) or one of TOOL_TRUSTS."""

    chosen = Signal(str, object)  # the tool's name, its trust or None (the server's)

    def __init__(self, tool: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tool = tool
        self.setAccessibleName(f"When {tool} may run")
        self.addItem(describe_trust(None, "ask"))
        for _trust, label in TOOL_TRUSTS:
            self.addItem(label)
        self.currentIndexChanged.connect(self._on_current_index_changed)

    def trust(self) -> Trust | None:
        """The choice shown: None for the server's default."""
        index = self.currentIndex()
        return TOOL_TRUSTS[index - 1][0] if index > 0 else None

    def show_trust(self, tool: ToolInfoJSON, server_trust: str) -> None:
        """Show the stored choice (not emitted: only the user's choices are)."""
        override = tool["trust_override"]
        index = 0 if override is None else 1 + [t for t, _ in TOOL_TRUSTS].index(override)
        with QSignalBlocker(self):
            self.setItemText(0, describe_trust(None, server_trust))
            self.setCurrentIndex(index)
        effective = describe_trust(tool["trust"], server_trust)
        self.setToolTip(f"Its calls now: {effective.lower()}")

    def _on_current_index_changed(self, _index: int) -> None:
        self.chosen.emit(self.tool, self.trust())


class ToolTrustTable(QTableWidget):
    """The selected server's tools: name, when each may run, what it does."""

    trust_chosen = Signal(str, str, object)  # a server's name, a tool's, its trust or None
    effect_chosen = Signal(str, str, object)  # a server's name, a tool's, its effect or None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 4, parent)
        self.setObjectName("tool-trust")
        self.setAccessibleName("The selected server's tools and when each may run")
        headers = ["Tool", "When the model calls it", "What it can do", "What it does"]
        self.setHorizontalHeaderLabels(headers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.verticalHeader().setVisible(False)
        header = self.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self._shown: tuple[str | None, list[str]] = (None, [])
        self._pending: set[tuple[str, str]] = set()  # chosen, not answered yet

    def show_server(self, server: ToolServerJSON | None) -> None:
        """Its tools and their stored choices; a choice on its way stays as chosen."""
        name = server["name"] if server is not None else None
        tools = server["tools"] if server is not None else []
        if (name, [t["name"] for t in tools]) != self._shown:
            self._rebuild(name, tools)
        if server is None:
            return
        for row, tool in enumerate(tools):
            if (server["name"], tool["name"]) not in self._pending:
                self.box(row).show_trust(tool, server["trust"])
                self.effect_box(row).show_effect(tool)

    def settle(self, server: str, tool: str) -> None:
        """A choice was answered: from the next `show_server` on, the stored value shows."""
        self._pending.discard((server, tool))

    def box(self, row: int) -> TrustBox:
        widget = self.cellWidget(row, TRUST)
        if not isinstance(widget, TrustBox):
            raise LookupError(f"no tool at row {row}")
        return widget

    def effect_box(self, row: int) -> EffectBox:
        widget = self.cellWidget(row, EFFECT)
        if not isinstance(widget, EffectBox):
            raise LookupError(f"no tool at row {row}")
        return widget

    def box_of(self, tool: str) -> TrustBox:
        for row in range(self.rowCount()):
            if self.box(row).tool == tool:
                return self.box(row)
        raise LookupError(f"no tool {tool!r} shown")

    def _rebuild(self, server: str | None, tools: list[ToolInfoJSON]) -> None:
        self._shown = (server, [t["name"] for t in tools])
        self.setRowCount(0)
        self.setRowCount(len(tools))
        for row, tool in enumerate(tools):
            name = QTableWidgetItem(tool["name"])
            name.setToolTip(f"The model calls it {tool['function']}")
            description = tool["description"].strip() or "(no description)"
            about = QTableWidgetItem(description.splitlines()[0])
            about.setToolTip(description)
            about.setData(Qt.ItemDataRole.AccessibleTextRole, description)
            self.setItem(row, TOOL, name)
            self.setItem(row, DESCRIPTION, about)
            box = TrustBox(tool["name"], self)
            box.chosen.connect(self._on_box_chosen)
            self.setCellWidget(row, TRUST, box)
            effect = EffectBox(tool["name"], self)
            effect.chosen.connect(self._on_effect_chosen)
            self.setCellWidget(row, EFFECT, effect)

    def _on_box_chosen(self, tool: str, trust: object) -> None:
        server = self._shown[0]
        if server is not None:
            self._pending.add((server, tool))
            self.trust_chosen.emit(server, tool, trust)

    def _on_effect_chosen(self, tool: str, effect: object) -> None:
        server = self._shown[0]
        if server is not None:
            self._pending.add((server, tool))
            self.effect_chosen.emit(server, tool, effect)


class ServerTrustBox(QComboBox):
    """A server's own trust, as its entry says (`"trust"`): the editor writes it there."""

    chosen = Signal(str)  # "ask" or "allow"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("The server's tools by default")
        for label in SERVER_TRUSTS.values():
            self.addItem(label)
        self.currentIndexChanged.connect(self._on_current_index_changed)

    def trust(self) -> str:
        return list(SERVER_TRUSTS)[self.currentIndex()]

    def show_trust(self, trust: object) -> None:
        """Show an entry's `trust` (anything but "allow" asks, as the server reads it)."""
        with QSignalBlocker(self):
            self.setCurrentIndex(1 if trust == "allow" else 0)

    def _on_current_index_changed(self, _index: int) -> None:
        self.chosen.emit(self.trust())
