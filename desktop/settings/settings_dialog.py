"""Settings: OpenAI-compatible backends (URL, model, API key, context) and the system prompt.

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
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from desktop.settings import api_keys, config
from desktop.settings.backends_table import BackendsTable
from server.types import FoundServerJSON

KEEP_KEY = ""  # an empty key field keeps the stored key


class SettingsDialog(QDialog):
    """The parent (the app) saves nothing itself: it hears `settings_saved` and, for "Test
    connection", `check_requested`, answered with `show_check`."""

    # Messages about what could not be saved (keyring), and whether the backends changed
    # (only then does the server restart and reload its models).
    settings_saved = Signal(list, bool)
    check_requested = Signal(int, str, str)  # row, base URL, API key ("" = the stored one)
    detect_requested = Signal()  # "Find Ollama / LM Studio", answered with `show_found`
    tools_requested = Signal()  # "MCP servers…": the tools dialog

    def __init__(self, settings: config.DesktopConfig, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Parley settings")
        self.setObjectName("settings-dialog")
        self.resize(760, 460)
        self._settings = settings
        self.system_prompt = QPlainTextEdit(settings.system_prompt, self)
        self.system_prompt.setPlaceholderText("Default system prompt for new conversations")
        self.system_prompt.setAccessibleName("Default system prompt")
        self.max_tokens = QSpinBox(self)
        self.max_tokens.setRange(0, config.MAX_TOKENS)
        self.max_tokens.setSingleStep(256)
        self.max_tokens.setSpecialValueText("no limit")
        self.max_tokens.setSuffix(" tokens")
        self.max_tokens.setValue(settings.max_tokens)
        self.max_tokens.setAccessibleName("Longest reply, in tokens")
        self.table = BackendsTable(self)
        self.table.setAccessibleName("Backends")
        for backend in settings.backends:
            self.table.add_row(backend.base_url, backend.model, backend.context)
        self.error = QLabel(self)
        self.error.setStyleSheet("color: #c0392b;")
        self.check_result = QLabel(self)
        self.check_result.setObjectName("check-result")
        self.check_result.setWordWrap(True)
        add = QPushButton("Add backend", self)
        remove = QPushButton("Remove selected", self)
        self.test_button = QPushButton("Test connection", self)
        self.detect_button = QPushButton("Find Ollama / LM Studio", self)
        self.found_row = QHBoxLayout()
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        row = QHBoxLayout()
        row.addWidget(add)
        row.addWidget(remove)
        row.addWidget(self.test_button)
        row.addWidget(self.detect_button)
        row.addWidget(self.check_result, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("OpenAI-compatible backends (Ollama, llama-server, vLLM, OpenAI)"))
        layout.addWidget(self.table, 2)
        layout.addLayout(row)
        layout.addLayout(self.found_row)
        layout.addWidget(QLabel("System prompt"))
        layout.addWidget(self.system_prompt, 1)
        limit = QHBoxLayout()
        limit.addWidget(QLabel("Longest reply (small models can repeat themselves endlessly)"))
        limit.addWidget(self.max_tokens)
        limit.addStretch(1)
        layout.addLayout(limit)
        tools = QHBoxLayout()
        tools.addWidget(QLabel("Tools the model may call (MCP servers)"))
        self.tools_button = QPushButton("MCP servers…", self)
        tools.addWidget(self.tools_button)
        tools.addStretch(1)
        layout.addLayout(tools)
        layout.addWidget(self.error)
        layout.addWidget(buttons)
        add.clicked.connect(self._on_add_clicked)
        remove.clicked.connect(self.table.remove_selected)
        self.test_button.clicked.connect(self._on_test_button_clicked)
        self.detect_button.clicked.connect(self._on_detect_button_clicked)
        self.tools_button.clicked.connect(self.tools_requested)
        buttons.accepted.connect(self._on_buttons_accepted)
        self.table.edited.connect(self.error.clear)  # what it said of a row may be mended
        buttons.rejected.connect(self.reject)

    def show_check(self, row: int, reachable: bool, models: list[str], error: str) -> None:
        """What "Test connection" found for `row`."""
        self.test_button.setEnabled(True)
        if row >= self.table.rowCount():
            return  # removed meanwhile
        if not reachable:
            self.check_result.setText(f"Not reachable: {error}")
            return
        self.table.offer_models(row, models)
        found = f"{len(models)} model(s)" if models else "no model list (type the name)"
        self.check_result.setText(f"Reachable: {found}.")

    def show_found(self, servers: list[FoundServerJSON], error: str = "") -> None:
        """What "Find Ollama / LM Studio" found: one button each, to add it (or not)."""
        self.detect_button.setEnabled(True)
        while self.found_row.count():
            item = self.found_row.takeAt(0)
            widget = item.widget() if item is not None else None
            if widget is not None:
                widget.deleteLater()
        if error:
            self.check_result.setText(f"Could not look: {error}")
            return
        known = {backend.url.rstrip("/") for backend in self.table.backends()}
        offered = [s for s in servers if s["base_url"].rstrip("/") not in known]
        if not servers:
            self.check_result.setText("Neither Ollama nor LM Studio is running here.")
        elif not offered:
            self.check_result.setText("What is running here is in the list already.")
        else:
            self.check_result.setText("Found running here:")
        for server in offered:
            count = len(server["models"])
            button = QPushButton(f"Add {server['name']} ({count} model(s))", self)
            button.setObjectName(f"add-found-{server['name']}")
            button.clicked.connect(lambda _checked=False, s=server: self._add_found(s))
            self.found_row.addWidget(button)
        self.found_row.addStretch(1)

    def _add_found(self, server: FoundServerJSON) -> None:
        models = server["models"]
        row = self.table.add_row(server["base_url"], models[0] if models else "")
        self.table.offer_models(row, models)
        self.check_result.setText(f"Added {server['name']}: pick its model, then Save.")
        self.show_found([])

    def _on_detect_button_clicked(self) -> None:
        self.detect_button.setEnabled(False)
        self.check_result.setText("Looking…")
        self.detect_requested.emit()

    def _on_add_clicked(self) -> None:
        self.table.add_row()

    def _on_test_button_clicked(self) -> None:
        row = self.table.currentRow()
        if row < 0:
            self.check_result.setText("Select a backend to test.")
            return
        backend = self.table.backend(row)
        if not backend.url.startswith(("http://", "https://")):
            self.check_result.setText("The base URL must start with http(s)://.")
            return
        self.test_button.setEnabled(False)
        self.check_result.setText("Testing…")
        self.check_requested.emit(
            row, backend.url, backend.key or api_keys.api_key(backend.url) or ""
        )

    def _on_buttons_accepted(self) -> None:
        backends: list[config.Backend] = []
        keys: dict[str, str] = {}
        for row, entry in enumerate(self.table.backends()):
            if not entry.url and not entry.model:
                continue
            if not entry.url.startswith(("http://", "https://")):
                self.error.setText(f"Row {row + 1}: the base URL must start with http(s)://.")
                return
            if not entry.model:
                self.error.setText(f"Row {row + 1}: name the model to use at {entry.url}.")
                return
            try:
                context = config.context_tokens(entry.context)
            except ValueError as exc:  # nothing saved: the dialog stays, as typed
                self.error.setText(f"Row {row + 1}: {exc}.")
                return
            backends.append(config.Backend(entry.url, entry.model, context))
            if entry.key != KEEP_KEY:
                keys[entry.url] = entry.key
        changed = bool(keys) or backends != self._settings.backends
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
            self._ask_where_to_keep(refused, reason, errors, changed)
        else:
            self._finish(errors, changed)

    def _ask_where_to_keep(
        self, keys: dict[str, str], reason: str, errors: list[str], changed: bool
    ) -> None:
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
            self._finish(errors, changed)

        ask.buttonClicked.connect(chosen)
        ask.open()  # never exec() under qasync

    def _finish(self, errors: list[str], changed: bool) -> None:
        self.settings_saved.emit(errors, changed)
        self.accept()
