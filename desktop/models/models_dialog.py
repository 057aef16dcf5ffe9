"""Models: every model the server has, how each is doing, and GGUF files to add or remove.

The dialog only shows and asks: the app (desktop/app.py) hears `add_requested` and
`remove_requested`, calls the server, and answers with `show_models` or `show_error`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.models.model_picker import STATES, UPSTREAM_STATES
from desktop.widgets.server_dialog import MessageLine, ServerDialog, rows_table
from server.types import LocalModelSettingsJSON, ModelJSON

COLUMNS = ("Model", "Kind", "State", "Fits", "Tools", "File")
KINDS = {"local": "local (llama.cpp)", "openai_compat": "OpenAI-compatible server"}


def describe_state(model: ModelJSON) -> str:
    if model["state"] == "error":
        return f"error: {model['error']}"
    names = STATES if model["kind"] == "local" else UPSTREAM_STATES
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


def describe_fit(model: ModelJSON) -> tuple[str, str]:
    """The verdict on whether a local model fits this machine, and its figures (a tooltip)."""
    gguf = model.get("gguf")
    fit = gguf.get("fit") if gguf is not None else None
    if fit is None:
        return "", ""
    figures = [fit["why"], f"at a context of {fit['context']:,} tokens:"]
    figures.append(f"weights {fit['weights_bytes'] / 1e6:,.0f} MB")
    if fit["context_bytes"] is not None:
        figures.append(f"context (KV cache) {fit['context_bytes'] / 1e6:,.0f} MB")
    figures.append(f"overhead {fit['overhead_bytes'] / 1e6:,.0f} MB")
    if fit["available_bytes"] is not None:
        figures.append(f"memory free now {fit['available_bytes'] / 1e6:,.0f} MB")
    figures.append(f"about {fit['tokens_per_s']:,.0f} tokens/s on this CPU (estimated)")
    return fit["verdict"], "\n".join(figures)


def describe_tools(model: ModelJSON) -> tuple[str, str]:
    """Whether the model can call tools (from its chat template), and why (a tooltip)."""
    gguf = model.get("gguf")
    if gguf is None or gguf.get("tools") is None:
        return "?", "Not known until it is used"
    if gguf["tools"]:
        return "yes", "Its chat template takes tools: it can search your documents and use MCP"
    return "no", "Its chat template has no tools: it answers without them"


class LocalSettingsBox(QGroupBox):
    """The selected local model's own settings, applied from its next start."""

    apply_requested = Signal(dict)  # {"n_ctx": ..., "n_threads": ..., "n_gpu_layers": ...}

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Settings of the selected local model", parent)
        self.n_ctx = self._spin(512, 131_072, 512, " tokens", "Context per conversation")
        self.n_threads = self._spin(1, 64, 1, "", "Generation threads")
        self.n_gpu_layers = self._spin(-1, 1000, 1, "", "Layers on the GPU")
        self.n_gpu_layers.setSpecialValueText("all")
        self.apply_button = QPushButton("Apply", self)
        form = QFormLayout(self)
        form.addRow("Context per conversation:", self.n_ctx)
        form.addRow("Generation threads:", self.n_threads)
        form.addRow("Layers on the GPU (0: CPU only):", self.n_gpu_layers)
        form.addRow(self.apply_button)
        self.apply_button.clicked.connect(self._on_apply_button_clicked)

    def _spin(self, low: int, high: int, step: int, suffix: str, name: str) -> QSpinBox:
        box = QSpinBox(self)
        box.setRange(low, high)
        box.setSingleStep(step)
        box.setSuffix(suffix)
        box.setAccessibleName(name)
        return box

    def show_settings(self, settings: LocalModelSettingsJSON) -> None:
        self.n_ctx.setValue(settings["n_ctx"])
        self.n_threads.setValue(settings["n_threads"])
        self.n_gpu_layers.setValue(settings["n_gpu_layers"])

    def _on_apply_button_clicked(self) -> None:
        self.apply_requested.emit(
            {
                "n_ctx": self.n_ctx.value(),
                "n_threads": self.n_threads.value(),
                "n_gpu_layers": self.n_gpu_layers.value(),
            }
        )


class ModelsDialog(ServerDialog):
    add_requested = Signal(str)  # the path of a GGUF file the user picked
    remove_requested = Signal(str, bool)  # a model's name; stop the replies that use it
    settings_requested = Signal(str, dict)  # a local model's name, its new settings
    default_requested = Signal(str)  # a model's name: new chats use it
    hub_requested = Signal()  # "Download a model…" (Hugging Face)
    found_requested = Signal()  # "On this computer…" (LM Studio, Ollama, the HF cache)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Models")
        self.setObjectName("models-dialog")
        self.resize(860, 520)
        self._models: list[ModelJSON] = []
        self._settings_of: str | None = None  # whose settings the box shows
        self.table = rows_table(COLUMNS, "Models", self)
        self.add_button = QPushButton("Add GGUF file…", self)
        self.remove_button = QPushButton("Remove", self)
        self.remove_button.setEnabled(False)
        self.remove_button.setToolTip("Only models added here can be removed")
        self.default_button = QPushButton("Set as default", self)
        self.default_button.setEnabled(False)
        self.default_button.setToolTip("New chats use this model")
        self.hub_button = QPushButton("Download a model…", self)
        self.hub_button.setToolTip("Search Hugging Face for GGUF models and download one")
        self.found_button = QPushButton("On this computer…", self)
        self.found_button.setToolTip(
            "GGUF files LM Studio, Ollama and the Hugging Face cache already keep: used in "
            "place, never copied"
        )
        self.message = MessageLine("models-message", self)
        self.local_settings = LocalSettingsBox(self)
        self.local_settings.setVisible(False)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        row = QHBoxLayout()
        row.addWidget(self.hub_button)
        row.addWidget(self.found_button)
        row.addWidget(self.add_button)
        row.addWidget(self.remove_button)
        row.addWidget(self.default_button)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)
        layout.addLayout(row)
        layout.addWidget(self.local_settings)
        layout.addWidget(buttons)
        buttons.rejected.connect(self.reject)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.remove_button.clicked.connect(self._on_remove_button_clicked)
        self.default_button.clicked.connect(self._on_default_button_clicked)
        self.hub_button.clicked.connect(self.hub_requested)
        self.found_button.clicked.connect(self.found_requested)
        self.table.itemSelectionChanged.connect(self._on_table_selection_changed)
        self.local_settings.apply_requested.connect(self._on_local_settings_apply_requested)

    def show_models(self, models: list[ModelJSON]) -> None:
        chosen = self.selected()
        self._models = models
        self.table.setRowCount(len(models))
        for row, model in enumerate(models):
            name = model["name"] + (" (default)" if model.get("default") else "")
            kind = KINDS.get(model["kind"], model["kind"])
            fits, fit_figures = describe_fit(model)
            tools, tools_why = describe_tools(model) if model["kind"] == "local" else ("", "")
            cells = (
                (name, name),
                (kind, kind),
                (describe_state(model), describe_state(model)),
                (fits, fit_figures),
                (tools, tools_why),
                (describe_file(model), describe_file(model)),
            )
            for column, (text, tip) in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                item.setData(Qt.ItemDataRole.UserRole, model["name"])
                self.table.setItem(row, column, item)
            if model["name"] == chosen:
                self.table.selectRow(row)
        self._on_table_selection_changed()

    def selected(self) -> str | None:
        items = self.table.selectedItems()
        return str(items[0].data(Qt.ItemDataRole.UserRole)) if items else None

    def _on_table_selection_changed(self) -> None:
        name = self.selected()
        model = next((m for m in self._models if m["name"] == name), None)
        self.remove_button.setEnabled(model is not None and model["removable"])
        self.default_button.setEnabled(model is not None and not model.get("default"))
        settings = model.get("settings") if model is not None else None
        if settings is not None and name != self._settings_of:
            self.local_settings.show_settings(settings)  # not while the user edits them
        self._settings_of = name if settings is not None else None
        self.local_settings.setVisible(settings is not None)

    def _on_local_settings_apply_requested(self, settings: dict[str, int]) -> None:
        name = self.selected()
        if name:
            self.show_note(f"Applying the settings of {name}…")
            self.settings_requested.emit(name, settings)

    def _on_add_button_clicked(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(
            self, "Add a GGUF model", "", "GGUF models (*.gguf);;All files (*)"
        )
        if path:
            self.show_note(f"Adding {path}…")
            self.add_requested.emit(path)

    def _on_default_button_clicked(self) -> None:
        name = self.selected()
        if name:
            self.default_requested.emit(name)

    def _on_remove_button_clicked(self) -> None:
        name = self.selected()
        if name:
            self.remove_requested.emit(name, False)

    def ask_stop_replies(self, name: str) -> None:
        """The model is replying (maybe a sub-agent of a reply): stop those and remove it?"""
        ask = QMessageBox(
            QMessageBox.Icon.Question,
            "Remove a model in use",
            f"{name} is replying now (or a reply's sub-agent uses it).",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        ask.setObjectName("stop-and-remove")
        ask.setInformativeText("Stop those replies (what they said so far is kept) and remove it?")
        stop = ask.addButton("Stop and remove", QMessageBox.ButtonRole.DestructiveRole)

        def finished(_result: int) -> None:
            ask.deleteLater()
            if ask.clickedButton() is stop:
                self.remove_requested.emit(name, True)

        ask.finished.connect(finished)
        ask.open()  # never exec() under qasync
