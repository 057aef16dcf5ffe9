"""The Settings dialog's list of OpenAI-compatible backends: base URL, model, API key and
context (tokens the model sees at once; blank: the server asks the upstream).

Each cell is an editor with a hint of what goes there; the model is a list to pick from once
the backend was tested (its models fetched), and stays free text before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHeaderView, QLineEdit, QTableWidget, QWidget

from desktop.settings import api_keys

URL, MODEL, KEY, CONTEXT = range(4)
W = TypeVar("W", bound=QWidget)


@dataclass(frozen=True)
class BackendRow:
    url: str
    model: str
    key: str  # "" keeps the stored key
    context: str  # as typed: checked on Save (config.context_tokens); "" asks the upstream


class BackendsTable(QTableWidget):
    edited = Signal()  # a URL, model, key or context typed, or a row added or removed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, 4, parent)
        self.setObjectName("backends")
        self.setHorizontalHeaderLabels(["Base URL (…/v1)", "Model", "API key", "Context"])
        header = self.horizontalHeader()
        header.setSectionResizeMode(URL, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(MODEL, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(KEY, QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(CONTEXT, QHeaderView.ResizeMode.Interactive)
        self.setColumnWidth(MODEL, 190)
        self.setColumnWidth(KEY, 170)
        self.setColumnWidth(CONTEXT, 90)
        self.verticalHeader().hide()
        self.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        # Three backends seen at once without scrolling (the rows hold line edits).
        rows = 3 * self.verticalHeader().defaultSectionSize()
        self.setMinimumHeight(header.sizeHint().height() + rows + 2 * self.frameWidth() + 4)

    def add_row(self, url: str = "", model: str = "", context: int | None = None) -> int:
        row = self.rowCount()
        self.insertRow(row)
        url_edit = QLineEdit(url, self)
        url_edit.setPlaceholderText("http://127.0.0.1:11434/v1")
        url_edit.setAccessibleName("Base URL")
        models = QComboBox(self)
        models.setEditable(True)
        models.setEditText(model)
        line = models.lineEdit()
        if line is not None:
            line.setPlaceholderText("e.g. llama3.2")
        models.setAccessibleName("Model")
        key = QLineEdit(self)
        key.setEchoMode(QLineEdit.EchoMode.Password)
        key.setPlaceholderText("stored" if url and api_keys.api_key(url) else "none")
        key.setAccessibleName("API key")
        tokens = QLineEdit("" if context is None else str(context), self)
        tokens.setPlaceholderText("ask")
        tokens.setToolTip("Tokens the model sees at once. Blank: ask the upstream.")
        tokens.setAccessibleName("Context, in tokens")
        self.setCellWidget(row, URL, url_edit)
        self.setCellWidget(row, MODEL, models)
        self.setCellWidget(row, KEY, key)
        self.setCellWidget(row, CONTEXT, tokens)
        self.setCurrentCell(row, URL)
        for typed in (
            url_edit.textEdited,
            models.editTextChanged,
            key.textEdited,
            tokens.textEdited,
        ):
            typed.connect(self.edited)
        self.edited.emit()
        return row

    def remove_selected(self) -> None:
        for row in sorted({i.row() for i in self.selectedIndexes()}, reverse=True):
            self.removeRow(row)
        self.edited.emit()

    def url_edit(self, row: int) -> QLineEdit:
        return self._widget(row, URL, QLineEdit)

    def model_box(self, row: int) -> QComboBox:
        return self._widget(row, MODEL, QComboBox)

    def key_edit(self, row: int) -> QLineEdit:
        return self._widget(row, KEY, QLineEdit)

    def context_edit(self, row: int) -> QLineEdit:
        return self._widget(row, CONTEXT, QLineEdit)

    def backend(self, row: int) -> BackendRow:
        return BackendRow(
            self.url_edit(row).text().strip(),
            self.model_box(row).currentText().strip(),
            self.key_edit(row).text(),
            self.context_edit(row).text().strip(),
        )

    def backends(self) -> list[BackendRow]:
        return [self.backend(row) for row in range(self.rowCount())]

    def offer_models(self, row: int, names: list[str]) -> None:
        """The models a test fetched, to pick from (what was typed stays)."""
        box = self.model_box(row)
        typed = box.currentText()
        box.clear()
        box.addItems(names)
        box.setEditText(typed or (names[0] if names else ""))

    def _widget(self, row: int, column: int, kind: type[W]) -> W:
        widget = self.cellWidget(row, column)
        if not isinstance(widget, kind):
            raise LookupError(f"no {kind.__name__} at row {row}, column {column}")
        return widget
