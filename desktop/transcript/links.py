"""What the transcript's links open: a web link (after the user confirms its target, shown in
the status bar while hovered), a tool step's details, a cited source, a resource a tool's
result linked to (resource_links.py); and the notice that a Copy link put something on the
clipboard."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QDialog, QMainWindow, QMessageBox

from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.transcript.resource_links import ResourceLinks
from desktop.transcript.source_dialog import SourceDialog
from desktop.transcript.step_details import StepDetailsDialog
from desktop.transcript.surface import TranscriptSurface
from server.types import CitationPartJSON, ToolPartJSON

NOTICE_MS = 2500


class TranscriptLinks(Controller):
    def __init__(
        self,
        context: Context,
        window: QMainWindow,
        transcript: TranscriptSurface,
        show_error: Callable[[str], None],
    ) -> None:
        super().__init__(context, window)
        self._window = window
        self._show_error = show_error
        self._details: QDialog | None = None  # the step or source shown (one at a time)
        transcript.link_clicked.connect(self._on_link_clicked)
        transcript.link_hovered.connect(self._on_link_hovered)
        transcript.code_copied.connect(self._on_code_copied)
        transcript.citation_clicked.connect(self._on_citation_clicked)
        transcript.step_clicked.connect(self._on_step_clicked)
        self.resources = ResourceLinks(context, window, transcript)

    def notice(self, text: str) -> None:
        self._window.statusBar().showMessage(text, NOTICE_MS)

    def _on_citation_clicked(self, citation: CitationPartJSON) -> None:
        # The path is data (an imported chat names any path it likes): the server reads the
        # file, and says whether it may be opened, only if a folder of the library holds it.
        dialog = SourceDialog(citation, self._window)
        dialog.open_requested.connect(self._open_local)
        self._show_details(dialog)
        self._context.tasks.spawn(self._read_source(dialog))

    async def _read_source(self, dialog: SourceDialog) -> None:
        citation = dialog.citation
        try:
            client = self._context.require_client()
            lines = citation["lines"]
            found = await client.library_source(citation["path"], lines)
        except ClientError as exc:
            if dialog is self._details:
                dialog.show_failure(exc.message)
            return
        if dialog is self._details:
            dialog.show_source(found)

    def _on_step_clicked(self, step: ToolPartJSON) -> None:
        self._show_details(StepDetailsDialog(step, self._window))

    def _show_details(self, dialog: QDialog) -> None:
        if self._details is not None:
            self._details.close()
            self._details.deleteLater()  # one at a time: the one before is not kept
        self._details = dialog
        dialog.open()

    def _open_local(self, url: QUrl) -> None:
        if not QDesktopServices.openUrl(url):
            self._show_error(f"Could not open {url.toLocalFile()}")

    def _on_link_clicked(self, url: QUrl) -> None:
        # A model can write any link text: the target is shown before anything opens.
        ask = QMessageBox(
            QMessageBox.Icon.Question,
            "Open link",
            "Open this link in your browser?",
            QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel,
            self._window,
        )
        ask.setObjectName("open-link")
        ask.setInformativeText(url.toString())

        def finished(result: int) -> None:
            ask.deleteLater()
            if result == QMessageBox.StandardButton.Open:
                QDesktopServices.openUrl(url)

        ask.finished.connect(finished)
        ask.open()  # never exec() under qasync

    def _on_link_hovered(self, target: str) -> None:
        if target:
            self._window.statusBar().showMessage(target)
        else:
            self._window.statusBar().clearMessage()

    def _on_code_copied(self) -> None:
        self.notice("Copied to the clipboard")
