"""A GGUF file found on this computer (LM Studio's, Ollama's, the Hugging Face cache's, a
folder of the user's) that is not a model yet, as a row of the models page: its size,
quantization and where it was found, and "Use" to add it where it is (nothing copied)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.models import words
from desktop.models.model_row import RowFrame, row_button
from server.types.getting_models import FoundModelJSON


class FoundRow(RowFrame):
    use_requested = Signal(str, str)  # its path, the name to give it

    def __init__(self, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.path = path
        self.found: FoundModelJSON | None = None
        self.use_button = row_button(
            "Use", "Add it as a model where it is: nothing is copied", self
        )
        self.buttons.addWidget(self.use_button)
        self.use_button.clicked.connect(self._on_use_button_clicked)

    def show_found(self, found: FoundModelJSON) -> None:
        self.found = found
        self.title.setText(found["name"])
        self.title.setToolTip(found["path"])
        self.setAccessibleName(f"Found on this computer: {found['name']}")
        self.facts.setText(words.found_facts_words(found))
        self.state.setText(f"Found in {words.found_in_words(found)} · not added")

    def _on_use_button_clicked(self) -> None:
        if self.found is not None:
            self.use_requested.emit(self.found["path"], self.found["name"])

    def text(self) -> str:
        return " · ".join(label.text() for label in (self.title, self.facts, self.state))
