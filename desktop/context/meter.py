"""The chat's context meter: how much of the model's context the next turn would
take — "3.1k / 4k tokens" ("~" when estimated; no limit when the model's is not known), a
small bar, and a tooltip that breaks it down. Beside it, "Compact now", and while a summary is
being made, what is happening and Stop."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from desktop.look.figures import short_tokens
from desktop.replies.notes import SUMMARISING_NOTE
from server.types import ContextJSON

BAR_WIDTH = 90
BAR_HEIGHT = 6
PENDING_TEXT = "…"
PENDING_TIP = "Counting what the next turn gives the model…"


def meter_text(meter: ContextJSON) -> str:
    about = "~" if meter["estimated"] else ""
    if meter["limit"] is None:
        return f"{about}{short_tokens(meter['used'])} tokens"
    return f"{about}{short_tokens(meter['used'])} / {short_tokens(meter['limit'])} tokens"


def meter_tooltip(meter: ContextJSON) -> str:
    """What the next turn would give the model, part by part."""
    counted = "estimated (3 characters a token)" if meter["estimated"] else "counted"
    messages = meter["messages"]
    lines = [
        f"What the next turn gives {meter['model']}, {counted}:",
        f"  System prompt and summary: {meter['system']:,} tokens",
        f"  History: {meter['history']:,} tokens ({messages} message{'s' * (messages != 1)})",
        f"  Tools' definitions: {meter['tools']:,} tokens",
    ]
    if meter.get("documents"):  # an older server sends none
        lines.append(
            f"  Your documents' passages: ~{meter['documents']:,} tokens (estimated: what your "
            "last question's passages take; the next message's may differ)"
        )
    if meter["summarised"]:
        lines.append(f"{meter['summarised']} earlier messages are summarised (still shown).")
    if meter["limit"] is None:
        lines.append(
            "The model's context is not known (its server has not said it), so nothing is "
            "summarised by itself: give it in Settings, the backend's Context column."
        )
    else:
        lines.append(f"The model's context: {meter['limit']:,} tokens.")
        if meter["budget"] is not None:
            lines.append(
                f"Above {meter['budget']:,} (the rest kept for the reply), the earlier "
                "messages are summarised first; none is deleted."
            )
    return "\n".join(lines)


class ContextMeter(QWidget):
    compact_requested = Signal()  # "Compact now"
    stop_requested = Signal()  # Stop the summary being made

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("context-meter")
        self.bar = QProgressBar(self)
        self.bar.setTextVisible(False)
        self.bar.setFixedSize(BAR_WIDTH, BAR_HEIGHT)
        self.bar.setAccessibleName("Context used")
        self.label = QLabel("", self)
        self.label.setAccessibleName("Context meter")
        self.status = QLabel("", self)
        self.compact_button = QPushButton("Compact now", self)
        self.compact_button.setFlat(True)
        self.compact_button.setToolTip(
            "Summarise the earlier messages now (all but the last exchange): the model is "
            "given the summary in their place; they stay in the chat."
        )
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setFlat(True)
        self.stop_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 0, 8, 0)
        layout.addWidget(self.bar, 0, Qt.AlignmentFlag.AlignVCenter)
        layout.addWidget(self.label)
        layout.addStretch(1)
        layout.addWidget(self.status)
        layout.addWidget(self.stop_button)
        layout.addWidget(self.compact_button)
        self.compact_button.clicked.connect(self.compact_requested)
        self.stop_button.clicked.connect(self.stop_requested)
        self._normal_bar = self.bar.palette()
        self.hide()

    def show_meter(self, meter: ContextJSON) -> None:
        self.label.setText(meter_text(meter))
        tooltip = meter_tooltip(meter)
        for widget in (self, self.label, self.bar):
            widget.setToolTip(tooltip)
        limit = meter["limit"]
        self.bar.setVisible(limit is not None)
        if limit is not None:
            self.bar.setRange(0, max(limit, 1))
            self.bar.setValue(min(meter["used"], limit))
            over = meter["budget"] is not None and meter["used"] > meter["budget"]
            palette = QPalette(self._normal_bar)
            if over:  # the next turn summarises first
                warning = self.palette().color(QPalette.ColorRole.Link)
                palette.setColor(QPalette.ColorRole.Highlight, warning)
            self.bar.setPalette(palette)
        self.show()

    def show_pending(self) -> None:
        """The chat on screen is being measured and no figure of it has come yet: "…",
        never the figure of the chat shown before."""
        self.label.setText(PENDING_TEXT)
        for widget in (self, self.label, self.bar):
            widget.setToolTip(PENDING_TIP)
        self.bar.hide()
        self.show()

    def clear(self) -> None:
        """No chat (a new one): nothing to measure."""
        self.label.setText("")
        self.hide()

    def show_compacting(self, running: bool, can_compact: bool, note: str = "") -> None:
        """A summary is being made (Stop shown; `note`: how far it is), or not (Compact
        now, if it may be)."""
        self.status.setText((note or SUMMARISING_NOTE) if running else "")
        self.stop_button.setVisible(running)
        self.compact_button.setVisible(not running)
        self.compact_button.setEnabled(can_compact)
