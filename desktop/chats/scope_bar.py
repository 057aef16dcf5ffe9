"""What the sidebar's list of chats shows, said above it: the open project's name (or
"Chats" for those outside every project), a button to its memory, and, while a project is
open and a search typed, whether it looks in that project only (on by default) or in every
chat (hidden the rest of the time: it says nothing until there is a search)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.chats.headers import header_font
from desktop.look.icons import icon
from desktop.look.palette import palette
from desktop.look.scale import SPACING
from desktop.look.theme import is_dark

OUTSIDE = "Chats"


class ScopeBar(QWidget):
    memory_requested = Signal()  # the memory of the chats shown
    within_changed = Signal(bool)  # a search looks in the open project only

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chats-scope")
        self.title = QLabel(OUTSIDE, self)
        self.title.setObjectName("chats-scope-title")
        self.title.setFont(header_font(self.font()))
        self.memory_button = QToolButton(self)
        self.memory_button.setObjectName("scope-memory")
        self.memory_button.setToolTip("Memory of these chats")
        self.memory_button.setAccessibleName("Memory of these chats")
        self.within = QCheckBox(self)
        self.within.setObjectName("search-in-project")
        self.within.setChecked(True)
        self.within.hide()
        self._project = False
        self._searching = False
        row = QHBoxLayout()
        row.setContentsMargins(SPACING["m"], SPACING["s"], SPACING["xs"], 0)
        row.addWidget(self.title, 1)
        row.addWidget(self.memory_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.within)
        self._paint()
        self.memory_button.clicked.connect(self.memory_requested)
        self.within.toggled.connect(self.within_changed)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._paint()

    def _paint(self) -> None:
        self.memory_button.setIcon(icon("memory", self.palette()))
        muted = palette(is_dark(self.palette())).muted
        self.title.setStyleSheet(f"color: {muted}; background: transparent;")

    def show_scope(self, project_name: str | None) -> None:
        """The list shows this project's chats (None: those outside every project)."""
        self.title.setText(project_name or OUTSIDE)
        if project_name:
            self.within.setText(f"Only in “{project_name}”")
        self._project = project_name is not None
        self.within.setVisible(self._project and self._searching)

    def show_searching(self, searching: bool) -> None:
        """Whether a search is typed (the switch shows with it, while a project is open)."""
        self._searching = searching
        self.within.setVisible(self._project and self._searching)

    def searching_within(self) -> bool:
        """A search looks in the open project only (with none open: in every chat)."""
        return self._project and self.within.isChecked()
