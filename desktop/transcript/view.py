"""The Qt Quick transcript as a widget of the window: a QQuickWidget showing
qml/Transcript.qml over the window's `TranscriptRows`, in the look's palette and scales."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QObject, QTimer, QUrl, Signal
from PySide6.QtGui import QColor
from PySide6.QtQuickWidgets import QQuickWidget
from PySide6.QtWidgets import QApplication, QWidget

from desktop.look import scale
from desktop.look.icon_images import PROVIDER, IconImages
from desktop.look.palette import palette
from desktop.transcript.markdown import MarkdownRenderer
from desktop.transcript.rows import TranscriptRows
from desktop.transcript.thumbnails import PROVIDER as THUMBS
from desktop.transcript.thumbnails import ThumbnailImages, ThumbnailState

QML = Path(__file__).with_name("qml") / "Transcript.qml"


class QmlLoadError(RuntimeError):
    """The transcript's QML did not load (a broken install): what Qt said."""


class QuickTranscript(QQuickWidget):
    link_activated = Signal(str)  # a link in a message (a source, a code block's Copy…)
    action_triggered = Signal(str, str)  # a message's id, and what to do: "copy", "edit"…
    source_activated = Signal(str, int)  # a reply's id, and the number of its source
    file_activated = Signal(str, str)  # a question's id, and one of its files' id
    # A resource a tool step's result linked to: the reply's id, the step's and the URI.
    step_link_activated = Signal(str, str, str)

    def __init__(self, dark: bool = False, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("quickTranscript")
        self.renderer = MarkdownRenderer(dark)
        self.renderer.link_colour = palette(dark).accent
        self.rows = TranscriptRows(self.renderer, self)
        self.setResizeMode(QQuickWidget.ResizeMode.SizeRootObjectToView)
        self.engine().addImageProvider(PROVIDER, IconImages())
        self.thumbnails = ThumbnailState(self)  # a question's images (fetched by the window)
        self.engine().addImageProvider(THUMBS, ThumbnailImages(self.thumbnails))
        self.setClearColor(QColor(palette(dark).background))
        self.setInitialProperties(
            {
                "rows": self.rows,
                "colours": palette(dark).as_map(),
                "look": scale.as_map(),
                "thumbs": self.thumbnails,
            }
        )
        self.setSource(QUrl.fromLocalFile(str(QML)))
        if self.status() != QQuickWidget.Status.Ready:
            raise QmlLoadError("; ".join(error.toString() for error in self.errors()))
        self.list.linkActivated.connect(self.link_activated)  # type: ignore[attr-defined]
        self.list.actionTriggered.connect(self.action_triggered)  # type: ignore[attr-defined]
        self.list.sourceActivated.connect(self.source_activated)  # type: ignore[attr-defined]
        self.list.fileActivated.connect(self.file_activated)  # type: ignore[attr-defined]
        self.list.stepLinkWanted.connect(self.step_link_activated)  # type: ignore[attr-defined]
        self._text_scale = 1.0
        self.list.textWidthChanged.connect(self._remeasure)  # type: ignore[attr-defined]
        self._remeasure()

    @property
    def list(self) -> QObject:
        """The ListView (QML's root object)."""
        root = self.rootObject()
        assert root is not None  # loaded in __init__, or it raised
        return root

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:  # View → Zoom: the window's font
            base = QApplication.font().pointSizeF()
            size = self.font().pointSizeF()
            self.set_text_scale(size / base if base > 0 and size > 0 else 1.0)

    def set_text_scale(self, text_scale: float) -> None:
        """The messages' text `text_scale` times its size in the look's type scale."""
        if text_scale == self._text_scale:
            return
        self._text_scale = text_scale
        self.list.setProperty("look", scale.as_map(text_scale))
        self._remeasure()

    def _remeasure(self) -> None:
        width = float(self.list.property("textWidth") or 0.0)
        self.rows.remeasure(width, scale.type_sizes(self._text_scale)["body"])

    def set_dark(self, dark: bool) -> None:
        self.renderer.set_dark(dark)
        self.renderer.link_colour = palette(dark).accent
        self.setClearColor(QColor(palette(dark).background))
        self.list.setProperty("colours", palette(dark).as_map())

    def show_found(self, at: int) -> None:
        """Bring the message at `at` to the middle of the view, marked as found."""
        self.list.setProperty("following", False)
        self.rows.mark_found(at)
        self.list.positionViewAtIndex(at, 1)  # type: ignore[attr-defined]  # ListView.Center

    def follow(self) -> None:
        """Show the newest message, and stay with it as it grows."""
        self.list.setProperty("following", True)
        self.list.positionViewAtEnd()  # type: ignore[attr-defined]

    def follow_soon(self) -> None:
        """`follow`, moved there on the next turn of the event loop: positioning lays out the
        rows just added at once (a long question: milliseconds), which then happens apart
        from the work that added them (a reply's start: its rows, the chat's, the list's)."""
        self.list.setProperty("following", True)
        QTimer.singleShot(0, self._to_end)

    def _to_end(self) -> None:
        if self.list.property("following"):
            self.list.positionViewAtEnd()  # type: ignore[attr-defined]
