"""The model picker: which model the open chat uses, and how that model is doing.

It shows the open chat's model; a new chat starts on the server's default: the model the
user set with "Set as default" (here or in Models), else the bundled model, unless
`--upstream` named another. Picking a model on a new chat is for that chat only (never
made the default silently). A choice made by the user is announced
(`model_chosen`); choices made by the window are not.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QToolButton, QWidget

from desktop.widgets.elided_label import ElidedLabel
from server.types import ModelStatusJSON, StatusJSON

STATES = {"ready": "ready", "loading": "loading…", "unloaded": "loads on first use"}
# The status shown whole where it can be (a narrow window elides the model's name first).
READABLE_STATUS = "ready · replying (1 of 2)"
MODEL_NAME_CHARS = 28  # a longer name is cut in the list's box (whole in its list and tip)
# An upstream has nothing to load: its states say whether it was reached.
UPSTREAM_STATES = {"ready": "ready", "loading": "checking…", "unloaded": "not checked yet"}


def state_text(model: ModelStatusJSON) -> str:
    if model["state"] == "error":
        text = f"error: {model['error']}"
    else:
        names = STATES if model["kind"] == "local" else UPSTREAM_STATES
        text = names.get(model["state"], model["state"])
    if model.get("tools") is False:
        text += " · cannot call tools"
    if model["slots_busy"]:
        text += " · replying"
        if model["slots"] > 1:
            text += f" ({model['slots_busy']} of {model['slots']})"
    return text


class ModelPicker(QWidget):
    model_chosen = Signal(str)  # by the user, in the list
    model_shown = Signal()  # the model shown changed, chosen by the user or the window
    default_requested = Signal(str)  # "Set as default": new chats use this model

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox(self)
        self.combo.setObjectName("model-picker")
        # As wide as its name up to MODEL_NAME_CHARS: a long name would leave the status no
        # room; the list that drops down shows every name whole.
        self.combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.combo.setMinimumContentsLength(12)
        self.combo.setAccessibleName("Model")
        self.state = ElidedLabel("starting…", self)
        self.state.setMinimumWidth(self.fontMetrics().horizontalAdvance(READABLE_STATUS))
        self.default_button = QToolButton(self)
        self.default_button.setText("★")  # narrow: the chat bar fits a 760 px window
        self.default_button.setAccessibleName("Set as default")
        self.default_button.setToolTip("Set as default: new chats use this model")
        self.default_button.setAutoRaise(True)
        self.default_button.setEnabled(False)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(QLabel("Model:", self))
        layout.addWidget(self.combo)
        layout.addWidget(self.default_button)
        layout.addWidget(self.state, 1)
        self._models: list[ModelStatusJSON] = []
        self._server_default: str | None = None
        self._wanted: str | None = None  # asked for before the list had it
        self._following = True  # a new chat's page, no model picked: the default, as it changes
        self.combo.activated.connect(self._on_combo_activated)
        self.combo.currentTextChanged.connect(self._on_combo_current_text_changed)
        self.default_button.clicked.connect(self._on_default_button_clicked)

    def readable_width(self) -> int:
        """The width that shows the model's name (up to MODEL_NAME_CHARS) and a readable
        status."""
        return self.sizeHint().width() - self.state.sizeHint().width() + self.state.minimumWidth()

    def _on_combo_current_text_changed(self, text: str) -> None:
        metrics = self.combo.fontMetrics()
        shown = min(len(text), MODEL_NAME_CHARS)
        self.combo.setMinimumContentsLength(max(12, shown))
        self.combo.setMaximumWidth(
            self.combo.sizeHint().width() + metrics.horizontalAdvance("M") * 2
        )
        self.combo.setToolTip(text)
        self._show_state()  # the model now shown, as last reported (no need to ask again)
        self._show_default_button()
        self.model_shown.emit()

    def current(self) -> str | None:
        return self.combo.currentText() or None

    def current_status(self) -> ModelStatusJSON | None:
        """The model shown, as the server last reported it (None: not reported yet)."""
        return next((m for m in self._models if m["name"] == self.current()), None)

    def names(self) -> list[str]:
        """The models the server offers (as last reported)."""
        return [m["name"] for m in self._models]

    def choose(self, name: str | None) -> None:
        """Show `name` (a chat's model); None: the default for a new chat."""
        self._following = name is None
        self._wanted = name or self._new_chat_model()
        self._apply_wanted()

    def show_status(self, status: StatusJSON) -> None:
        self._models = status["models"]
        if self._following and status["default_model"] != self._server_default:
            self._wanted = status["default_model"]  # set as default meanwhile
        self._server_default = status["default_model"]
        names = [m["name"] for m in self._models]
        if names != [self.combo.itemText(i) for i in range(self.combo.count())]:
            current = self._wanted or self.current() or self._new_chat_model()
            self.combo.clear()
            self.combo.addItems(names)
            self._wanted = current
        if self._wanted is None and not self.current():
            self._wanted = self._new_chat_model()
        self._apply_wanted()
        self._show_state()
        self._show_default_button()

    def _show_state(self) -> None:
        chosen = self.current_status()
        if chosen is not None:
            self.state.setText(state_text(chosen))

    def _show_default_button(self) -> None:
        current = self.current()
        self.default_button.setEnabled(current is not None and current != self._server_default)

    def _on_default_button_clicked(self) -> None:
        current = self.current()
        if current:
            self.default_button.setEnabled(False)  # until the server's status says so
            self.default_requested.emit(current)

    def show_unreachable(self, reason: str) -> None:
        self.state.setText(f"server unreachable: {reason}")

    def show_not_running(self) -> None:
        """The server did not start (the window says why): not "starting…" forever."""
        self.state.setText("server not running")

    def _new_chat_model(self) -> str | None:
        return self._server_default

    def _apply_wanted(self) -> None:
        if self._wanted is not None and self.combo.findText(self._wanted) >= 0:
            self.combo.setCurrentText(self._wanted)
            self._wanted = None

    def _on_combo_activated(self, _index: int) -> None:
        self._following = False
        self._wanted = None
        self.model_chosen.emit(self.combo.currentText())
