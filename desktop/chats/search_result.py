"""How a search result is drawn in the sidebar: the chat's title, and under it, smaller and
muted, the matching text with the words found in bold (no «» markers, no code fences)."""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QAbstractTextDocumentLayout, QPainter, QPalette, QTextDocument
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

SNIPPET_ROLE = Qt.ItemDataRole.UserRole + 3
FENCE = re.compile(r"`{3,}\w*|~{3,}\w*")
MATCH = re.compile(r"«(.*?)»", re.DOTALL)

Index = QModelIndex | QPersistentModelIndex


def clean_snippet(snippet: str) -> str:
    """The server's snippet as HTML: code fences and line breaks gone, «matches» bold."""
    flat = " ".join(FENCE.sub(" ", snippet).split())
    parts = MATCH.split(flat)  # text, match, text, match, ...
    return "".join(
        f"<b>{html.escape(part)}</b>" if i % 2 else html.escape(part)
        for i, part in enumerate(parts)
    )


class OneLineDelegate(QStyledItemDelegate):
    """A row one line high that asks for no width: the view gives it its own, and a title
    longer than that ends in "…" (asked for as wide as its text, a row would widen the list
    past its view, with a horizontal scroll bar). With the list's uniform sizes, asked once
    a layout."""

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        return QSize(1, super().sizeHint(option, index).height())

    def initStyleOption(self, option: QStyleOptionViewItem, index: Index) -> None:
        """A row with something drawn at its end (the list's `reserved_width`: a badge) ends
        its title in "…" before it, not under it."""
        super().initStyleOption(option, index)
        widget = option.widget
        reserved = getattr(widget, "reserved_width", None)
        room = reserved(index) if callable(reserved) else 0
        if room <= 0 or widget is None:
            return
        text = widget.style().subElementRect(QStyle.SubElement.SE_ItemViewItemText, option, widget)
        option.text = option.fontMetrics.elidedText(
            option.text,
            Qt.TextElideMode.ElideRight,
            max(0, option.rect.right() - room - text.left()),
        )


class SearchResultDelegate(OneLineDelegate):
    """Items with a snippet get two lines; the others are drawn as usual."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)

    def _document(
        self, option: QStyleOptionViewItem, index: Index, width: int, selected: bool = False
    ) -> QTextDocument:
        palette = option.palette
        # On the selection's background the muted tone sits between its text and the highlight.
        text = palette.color(
            QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        )
        base = palette.color(QPalette.ColorRole.Highlight if selected else QPalette.ColorRole.Base)
        muted = f"rgb({(text.red() + base.red()) // 2},{(text.green() + base.green()) // 2}," \
                f"{(text.blue() + base.blue()) // 2})"  # fmt: skip
        title = html.escape(str(index.data(Qt.ItemDataRole.DisplayRole)))
        document = QTextDocument()
        document.setDefaultFont(option.font)
        document.setDocumentMargin(1)
        document.setHtml(
            f'<div style="color:{text.name()};">{title}</div>'
            f'<div style="color:{muted}; font-size:small;">{index.data(SNIPPET_ROLE)}</div>'
        )
        document.setTextWidth(max(width, 40))
        return document

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        if not index.data(SNIPPET_ROLE):
            super().paint(painter, option, index)
            return
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        item.text = ""
        widget = item.widget
        style = widget.style() if widget is not None else None
        if style is None:
            return
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, widget)
        area = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, item, widget)
        selected = bool(item.state & QStyle.StateFlag.State_Selected)
        document = self._document(option, index, area.width(), selected)
        context = QAbstractTextDocumentLayout.PaintContext()
        painter.save()
        painter.translate(area.topLeft())
        document.documentLayout().draw(painter, context)
        painter.restore()

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        if not index.data(SNIPPET_ROLE):
            return super().sizeHint(option, index)
        width = option.rect.width() or 240
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        item.text = ""
        item.rect = QRect(0, 0, width, 1000)
        widget = item.widget
        text_width = width - 8
        if widget is not None:  # as wide as paint() lays it out: less the icon's place
            area = widget.style().subElementRect(
                QStyle.SubElement.SE_ItemViewItemText, item, widget
            )
            text_width = area.width()
        document = self._document(option, index, text_width)
        return QSize(width, int(document.size().height()) + 4)
