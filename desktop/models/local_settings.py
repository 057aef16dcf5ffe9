"""A local model's own settings on the models page, shown under the list for the model whose
Settings was pressed: its context, threads, GPU layers (used from its next start) and how
long it stays loaded with no reply (used as it is)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QPushButton,
    QSpinBox,
    QWidget,
)

from server.types import LocalModelSettingsJSON

NEVER = -1  # keep_alive: never unloaded for being idle
DEFAULT_KEEP_ALIVE = 600  # seconds, the server's default when the model names none


class LocalSettingsBox(QGroupBox):
    apply_requested = Signal(str, object)  # the model's name, the settings that changed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Settings", parent)
        self.setObjectName("local-settings")
        self.name: str | None = None
        self._shown: dict[str, int] = {}
        self.n_ctx = self._spin(512, 131_072, 512, " tokens", "Context per conversation")
        self.n_threads = self._spin(1, 64, 1, "", "Generation threads")
        self.n_gpu_layers = self._spin(-1, 1000, 1, "", "Layers on the GPU")
        self.n_gpu_layers.setSpecialValueText("all")
        self.keep_alive = self._spin(-1, 7 * 24 * 60, 1, " min", "Unload when idle for")
        self.keep_alive.setSpecialValueText("never")
        self.apply_button = QPushButton("Apply", self)
        self.apply_button.setAutoDefault(False)
        form = QFormLayout(self)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.FieldsStayAtSizeHint)
        form.addRow("Context per conversation:", self.n_ctx)
        form.addRow("Generation threads:", self.n_threads)
        form.addRow("Layers on the GPU (0: CPU only):", self.n_gpu_layers)
        form.addRow("Unload when idle for (0: after each reply):", self.keep_alive)
        apply_row = QHBoxLayout()
        apply_row.addWidget(self.apply_button)
        apply_row.addStretch(1)
        form.addRow(apply_row)
        self.apply_button.clicked.connect(self._on_apply_button_clicked)

    def _spin(self, low: int, high: int, step: int, suffix: str, name: str) -> QSpinBox:
        box = QSpinBox(self)
        box.setRange(low, high)
        box.setSingleStep(step)
        box.setSuffix(suffix)
        box.setAccessibleName(name)
        return box

    def show_settings(self, name: str, settings: LocalModelSettingsJSON) -> None:
        self.name = name
        self.setTitle(f"Settings of {name}")
        keep = settings.get("keep_alive", DEFAULT_KEEP_ALIVE)
        self._shown = {
            "n_ctx": settings["n_ctx"],
            "n_threads": settings["n_threads"],
            "n_gpu_layers": settings["n_gpu_layers"],
            "keep_alive": keep,
        }
        self.n_ctx.setValue(settings["n_ctx"])
        self.n_threads.setValue(settings["n_threads"])
        self.n_gpu_layers.setValue(settings["n_gpu_layers"])
        self.keep_alive.setValue(NEVER if keep < 0 else keep // 60)

    def values(self) -> dict[str, int]:
        minutes = self.keep_alive.value()
        return {
            "n_ctx": self.n_ctx.value(),
            "n_threads": self.n_threads.value(),
            "n_gpu_layers": self.n_gpu_layers.value(),
            "keep_alive": NEVER if minutes < 0 else minutes * 60,
        }

    def _on_apply_button_clicked(self) -> None:
        if self.name is None:
            return
        # Only what changed: a keep-alive alone is used at once, without a restart.
        changed = {k: v for k, v in self.values().items() if self._shown.get(k) != v}
        if changed:
            self.apply_requested.emit(self.name, changed)
