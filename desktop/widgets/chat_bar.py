"""The bar above the chat: the model of its next replies, its two switches ("Use tools", "Use
my documents"), and the buttons that open Models, MCP servers, Chat settings, the Library and
Settings. It only holds the controls; the window connects them."""

from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QPushButton, QWidget

from desktop.widgets.model_picker import ModelPicker


class ChatBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_picker = ModelPicker(self)
        self.settings_button = QPushButton("Settings", self)
        self.models_button = QPushButton("Models", self)
        self.tools_button = QPushButton("MCP servers", self)
        self.tools_button.setToolTip("The tool servers the model may call")
        self.tools_switch = QCheckBox("Use tools", self)
        self.tools_switch.setChecked(True)
        self.tools_switch.setAccessibleName("Use tools in this chat")
        self.tools_switch.setToolTip(
            "Let the model call the tools of your MCP servers in this chat "
            "(only models that can call tools do)"
        )
        self.chat_settings_button = QPushButton("Chat settings", self)
        self.chat_settings_button.setToolTip("This chat's system prompt and parameters")
        self.chat_settings_button.setEnabled(False)
        self.library_button = QPushButton("Library", self)
        self.library_button.setToolTip("Folders of your documents the model can use")
        self.documents_switch = QCheckBox("Use my documents", self)
        self.documents_switch.setAccessibleName("Use my documents in this chat")
        self.documents_switch.setToolTip(
            "Give the model the passages of your Library that best match each message, "
            "for models that cannot search by themselves"
        )
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.model_picker, 1)
        for control in (
            self.tools_switch,
            self.documents_switch,
            self.models_button,
            self.tools_button,
            self.chat_settings_button,
            self.library_button,
            self.settings_button,
        ):
            row.addWidget(control)
