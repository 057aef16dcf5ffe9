"""A download on the models page, as a row: its file and the repository it comes from, a
progress bar with the bytes, speed and time left, and Pause, Resume and Cancel always there
(enabled as its state allows, never waiting for a click on the row). A failed one says why
on a line of its own (a long reason wraps, it never pushes the progress aside) and is
cleared with the same button, which then reads "Clear". A finished one is its model's row;
if that model is removed, the row comes back to add the file again (or clear it)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QProgressBar, QWidget

from desktop.models import words
from desktop.models.model_row import LineLabel, RowFrame, row_button, tone
from server.types.getting_models import DownloadJSON

MOVING = ("queued", "downloading")


class DownloadRow(RowFrame):
    pause_requested = Signal(str)  # the download's id
    resume_requested = Signal(str)
    cancel_requested = Signal(str)  # cancel, or clear a failed one: the server forgets it
    add_requested = Signal(str)  # its file's path: a finished download whose model was removed

    def __init__(self, download_id: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.id = download_id
        self.download: DownloadJSON | None = None
        self.bar = QProgressBar(self)
        self.bar.setRange(0, 100)
        self.bar.setTextVisible(False)
        self.bar.setFixedHeight(6)
        self.figures = LineLabel(self)
        self.figures.setObjectName("row-facts")
        self.text_column.insertWidget(2, self.bar)
        self.text_column.insertWidget(3, self.figures)
        self.pause_button = row_button("Pause", "Stop the transfer and keep its bytes", self)
        self.resume_button = row_button("Resume", "Go on from the bytes on disk", self)
        self.cancel_button = row_button("Cancel", "Stop it and delete its partial file", self)
        self.add_button = row_button("Add again", "Make the downloaded file a model again", self)
        self.add_button.setVisible(False)
        for button in (self.add_button, self.pause_button, self.resume_button, self.cancel_button):
            self.buttons.addWidget(button)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.pause_button.clicked.connect(lambda: self.pause_requested.emit(self.id))
        self.resume_button.clicked.connect(lambda: self.resume_requested.emit(self.id))
        self.cancel_button.clicked.connect(lambda: self.cancel_requested.emit(self.id))

    def show_download(self, download: DownloadJSON) -> None:
        self.download = download
        state = download["state"]
        self.title.setText(download["file"])
        self.title.setToolTip(download["path"])
        self.setAccessibleName(f"Download of {download['file']}")
        done = state == "completed"  # and its model removed since: the file is still here
        said = "" if state == "failed" else f" · {words.download_state_words(download)}"
        if done:
            said = " · Downloaded, not a model now"
        self.facts.setText(f"from {download['repo']}{said}")  # a failure says so below
        self.bar.setValue(words.percent(download))
        self.figures.setText(words.progress_words(download))
        failed = state == "failed"
        self.state.setVisible(failed)
        self.state.setText(f"Failed: {download['error'] or 'no reason given'}" if failed else "")
        tone(self.state, "danger" if failed else "")
        self.pause_button.setEnabled(state in MOVING)
        self.resume_button.setEnabled(state == "paused" or (failed and download["resumable"]))
        self.cancel_button.setEnabled(state != "verifying")
        self.add_button.setVisible(done)
        self.pause_button.setVisible(not done)
        self.resume_button.setVisible(not done)
        self.cancel_button.setText("Clear" if failed or done else "Cancel")
        for button in (self.add_button, self.pause_button, self.resume_button, self.cancel_button):
            button.setAccessibleName(f"{button.text()}: {download['file']}")  # which row's
        self.cancel_button.setToolTip(
            "Forget this download (the file stays on disk)"
            if done
            else "Forget this download (its partial file is deleted)"
            if failed
            else "Stop it and delete its partial file"
        )

    def _on_add_button_clicked(self) -> None:
        if self.download is not None:
            self.add_requested.emit(self.download["path"])

    def text(self) -> str:
        labels = (self.title, self.facts, self.figures, self.state)
        return " · ".join(label.text() for label in labels if label.text())
