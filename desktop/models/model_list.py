"""The models page's one list: downloads on top (where a new one is seen at once), then every
model the server has (local and each upstream's), then the files found on this computer
that are not models yet. Rows are keyed and updated in place at each refresh; a row comes
and goes with its thing. What a row asks goes up as the list's own signals."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from desktop.models.download_row import DownloadRow
from desktop.models.found_row import FoundRow
from desktop.models.model_row import ModelRow, RowFrame
from server.types import ModelJSON
from server.types.getting_models import DownloadJSON, FoundModelJSON

R = TypeVar("R", bound=RowFrame)


class Section(QWidget, Generic[R]):
    """A header and its rows, kept in the order given, each made once by `make`."""

    def __init__(self, title: str, make: Callable[[str], R], parent: QWidget) -> None:
        super().__init__(parent)
        self._make = make
        self.rows: dict[str, R] = {}
        self.header = QLabel(title, self)
        self.header.setObjectName("section-header")
        self._layout = QVBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(8)
        self._layout.addWidget(self.header)

    def keep(self, keys: Sequence[str]) -> list[R]:
        """The rows of `keys`, in that order (new ones made); the others deleted. Returns
        the rows made now."""
        made: list[R] = []
        for key in set(self.rows) - set(keys):
            row = self.rows.pop(key)
            self._layout.removeWidget(row)
            row.deleteLater()
        for index, key in enumerate(keys):
            if key not in self.rows:
                self.rows[key] = self._make(key)
                made.append(self.rows[key])
            row = self.rows[key]
            if self._layout.indexOf(row) != index + 1:
                self._layout.insertWidget(index + 1, row)
                row.show()  # now, not at the layout's next turn: a row is there once made
        self.setVisible(bool(keys))
        return made


class ModelList(QScrollArea):
    load_requested = Signal(str)  # a model's name
    eject_requested = Signal(str)
    default_requested = Signal(str)
    remove_requested = Signal(str)
    settings_requested = Signal(str)
    pause_requested = Signal(str)  # a download's id
    resume_requested = Signal(str)
    cancel_requested = Signal(str)
    use_requested = Signal(str, str)  # a found file's path, the name to give it
    add_requested = Signal(str)  # a downloaded file's path: a model again

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("model-list")
        self.setAccessibleName("Models")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        inside = QWidget(self)
        inside.setObjectName("model-list-inside")
        self.downloads: Section[DownloadRow] = Section("Downloading", self._download_row, inside)
        self.models: Section[ModelRow] = Section("Models", self._model_row, inside)
        self.found: Section[FoundRow] = Section("Found on this computer", self._found_row, inside)
        layout = QVBoxLayout(inside)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(24)
        for section in (self.downloads, self.models, self.found):
            layout.addWidget(section)
        layout.addStretch(1)
        self.setWidget(inside)
        self.downloads.setVisible(False)
        self.found.setVisible(False)

    # -- what the server says ------------------------------------------------------------

    def show_models(self, models: list[ModelJSON], origins: dict[str, str]) -> None:
        """`origins`: the repository a model was downloaded from, by its name."""
        self.models.keep([m["name"] for m in models])
        for model in models:
            origin = origins.get(model["name"])
            self.models.rows[model["name"]].show_model(model, f"from {origin}" if origin else "")

    def show_downloads(self, downloads: list[DownloadJSON], models: set[str]) -> None:
        """Every download not yet a model (a completed one is its model's row, unless that
        model is gone: `models` are the names there are)."""
        shown = [d for d in downloads if d["state"] != "completed" or d["model"] not in models]
        made = self.downloads.keep([d["id"] for d in shown])
        for download in shown:
            self.downloads.rows[download["id"]].show_download(download)
        if made:
            self.ensureWidgetVisible(made[-1])

    def show_found(self, found: list[FoundModelJSON]) -> None:
        """The files found that are not models yet."""
        shown = [f for f in found if f["model"] is None]
        self.found.keep([f["path"] for f in shown])
        for item in shown:
            self.found.rows[item["path"]].show_found(item)

    # -- rows, made once -------------------------------------------------------------------

    def _model_row(self, name: str) -> ModelRow:
        row = ModelRow(name, self.models)
        row.load_requested.connect(self.load_requested)
        row.eject_requested.connect(self.eject_requested)
        row.default_requested.connect(self.default_requested)
        row.remove_requested.connect(self.remove_requested)
        row.settings_requested.connect(self.settings_requested)
        return row

    def _download_row(self, download_id: str) -> DownloadRow:
        row = DownloadRow(download_id, self.downloads)
        row.pause_requested.connect(self.pause_requested)
        row.resume_requested.connect(self.resume_requested)
        row.cancel_requested.connect(self.cancel_requested)
        row.add_requested.connect(self.add_requested)
        return row

    def _found_row(self, path: str) -> FoundRow:
        row = FoundRow(path, self.found)
        row.use_requested.connect(self.use_requested)
        return row
