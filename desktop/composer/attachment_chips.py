"""The files attached to the message being written, as chips above the message box: each
with its name, its size (or "uploading…", or why the server refused it), a thumbnail for an
image (or, for one too large to decode, the file's icon and "too large to preview"), a warning
when the message cannot go as it is (an image for a model that cannot see images: ⚠, in the
warning colour, saying why in its tooltip), and × to take it off (a button of its own: Tab
reaches it, Space or Enter presses it).
The chips wrap onto more lines when there are many."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from PySide6.QtCore import QEvent, QMargins, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QImage, QPalette, QPixmap
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QLayout,
    QLayoutItem,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.composer.attachment_files import size_text
from desktop.look.colours import Colours
from desktop.look.icons import icon
from server.types import AttachmentJSON

ChipState = Literal["uploading", "ready", "refused"]
CHIP_THUMBNAIL_PX = 36
NAME_WIDTH_PX = 180
REASON_WIDTH_PX = 260
UPLOADING = "uploading…"
TOO_LARGE_TO_PREVIEW = "too large to preview"
WARNING_MARK = "⚠"  # before a chip's detail while it has a warning


@dataclass(eq=False)
class Chip:
    """One file attached: what its chip shows. The controller that uploads it changes it and
    has the chips drawn again (desktop/composer/attachments.py)."""

    name: str
    size: int | None = None  # bytes, once read
    state: ChipState = "uploading"
    reason: str = ""  # why it was refused
    warning: str = ""  # why it cannot go with the message as things are (its controller says)
    thumbnail: QImage | None = None
    preview: str = ""  # why an image has no thumbnail
    attachment: AttachmentJSON | None = None  # the server's, once uploaded


class AttachmentChips(QWidget):
    chip_removed = Signal(object)  # the Chip whose × was pressed

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("attachment-chips")
        self.setAccessibleName("Attached files")
        self._flow = FlowLayout(self)
        self._chips: list[Chip] = []
        self.setVisible(False)

    def show_chips(self, chips: list[Chip]) -> None:
        """Draw these chips (none: the row goes)."""
        self._chips = list(chips)
        focused = self.focusWidget() is not None and self.isAncestorOf(self.focusWidget())
        while (item := self._flow.takeAt(0)) is not None:
            widget = item.widget()
            if widget is not None:
                widget.hide()
                widget.setParent(None)  # (no longer among the chips' children)
                widget.deleteLater()
        for chip in chips:
            self._flow.addWidget(self._chip_widget(chip))
        self.setVisible(bool(chips))
        if focused and chips:  # a × pressed from the keyboard: on to the next chip's
            self.findChildren(QToolButton)[0].setFocus()

    def chip_frames(self) -> list[QFrame]:
        """The chips as drawn, in order (for tests and screen readers' order)."""
        items = [self._flow.itemAt(i) for i in range(self._flow.count())]
        return [f for i in items if i is not None and isinstance(f := i.widget(), QFrame)]

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and self._chips:
            self.show_chips(self._chips)  # the icons and colours of the new palette

    def _chip_widget(self, chip: Chip) -> QFrame:
        palette = self.palette()
        frame = QFrame(self)
        frame.setObjectName("attachment-chip")
        frame.setFrameShape(QFrame.Shape.StyledPanel)
        border = palette.color(QPalette.ColorRole.Mid).name()
        ground = palette.color(QPalette.ColorRole.AlternateBase).name()
        colours = Colours(palette)
        if chip.warning and chip.state != "refused":
            border = colours.warning
            frame.setToolTip(chip.warning)
        frame.setStyleSheet(
            f"QFrame#attachment-chip {{ border: 1px solid {border}; border-radius: 6px; "
            f"background: {ground}; }}"
        )
        row = QHBoxLayout(frame)
        row.setContentsMargins(6, 4, 2, 4)
        row.setSpacing(6)
        picture = QLabel(frame)
        picture.setFixedSize(CHIP_THUMBNAIL_PX, CHIP_THUMBNAIL_PX)
        picture.setAlignment(Qt.AlignmentFlag.AlignCenter)
        if chip.thumbnail is not None:
            pixmap = QPixmap.fromImage(chip.thumbnail).scaled(
                CHIP_THUMBNAIL_PX, CHIP_THUMBNAIL_PX, Qt.AspectRatioMode.KeepAspectRatio,
                Qt.TransformationMode.SmoothTransformation,
            )  # fmt: skip
            picture.setPixmap(pixmap)
        else:
            picture.setPixmap(icon("file", palette).pixmap(24, 24))
        row.addWidget(picture)
        words = QVBoxLayout()
        words.setSpacing(0)
        name = QLabel(frame)
        name.setObjectName("attachment-name")
        name.setText(name.fontMetrics().elidedText(chip.name, Qt.TextElideMode.ElideMiddle,
                                                   NAME_WIDTH_PX))  # fmt: skip
        name.setToolTip(chip.name)
        words.addWidget(name)
        detail = QLabel(_detail(chip), frame)
        detail.setObjectName("attachment-detail")
        if chip.state == "refused":
            detail.setWordWrap(True)
            detail.setMaximumWidth(REASON_WIDTH_PX)
        colour = colours.muted
        if chip.state == "refused":
            colour = colours.error
        elif chip.warning:
            colour = colours.warning
            detail.setToolTip(chip.warning)
        detail.setStyleSheet(f"color: {colour};")
        words.addWidget(detail)
        row.addLayout(words)
        remove = QToolButton(frame)
        remove.setObjectName("attachment-remove")
        remove.setText("×")
        remove.setAutoRaise(True)
        remove.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        remove.setToolTip(f"Remove {chip.name}")
        remove.setAccessibleName(f"Remove {chip.name}")
        remove.clicked.connect(lambda _checked=False, c=chip: self.chip_removed.emit(c))
        row.addWidget(remove, 0, Qt.AlignmentFlag.AlignTop)
        frame.setAccessibleName(f"{chip.name}, {_detail(chip)}")
        if chip.warning and chip.state != "refused":
            frame.setAccessibleDescription(chip.warning)
        return frame


def _detail(chip: Chip) -> str:
    if chip.state == "refused":
        return chip.reason
    size = size_text(chip.size) if chip.size is not None else ""
    said = [size, chip.preview]
    if chip.state == "uploading":
        said.append(UPLOADING)
    elif chip.attachment and chip.attachment.get("note"):
        said.append(chip.attachment.get("note") or "")
    text = " · ".join(s for s in said if s)
    return f"{WARNING_MARK} {text}".rstrip() if chip.warning else text


class FlowLayout(QLayout):
    """Its widgets in a row, wrapped onto the next line when the width runs out."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._items: list[QLayoutItem] = []
        self.setContentsMargins(0, 0, 0, 4)
        self.setSpacing(6)

    def addItem(self, item: QLayoutItem) -> None:
        self._items.append(item)

    def count(self) -> int:
        return len(self._items)

    def itemAt(self, index: int) -> QLayoutItem | None:
        return self._items[index] if 0 <= index < len(self._items) else None

    def takeAt(self, index: int) -> QLayoutItem | None:
        return self._items.pop(index) if 0 <= index < len(self._items) else None

    def expandingDirections(self) -> Qt.Orientation:
        return Qt.Orientation(0)

    def hasHeightForWidth(self) -> bool:
        return True

    def heightForWidth(self, width: int) -> int:
        return self._place(QRect(0, 0, width, 0), move=False)

    def setGeometry(self, rect: QRect) -> None:
        super().setGeometry(rect)
        self._place(rect, move=True)

    def sizeHint(self) -> QSize:
        return self.minimumSize()

    def minimumSize(self) -> QSize:
        size = QSize()
        for item in self._items:
            size = size.expandedTo(item.minimumSize())
        margins = self.contentsMargins()
        return size.grownBy(QMargins(margins.left(), margins.top(), margins.right(),
                                     margins.bottom()))  # fmt: skip

    def _place(self, rect: QRect, move: bool) -> int:
        """Lay the items out in `rect` (or only measure): the height they take."""
        margins = self.contentsMargins()
        area = rect.adjusted(margins.left(), margins.top(), -margins.right(), -margins.bottom())
        x, y, line = area.x(), area.y(), 0
        gap = self.spacing()
        for item in self._items:
            hint = item.sizeHint()
            if x + hint.width() > area.right() + 1 and line > 0:
                x, y, line = area.x(), y + line + gap, 0
            if move:
                item.setGeometry(QRect(QPoint(x, y), hint))
            x += hint.width() + gap
            line = max(line, hint.height())
        return y + line - rect.y() + margins.bottom()
