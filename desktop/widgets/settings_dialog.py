"""Settings: OpenAI-compatible backends (URL, model, API key) and the system prompt.

API keys go to the keyring; where none works, Save asks where to keep them instead (this
session only, or a file only the user can read) rather than dropping them.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop import api_keys, config

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
        self.max_tokens = QSpinBox(self)
        self.max_tokens.setRange(0, config.MAX_TOKENS)
        self.max_tokens.setSingleStep(256)
        self.max_tokens.setSpecialValueText("no limit")
        self.max_tokens.setSuffix(" tokens")
        self.max_tokens.setValue(settings.max_tokens)
        self.max_tokens.setAccessibleName("Longest reply, in tokens")
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
        limit = QHBoxLayout()
        limit.addWidget(QLabel("Longest reply (small models can repeat themselves endlessly)"))
        limit.addWidget(self.max_tokens)
        limit.addStretch(1)
        layout.addLayout(limit)
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
        key.setPlaceholderText("stored" if url and api_keys.api_key(url) else "none")
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
            if not url.startswith(("http://", "https://")):
                self.error.setText(f"Row {row + 1}: the base URL must start with http(s)://.")
                return
            if not model:
                self.error.setText(f"Row {row + 1}: name the model to use at {url}.")
                return
            backends.append(config.Backend(url, model))
            widget = self.table.cellWidget(row, KEY)
            if isinstance(widget, QLineEdit) and widget.text() != KEEP_KEY:
                keys[url] = widget.text()
        self._settings.backends = backends
        self._settings.system_prompt = self.system_prompt.toPlainText().strip()
        self._settings.max_tokens = self.max_tokens.value()
        errors = []
        try:
            self._settings.save()
        except OSError as exc:
            errors.append(f"settings not saved: {exc}")
        refused: dict[str, str] = {}
        reason = ""
        for url, key in keys.items():
            problem = api_keys.store_in_keyring(url, key)
            if problem:
                refused[url], reason = key, problem
        if refused:
            self._ask_where_to_keep(refused, reason, errors)
        else:
            self._finish(errors)

    def _ask_where_to_keep(self, keys: dict[str, str], reason: str, errors: list[str]) -> None:
        """No keyring took the keys: ask where they go (never dropped silently)."""
        ask = QMessageBox(QMessageBox.Icon.Warning, "Where to keep the API key", "", parent=self)
        ask.setObjectName("key-fallback")
        ask.setText(f"Parley could not store the API key: {reason}.")
        ask.setInformativeText(
            "Keep it for this session only (Parley asks again after it restarts), or save it "
            f"in a file only your user can read ({api_keys.keys_file()}). Anyone who can "
            "read your files or your backups can read a key kept in that file."
        )
        session = ask.addButton("This session only", QMessageBox.ButtonRole.AcceptRole)
        in_file = ask.addButton("Save in a file", QMessageBox.ButtonRole.AcceptRole)
        ask.addButton(QMessageBox.StandardButton.Cancel)

        def chosen(button: QAbstractButton) -> None:
            ask.deleteLater()
            choice = (
                api_keys.Fallback.SESSION if button is session
                else api_keys.Fallback.FILE if button is in_file
                else None
            )  # fmt: skip
            if choice is None:
                errors.append("the API key was not saved: no usable keyring")
            for url, key in keys.items():
                problem = api_keys.store_elsewhere(url, key, choice) if choice else None
                if problem:
                    errors.append(problem)
            self._finish(errors)

        ask.buttonClicked.connect(chosen)
        ask.open()  # never exec() under qasync

    def _finish(self, errors: list[str]) -> None:
        self.settings_saved.emit(errors)
        self.accept()
