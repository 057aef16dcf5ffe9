"""The bar above the chat: the model of its next replies, its two switches ("Use tools", "Use
my documents"), and small icon buttons that open Chat settings, Models, MCP servers, the
Library and Settings (each also in the menus, with its name as tooltip and accessible name).
It only holds the controls; the window connects them. It is drawn as one header, a rounded
card like the composer's box (desktop/look/window_style.py): the model as a pill, the
buttons as a group of icons behind a hairline.

Where the chat is narrow (a window of 645-700 px), the model and its status take a
line of their own above the switches and buttons, so the status stays readable.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QCheckBox, QFrame, QGridLayout, QHBoxLayout, QToolButton, QWidget

from desktop.composer.tools_switch import CAN_CALL
from desktop.look.icons import icon
from desktop.models.model_picker import ModelPicker

ICON_SIZE = QSize(20, 20)
BUTTON_SIDE = 32  # each icon button's square: a target as big as the composer's
MARGINS = (12, 6, 6, 6)  # inside the header's card: left, top, right, bottom


class ChatBar(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model_picker = ModelPicker(self)
        self.setObjectName("chat-bar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground)  # its card, drawn by the sheet
        # The switches are drawn as chips in the composer's box (the window puts them there).
        self.tools_switch = QCheckBox("Use tools", self)
        self.tools_switch.setObjectName("switch")
        self.tools_switch.setChecked(True)
        self.tools_switch.setAccessibleName("Use tools in this chat")
        self.tools_switch.setToolTip(CAN_CALL)  # (and why not, beside a model that cannot)
        self.documents_switch = QCheckBox("Use my documents", self)
        self.documents_switch.setObjectName("switch")
        self.documents_switch.setAccessibleName("Use my documents in this chat")
        self.documents_switch.setToolTip(
            "Give the model your Library: the passages that best match each message, and "
            "the search of your documents when it uses tools. Off: it is given neither"
        )
        self.chat_settings_button = self._button(
            "sliders", "Chat settings", "This chat's system prompt and parameters"
        )
        self.chat_settings_button.setEnabled(False)
        self.models_button = self._button("models", "Models", "The models Parley can use")
        self.tools_button = self._button(
            "tools", "MCP servers", "The tool servers the model may call"
        )
        self.library_button = self._button(
            "library", "Library", "Folders of your documents the model can use"
        )
        self.settings_button = self._button("settings", "Settings", "Backends, prompt, limits")
        line = QFrame(self)
        line.setObjectName("bar-separator")
        line.setFrameShape(QFrame.Shape.VLine)
        line.setFixedSize(1, 20)
        self.controls = QWidget(self)  # the switches and buttons, beside or below the model
        row = QHBoxLayout(self.controls)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(2)
        row.addStretch(1)  # (on their own line: at its right)
        for control in (
            self.chat_settings_button,
            line,
            self.models_button,
            self.tools_button,
            self.library_button,
            self.settings_button,
        ):
            row.addWidget(control)
        self._grid = QGridLayout(self)
        self._grid.setContentsMargins(*MARGINS)
        self._grid.setVerticalSpacing(2)
        self.two_lines = True
        self._lay_out(two_lines=False)
        self._paint_icons()

    def minimumSizeHint(self) -> QSize:
        """As narrow as the switches and buttons: the model goes above them where the bar
        has no room for both on one line; as high as its lines (one, or those two)."""
        below = self.controls.minimumSizeHint()
        picker = self.model_picker.minimumSizeHint()
        left, top, right, bottom = MARGINS
        if self.two_lines:
            high = picker.height() + self._grid.verticalSpacing() + below.height()
        else:
            high = max(picker.height(), below.height())
        return QSize(max(below.width(), picker.width()) + left + right, high + top + bottom)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._lay_out(event.size().width() < self._one_line_width())

    def _one_line_width(self) -> int:
        """The width the model, its readable status, and the controls need on one line."""
        spacing = max(self._grid.horizontalSpacing(), 0) + MARGINS[0] + MARGINS[2]
        return self.model_picker.readable_width() + spacing + self.controls.sizeHint().width()

    def _lay_out(self, two_lines: bool) -> None:
        if two_lines == self.two_lines:
            return
        self.two_lines = two_lines
        self._grid.removeWidget(self.model_picker)
        self._grid.removeWidget(self.controls)
        self._grid.addWidget(self.model_picker, 0, 0)
        self._grid.addWidget(self.controls, 1 if two_lines else 0, 0 if two_lines else 1)
        self._grid.setColumnStretch(0, 1)
        self._grid.setColumnStretch(1, 0)
        self.updateGeometry()  # (its height: one line or two)

    def _button(self, icon_name: str, name: str, what: str) -> QToolButton:
        button = QToolButton(self)
        button.setText(name)  # shown only if the icon is missing
        button.setObjectName(icon_name)
        button.setToolTip(f"{name}: {what}")
        button.setAccessibleName(name)
        button.setAccessibleDescription(what)
        button.setAutoRaise(True)
        button.setIconSize(ICON_SIZE)
        button.setFixedSize(BUTTON_SIDE, BUTTON_SIDE)
        return button

    def _paint_icons(self) -> None:
        for button in self.findChildren(QToolButton):
            button.setIcon(icon(button.objectName(), self.palette()))
        self.tools_switch.setIcon(icon("tools", self.palette()))
        self.documents_switch.setIcon(icon("library", self.palette()))

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_icons()  # drawn in the text colour of the new palette
