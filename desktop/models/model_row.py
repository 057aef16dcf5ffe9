"""One model on the models page, as a row: its name and facts (size, quantization, context,
fits, can call tools, where it came from), its state in words with its memory, and the
actions it allows — Load or Eject, Set default, Settings, Remove — on the row itself.

The row is updated in place every refresh (never rebuilt), so focus and hover stay put. It
only shows and asks: each action is a signal with the model's name."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.models import words
from server.types import ModelJSON


def row_button(text: str, tip: str, parent: QWidget) -> QPushButton:
    button = QPushButton(text, parent)
    button.setToolTip(tip)
    button.setAccessibleName(text)
    button.setAutoDefault(False)  # Return in the search box must not press a row's button
    return button


def tone(label: QLabel, value: str) -> None:
    """Set the colour class a label is drawn in (the page's style sheet reads it)."""
    if label.property("tone") != value:
        label.setProperty("tone", value)
        label.style().unpolish(label)
        label.style().polish(label)


class LineLabel(QLabel):
    """One line that never widens its row (a long file name would push the row's buttons
    out of sight): what does not fit ends in "…"; `text()` is the whole line, and the
    tooltip is the one given (the whole line when none is)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._whole = ""
        self._tip = ""

    def setText(self, text: str) -> None:
        self._whole = text
        self.setAccessibleName(text)
        self._fit()

    def text(self) -> str:
        return self._whole

    def setToolTip(self, tip: str) -> None:
        self._tip = tip
        self._fit()

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        shown = self.fontMetrics().elidedText(
            self._whole, Qt.TextElideMode.ElideRight, self.width()
        )
        super().setText(shown)
        super().setToolTip(self._tip or (self._whole if shown != self._whole else ""))


class RowFrame(QFrame):
    """A card: a title line, a line of facts, a state line, buttons on the right."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("model-row")
        self.title = LineLabel(self)
        self.title.setObjectName("row-title")
        self.facts = LineLabel(self)
        self.facts.setObjectName("row-facts")
        self.state = QLabel(self)
        self.state.setObjectName("row-state")
        self.state.setWordWrap(True)  # a failure's reason, however long, wraps in the row
        wrapping = self.state.sizePolicy()
        wrapping.setHorizontalPolicy(QSizePolicy.Policy.Ignored)
        self.state.setSizePolicy(wrapping)
        self.text_column = QVBoxLayout()
        self.text_column.setSpacing(4)
        for label in (self.title, self.facts, self.state):
            self.text_column.addWidget(label)
        self.buttons = QHBoxLayout()
        self.buttons.setSpacing(8)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        layout.setSpacing(16)
        layout.addLayout(self.text_column, 1)
        layout.addLayout(self.buttons)


class ModelRow(RowFrame):
    load_requested = Signal(str)
    eject_requested = Signal(str)
    default_requested = Signal(str)
    remove_requested = Signal(str)
    settings_requested = Signal(str)  # show (or hide) its settings under the list

    def __init__(self, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self.model: ModelJSON | None = None
        self.origin = ""  # "from <repository>" when a download made it
        self.load_button = row_button("Load", "Load it now, ready for the next reply", self)
        self.eject_button = row_button("Eject", "Unload it: its memory is freed now", self)
        self.default_button = row_button("Set default", "New chats use this model", self)
        self.settings_button = row_button("Settings", "Its context, threads and GPU", self)
        self.remove_button = row_button("Remove", "Forget it (the file stays on disk)", self)
        for button in (self.load_button, self.eject_button, self.default_button,
                       self.settings_button, self.remove_button):  # fmt: skip
            self.buttons.addWidget(button)
        self.load_button.clicked.connect(self._on_load_button_clicked)
        self.eject_button.clicked.connect(lambda: self.eject_requested.emit(self.name))
        self.default_button.clicked.connect(lambda: self.default_requested.emit(self.name))
        self.settings_button.clicked.connect(lambda: self.settings_requested.emit(self.name))
        self.remove_button.clicked.connect(lambda: self.remove_requested.emit(self.name))

    def show_model(self, model: ModelJSON, origin: str = "") -> None:
        self.model, self.origin = model, origin
        default = model.get("default", False)
        self.title.setText(model["name"] + (" · default" if default else ""))
        self.setAccessibleName(f"Model {model['name']}")
        facts = [words.facts_words(model)]
        fits, figures = words.fit_words(model)
        if fits:
            facts.append(fits)
        tools, why = words.tools_words(model)
        if tools:
            facts.append(tools)
        if origin:
            facts.append(origin)
        self.facts.setText(" · ".join(facts))
        gguf = model.get("gguf")
        where = gguf["path"] if gguf is not None else ""
        self.facts.setToolTip("\n\n".join(t for t in (where, figures, why) if t))
        self.state.setText(words.state_words(model))
        tone(self.state, words.state_tone(model))
        local = model["kind"] == "local"
        lifecycle = model.get("lifecycle")
        loaded = lifecycle in ("loaded", "busy", "loading")
        self.load_button.setVisible(local and not loaded)
        self.load_button.setEnabled(True)
        self.eject_button.setVisible(local and loaded)
        self.eject_button.setEnabled(lifecycle != "loading")
        self.default_button.setEnabled(not default)
        self.default_button.setText("Default" if default else "Set default")
        self.settings_button.setVisible(local and "settings" in model)
        self.remove_button.setVisible(model.get("removable", False))
        for button in (self.load_button, self.eject_button, self.default_button,
                       self.settings_button, self.remove_button):  # fmt: skip
            button.setAccessibleName(f"{button.text()}: {model['name']}")  # which row's

    def _on_load_button_clicked(self) -> None:
        # Said at once: a load takes seconds, and the server's next word replaces this.
        self.state.setText("Loading…")
        tone(self.state, "warning")
        self.load_button.setEnabled(False)
        self.load_requested.emit(self.name)

    def text(self) -> str:
        """What the row says, as one line (for tests and screen readers)."""
        return " · ".join(label.text() for label in (self.title, self.facts, self.state))
