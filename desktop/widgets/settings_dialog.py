"""Settings: OpenAI-compatible backends (URL, model, API key in the keyring) and system prompt."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop import config

URL, MODEL, KEY = range(3)
KEEP_KEY = ""  # an empty key field keeps the stored key


class SettingsDialog(QDialog):
    settings_saved = Signal(list)  # messages about what could not be saved (keyring)

    def __init__(self, settings: config.DesktopConfig, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Parley settings")
        self.setObjectName("settings-dialog")
        self.resize(640, 420)
        self._settings = settings
        self.system_prompt = QPlainTextEdit(settings.system_prompt, self)
        self.system_prompt.setPlaceholderText("Default system prompt for new conversations")
        self.table = QTableWidget(0, 3, self)
        self.table.setHorizontalHeaderLabels(["Base URL (…/v1)", "Model", "API key"])
        self.table.horizontalHeader().setStretchLastSection(True)
        for backend in settings.backends:
            self._add_row(backend.base_url, backend.model)
        self.error = QLabel(self)
        self.error.setStyleSheet("color: #c0392b;")
        add = QPushButton("Add backend", self)
        remove = QPushButton("Remove selected", self)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("OpenAI-compatible backends (Ollama, llama-server, vLLM, OpenAI)"))
        layout.addWidget(self.table, 1)
        layout.addLayout(row)
        layout.addWidget(QLabel("System prompt"))
        layout.addWidget(self.system_prompt)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        add.clicked.connect(self._on_add_clicked)
        remove.clicked.connect(self._on_remove_clicked)
        buttons.accepted.connect(self._on_buttons_accepted)
        buttons.rejected.connect(self.reject)

    def _add_row(self, url: str = "", model: str = "") -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        self.table.setItem(row, URL, QTableWidgetItem(url))
        self.table.setItem(row, MODEL, QTableWidgetItem(model))
        key = QLineEdit(self.table)
        key.setEchoMode(QLineEdit.EchoMode.Password)
        key.setPlaceholderText("stored in the keyring" if url and config.api_key(url) else "none")
        self.table.setCellWidget(row, KEY, key)

    def _on_add_clicked(self) -> None:
        self._add_row()

    def _on_remove_clicked(self) -> None:
        for index in sorted({i.row() for i in self.table.selectedIndexes()}, reverse=True):
            self.table.removeRow(index)

    def _text(self, row: int, column: int) -> str:
        item = self.table.item(row, column)
        return item.text().strip() if item is not None else ""

    def _on_buttons_accepted(self) -> None:
        backends: list[config.Backend] = []
        keys: dict[str, str] = {}
        for row in range(self.table.rowCount()):
            url, model = self._text(row, URL), self._text(row, MODEL)
            if not url and not model:
                continue
            if not url.startswith(("http://", "https://")) or not model:
                self.error.setText(f"Row {row + 1}: a base URL (http…) and a model are needed.")
                return
            backends.append(config.Backend(url, model))
            widget = self.table.cellWidget(row, KEY)
            if isinstance(widget, QLineEdit) and widget.text() != KEEP_KEY:
                keys[url] = widget.text()
        self._settings.backends = backends
        self._settings.system_prompt = self.system_prompt.toPlainText().strip()
        errors = []
        try:
            self._settings.save()
        except OSError as exc:
            errors.append(f"settings not saved: {exc}")
        for url, key in keys.items():
            problem = config.store_api_key(url, key)
            if problem:
                errors.append(problem)
        self.settings_saved.emit(errors)
        self.accept()
