"""The sidebar's date headers ("Today", "Yesterday", "March 2026"...), drawn above the first
chat of each group as part of its row, the way a Qt Quick ListView draws its sections.

A header is no row of its own: the rows stay the chats, so the keyboard (Up, Down, Home, End,
Enter), selection and every index into the list reach chats only, and a header can never be
selected or focused. The row of a group's first chat is taller by the header's band; the chat
is drawn, edited, hovered and clicked in the rest of it (`chat_part`).
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyleOptionViewItem, QWidget

from desktop.chats.search_result import SNIPPET_ROLE, OneLineDelegate, SearchResultDelegate
from desktop.look.palette import palette
from desktop.look.scale import SPACING, TYPE
from desktop.look.theme import is_dark

Index = QModelIndex | QPersistentModelIndex
HeaderAt = Callable[[int], str]  # a row's header ("" for none), by its index

ABOVE = SPACING["l"]  # between a group's last chat and the next header
BELOW = SPACING["xs"]  # between a header and its first chat
FIRST_ABOVE = SPACING["s"]  # above the list's first header (nothing to part it from)
INDENT = SPACING["m"]
ROW_PADDING = SPACING["s"]  # a title's row: this much taller than its line, to breathe


def header_font(base: QFont) -> QFont:
    """Small and semi-bold: it names the chats below, it is not one of them."""
    font = QFont(base)
    font.setPixelSize(TYPE["small"])
    font.setWeight(QFont.Weight.DemiBold)
    return font


def band_height(base: QFont, first: bool) -> int:
    """How much taller a header makes its row."""
    return (FIRST_ABOVE if first else ABOVE) + QFontMetrics(header_font(base)).height() + BELOW


def chat_part(rect: QRect, header: str, base: QFont, first: bool) -> QRect:
    """Where the chat itself is in its row's `rect`: below its header if it has one."""
    if not header:
        return QRect(rect)
    return rect.adjusted(0, band_height(base, first), 0, 0)


def paint_header(
    painter: QPainter,
    rect: QRect,
    header: str,
    option: QStyleOptionViewItem,
    first: bool,
    left: int,
) -> None:
    """The header in the top band of `rect`, from `left` (where the titles begin), in the
    theme's muted colour."""
    font = header_font(option.font)
    top = rect.top() + (FIRST_ABOVE if first else ABOVE)
    height = QFontMetrics(font).height()
    area = QRect(left, top, max(0, rect.right() - INDENT - left), height)
    painter.save()
    painter.setFont(font)
    painter.setPen(QColor(palette(is_dark(option.palette)).muted))
    painter.drawText(
        area,
        int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
        QFontMetrics(font).elidedText(header, Qt.TextElideMode.ElideRight, area.width()),
    )
    painter.restore()


class _Headed:
    """What both of the sidebar's delegates add: a header above a group's first row."""

    header_at: HeaderAt
    _one_line: tuple[QFont, QSize] | None

    def _header(self, index: Index) -> str:
        return self.header_at(index.row())

    def _chat_option(self, option: QStyleOptionViewItem, index: Index) -> QStyleOptionViewItem:
        header = self._header(index)
        if not header:
            return option
        chat = QStyleOptionViewItem(option)
        chat.rect = chat_part(option.rect, header, option.font, index.row() == 0)
        return chat

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        header = self._header(index)
        chat = self._chat_option(option, index)
        if header:
            first = index.row() == 0
            paint_header(painter, option.rect, header, option, first, self._title_left(chat, index))
        super().paint(painter, chat, index)  # type: ignore[misc]

    def _title_left(self, option: QStyleOptionViewItem, index: Index) -> int:
        """Where a row's title begins (after the busy dot's place): a header lines up with it."""
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)  # type: ignore[attr-defined]
        widget = item.widget
        if widget is None:
            return option.rect.left() + INDENT
        text = QStyle.SubElement.SE_ItemViewItemText
        return int(widget.style().subElementRect(text, item, widget).left())

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        # Asked for every row at each layout of the list: a plain row's height is measured
        # once a font (the rows are one line each), as the view's uniform sizes did.
        if index.data(SNIPPET_ROLE):
            size: QSize = super().sizeHint(option, index)  # type: ignore[misc]
        else:
            if self._one_line is None or self._one_line[0] != option.font:
                self._one_line = (QFont(option.font), super().sizeHint(option, index))  # type: ignore[misc]
            size = QSize(self._one_line[1])
            size.setHeight(size.height() + ROW_PADDING)
        header = self._header(index)
        if header:
            size.setHeight(size.height() + band_height(option.font, index.row() == 0))
        return size

    def updateEditorGeometry(
        self, editor: QWidget, option: QStyleOptionViewItem, index: Index
    ) -> None:
        super().updateEditorGeometry(editor, self._chat_option(option, index), index)  # type: ignore[misc]


class HeadedOneLine(_Headed, OneLineDelegate):
    """A title on one line, under its group's header if it is the group's first."""

    def __init__(self, parent: QWidget, header_at: HeaderAt) -> None:
        super().__init__(parent)
        self.header_at = header_at
        self._one_line = None


class HeadedSearchResult(_Headed, SearchResultDelegate):
    """A search's row (title and the words found), under its group's header if it is the
    group's first: a search's results keep their groups, and a group none is in is not
    shown."""

    def __init__(self, parent: QWidget, header_at: HeaderAt) -> None:
        super().__init__(parent)
        self.header_at = header_at
        self._one_line = None
