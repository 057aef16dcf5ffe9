"""This chat's own settings: its system prompt and sampling parameters (temperature, top-p,
longest reply, seed), used by every later reply in it. A parameter left unticked is the
model's default; the longest reply unticked is Settings' (what is sent with each message),
shown as it is. The model itself is chosen above the chat, as for any message."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.chats.tool_servers_choice import ToolServersChoice
from desktop.settings.config import DEFAULT_MAX_TOKENS, MAX_TOKENS
from server.types import ChatParams, ConversationJSON
from server.types.tools import ToolServerJSON

INT32 = 2**31 - 1  # a spin box's own range
SETTINGS_NO_LIMIT = "no limit (Settings)"


class ChatSettingsDialog(QDialog):
    save_requested = Signal(object)  # the PATCH body: {"system", "params"}

    def __init__(
        self,
        conversation: ConversationJSON,
        max_tokens: int | None,
        parent: QWidget | None = None,
        servers: list[ToolServerJSON] | None = None,
    ) -> None:
        """`max_tokens`: Settings' longest reply, sent unless the chat has its own (None:
        no limit); `servers`: the MCP servers configured (which of them the chat offers)."""
        super().__init__(parent)
        self.setWindowTitle(f"Chat settings — {conversation['title'] or 'New chat'}")
        self.setObjectName("chat-settings")
        self.resize(520, 420)
        self.system = QPlainTextEdit(self)
        self.system.setPlaceholderText("None: the model's own behaviour")
        self.system.setAccessibleName("System prompt of this chat")
        self.system.setPlainText(conversation["system"] or "")
        params: ChatParams = conversation.get("params") or {}
        # Each parameter: a tick (set, or the model's default) and its value.
        self.rows = {
            "temperature": _number(QDoubleSpinBox(self), 0, 2, 0.1, params.get("temperature"), 0.7),
            "top_p": _number(QDoubleSpinBox(self), 0, 1, 0.05, params.get("top_p"), 0.95),
            "max_tokens": _longest(QSpinBox(self), params.get("max_tokens"), max_tokens),
            "seed": _number(QSpinBox(self), -INT32, INT32, 1, params.get("seed"), 0),
        }
        form = QFormLayout()
        labels = {"temperature": "Temperature", "top_p": "Top-p", "max_tokens": "Longest reply "
                  "(tokens)", "seed": "Seed"}  # fmt: skip
        for key, (check, box) in self.rows.items():
            row = QHBoxLayout()
            row.addWidget(check)
            row.addWidget(box, 1)
            check.setAccessibleName(f"Set {labels[key].lower()}")
            box.setAccessibleName(labels[key])
            form.addRow(labels[key], row)
        self.message = QLabel("", self)
        self.message.setWordWrap(True)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self._on_save)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("System prompt", self))
        layout.addWidget(self.system, 1)
        layout.addLayout(form)
        self.tool_servers = ToolServersChoice(conversation.get("tool_servers"), servers or [], self)
        self.tool_servers.setVisible(bool(servers))
        layout.addWidget(self.tool_servers)
        layout.addWidget(self.message)
        layout.addWidget(buttons)

    def body(self) -> dict[str, object]:
        """What Save asks for: every parameter, set or cleared (null)."""
        params: dict[str, float | int | None] = {}
        for key, (check, box) in self.rows.items():
            params[key] = box.value() if check.isChecked() else None
        system = self.system.toPlainText().strip()
        body: dict[str, object] = {"system": system or None, "params": params}
        if self.tool_servers.boxes:
            body["tool_servers"] = self.tool_servers.value()
        return body

    def show_error(self, text: str) -> None:
        self.message.setText(text)

    def _on_save(self) -> None:
        self.message.setText("Saving…")
        self.save_requested.emit(self.body())


def _longest(
    box: QSpinBox, value: int | None, settings: int | None
) -> tuple[QCheckBox, QSpinBox | QDoubleSpinBox]:
    """The longest reply: unticked, Settings' (its one source, desktop/settings/config.py), or "no
    limit" when Settings has none; ticked, this chat's own."""
    check, _ = _number(box, 1, MAX_TOKENS, 64, value, settings or 0)
    box.setSpecialValueText(SETTINGS_NO_LIMIT)  # shown at 0 only: unticked, no limit

    def toggled(on: bool) -> None:
        box.setMinimum(1 if on else 0)
        if not on:
            box.setValue(settings or 0)
        elif box.value() <= 1 and settings is None:
            box.setValue(DEFAULT_MAX_TOKENS)  # a starting point for the chat's own

    toggled(check.isChecked())
    check.toggled.connect(toggled)
    return check, box


def _number(
    box: QSpinBox | QDoubleSpinBox, low: float, high: float, step: float, value: float | None,
    default: float,
) -> tuple[QCheckBox, QSpinBox | QDoubleSpinBox]:  # fmt: skip
    box.setRange(low, high)  # type: ignore[arg-type]
    box.setSingleStep(step)  # type: ignore[arg-type]
    box.setValue(value if value is not None else default)  # type: ignore[arg-type]
    check = QCheckBox(box.parentWidget())
    check.setChecked(value is not None)
    box.setEnabled(value is not None)
    check.toggled.connect(box.setEnabled)
    return check, box
