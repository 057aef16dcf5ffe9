"""Which MCP servers' tools a chat offers, in its settings: one tick per server, with
what its tools' definitions take of every prompt ("~1.2k tokens"); all of them by default. A
small model's context is better spent on the chat than on tools it will not use."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QGroupBox, QLabel, QVBoxLayout, QWidget

from desktop.look.figures import tools_cost
from server.types.tools import ToolServerJSON

ABOUT = "Each server's tools' definitions are sent with every message of this chat."


class ToolServersChoice(QGroupBox):
    def __init__(
        self, chosen: list[str] | None, servers: list[ToolServerJSON], parent: QWidget | None
    ) -> None:
        """`chosen`: the chat's servers (None: every one); `servers`: those configured."""
        super().__init__("Tools this chat offers", parent)
        self.setObjectName("tool-servers-choice")
        self.boxes: dict[str, QCheckBox] = {}
        layout = QVBoxLayout(self)
        about = QLabel(ABOUT, self)
        about.setWordWrap(True)
        layout.addWidget(about)
        for server in servers:
            name = server["name"]
            box = QCheckBox(f"{name} — {tools_cost(server.get('definition_tokens', 0))}", self)
            box.setAccessibleName(f"Offer the tools of {name}")
            box.setChecked(chosen is None or name in chosen)
            layout.addWidget(box)
            self.boxes[name] = box
        # A server the chat names that is no longer configured stays chosen as it was.
        self._gone = [name for name in chosen or [] if name not in self.boxes]

    def value(self) -> list[str] | None:
        """The servers ticked (None: every one is, as for a new server added later)."""
        ticked = [name for name, box in self.boxes.items() if box.isChecked()]
        if len(ticked) == len(self.boxes) and not self._gone:
            return None
        return ticked + self._gone
