"""Models: every model the server has, how each is doing, and GGUF files to add or remove.

The dialog only shows and asks: the app (desktop/app.py) hears `add_requested` and
`remove_requested`, calls the server, and answers with `show_models` or `show_error`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from server.types import ModelJSON

COLUMNS = ("Model", "Kind", "State", "File")
LOCAL_STATES = {"ready": "ready", "loading": "loading…", "unloaded": "loads on first use"}
UPSTREAM_STATES = {"ready": "ready", "loading": "checking…", "unloaded": "not checked yet"}
KINDS = {"local": "local (llama.cpp)", "openai_compat": "OpenAI-compatible server"}


def describe_state(model: ModelJSON) -> str:
    if model["state"] == "error":
        return f"error: {model['error']}"
    names = LOCAL_STATES if model["kind"] == "local" else UPSTREAM_STATES
    text = names.get(model["state"], model["state"])
    if model["slots_busy"]:
        text += f" · replying ({model['slots_busy']} of {model['slots']})"
    if model["queue_length"]:
        text += f" · {model['queue_length']} waiting"
    return text


def describe_file(model: ModelJSON) -> str:
    gguf = model.get("gguf")
    if gguf is None:
        return ""
    facts = [f"{gguf['size_bytes'] / 1e6:,.0f} MB"]
    if gguf["quantization"]:
        facts.append(gguf["quantization"])
    if gguf["context_length"]:
        facts.append(f"trained for {gguf['context_length']:,} tokens")
    return f"{gguf['path']} ({', '.join(facts)})"


class ModelsDialog(QDialog):
    add_requested = Signal(str)  # the path of a GGUF file the user picked
    remove_requested = Signal(str)  # a model's name

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.setObjectName("models-dialog")
        self.resize(860, 360)
        self._models: list[ModelJSON] = []
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Models")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.add_button = QPushButton("Add GGUF file…", self)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setEnabled(False)
        self.remove_button.setToolTip("Only models added here can be removed")
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setObjectName("models-message")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        row = QHBoxLayout()
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        layout.addLayout(row)
        layout.addWidget(buttons)
        buttons.rejected.connect(self.reject)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)

    def show_models(self, models: list[ModelJSON]) -> None:
        chosen = self.selected()
        self._models = models
        self.table.setRowCount(len(models))
        for row, model in enumerate(models):
            name = model["name"] + (" (default)" if model.get("default") else "")
            kind = KINDS.get(model["kind"], model["kind"])
            cells = (name, kind, describe_state(model), describe_file(model))
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                item.setData(Qt.ItemDataRole.UserRole, model["name"])
                self.table.setItem(row, column, item)
            if model["name"] == chosen:
                self.table.selectRow(row)
        self._on_table_selection_changed()

    def show_error(self, text: str) -> None:
        self.message.setStyleSheet("color: #c0392b;")
        self.message.setText(text)

    def show_note(self, text: str) -> None:
        self.message.setStyleSheet("")
        self.message.setText(text)

    def selected(self) -> str | None:
        items = self.table.selectedItems()
        return str(items[0].data(Qt.ItemDataRole.UserRole)) if items else None

    def _on_table_selection_changed(self) -> None:
        name = self.selected()
        model = next((m for m in self._models if m["name"] == name), None)
        self.remove_button.setEnabled(model is not None and model["removable"])

    def _on_add_button_clicked(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Add a GGUF model", "", "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.show_note(f"Adding {path}…")
            self.add_requested.emit(path)

    def _on_remove_button_clicked(self) -> None:
        name = self.selected()
        if name:
            self.remove_requested.emit(name)
