"""Files dropped (or pasted) on a widget: the local files a drag or the clipboard carries,
and a filter that makes any widget a place to drop files on (the transcript: it is read-only,
and its own drop would do nothing) without changing the widget itself."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMimeData, QObject, Signal
from PySide6.QtGui import QDragEnterEvent, QDragMoveEvent, QDropEvent
from PySide6.QtWidgets import QWidget


def local_files(mime: QMimeData | None) -> list[str]:
    """The local files `mime` names (a file manager's copy or drag); web links are no files."""
    if mime is None or not mime.hasUrls():
        return []
    return [url.toLocalFile() for url in mime.urls() if url.isLocalFile() and url.toLocalFile()]


class FileDrops(QObject):
    """Watches a widget for files dropped on it; lets every other drop through."""

    files_dropped = Signal(list)  # their paths

    def watch(self, widget: QWidget) -> None:
        widget.setAcceptDrops(True)
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        kind = event.type()
        if kind in (QEvent.Type.DragEnter, QEvent.Type.DragMove) and isinstance(
            event, (QDragEnterEvent, QDragMoveEvent)
        ):
            if local_files(event.mimeData()):
                event.acceptProposedAction()
                return True
        elif kind == QEvent.Type.Drop and isinstance(event, QDropEvent):
            files = local_files(event.mimeData())
            if files:
                event.acceptProposedAction()
                self.files_dropped.emit(files)
                return True
        return super().eventFilter(watched, event)
