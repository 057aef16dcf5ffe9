"""Editing the end of a transcript's document so that it comes out as the same text drawn
whole (a reopened chat): fresh blocks with the margins Qt gives HTML paragraphs, HTML merged
into a block or kept whole, and the empty block Qt leaves after a table."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from PySide6.QtGui import QTextBlock, QTextBlockFormat, QTextCharFormat, QTextCursor, QTextDocument

MERGE_GUARD = "\u200b"  # see insert_whole


class Editor:
    """Edits of one document (the transcript's, for as long as it lives)."""

    def __init__(self, document: QTextDocument) -> None:
        self.document = document

    @contextlib.contextmanager
    def one_edit(self) -> Iterator[QTextCursor]:
        """One edit of the document, however many changes it makes: laid out once, at its
        end, not after each change (a cursor, open; other edits inside it join it)."""
        edit = QTextCursor(self.document)
        edit.beginEditBlock()
        try:
            yield edit
        finally:
            edit.endEditBlock()

    def replace_from(self, position: int, html_text: str, joiner: str = "") -> None:
        """Replace everything from `position` on with `html_text` (its first paragraph
        merged into the block at `position`, after `joiner`)."""
        end = self.end()
        if position >= end and not html_text:
            return  # nothing to remove or draw: no edit (an edit lays the block out again)
        cursor = QTextCursor(self.document)
        cursor.setPosition(min(position, end))
        # Deleting from a block's start into a list item leaves the block in that list: the
        # block keeps the format it had before (a plain one, opened for this text).
        kept = cursor.blockFormat()
        # One edit: the block is laid out once, not after each step.
        cursor.beginEditBlock()
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        cursor.setBlockFormat(kept)
        if html_text:
            if joiner:
                cursor.insertText(joiner)
            cursor.insertHtml(html_text)
        cursor.endEditBlock()

    def insert_whole(self, position: int, html_text: str) -> None:
        """Replace everything after `position` (the end of a block) with `html_text`, each
        block of it keeping its own format, as in a document drawn whole.

        Qt merges the first block of inserted HTML into the block at the cursor, stripping
        a list item, a quote or a table of its own format. So a one-character paragraph goes
        first, takes that merge, and is removed. (It costs a layout of the block before, so
        it is used once per reply, not per update.)
        """
        cursor = QTextCursor(self.document)
        cursor.setPosition(min(position, self.end()))
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        start = cursor.position()
        cursor.insertHtml(f"<p>{MERGE_GUARD}</p>{html_text}")
        cursor.setPosition(start)
        cursor.setPosition(start + 1, QTextCursor.MoveMode.KeepAnchor)
        if cursor.selectedText() == MERGE_GUARD:
            cursor.removeSelectedText()

    def append_html(self, html_text: str, top_margin: float = 0, bottom_margin: float = 0) -> None:
        """Insert `html_text` in a fresh block with these margins (its first paragraph's own
        are lost: Qt merges it into the block)."""
        cursor = QTextCursor(self.document)
        cursor.setPosition(self.open_block(top_margin))
        if bottom_margin:
            block = cursor.blockFormat()
            block.setBottomMargin(bottom_margin)
            cursor.setBlockFormat(block)
        cursor.insertHtml(html_text)

    def open_block(self, top_margin: float = 0) -> int:
        """Start a fresh, plainly formatted block at the end (unless the last one is empty).

        Inserted HTML would otherwise merge into the previous block (a header, a code block).
        The empty block Qt leaves after a table is kept as it is: a document drawn whole has
        it too, and its height, before what follows the table.
        """
        block = QTextBlockFormat()
        block.setTopMargin(top_margin)
        cursor = QTextCursor(self.document)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if cursor.block().length() > 1 or self.ends_after_table():
            cursor.insertBlock(block, QTextCharFormat())
        else:
            cursor.setBlockFormat(block)
            cursor.setBlockCharFormat(QTextCharFormat())
        return cursor.position()

    def line_width(self) -> float:
        frame = self.document.rootFrame().frameFormat()
        return self.document.textWidth() - frame.leftMargin() - frame.rightMargin()

    def ends_after_table(self) -> bool:
        """The document ends with the empty block Qt puts after a table (a code block too)."""
        return self.block_after_last_table() == self.document.lastBlock()

    def block_after_last_table(self) -> QTextBlock | None:
        """The empty block Qt put after a table, when nothing but empty blocks follows it."""
        block = self.document.lastBlock()
        while block.isValid() and block.length() <= 1:
            if QTextCursor(block.previous()).currentTable() is not None:
                return block
            block = block.previous()
        return None

    def end(self) -> int:
        """The position at the document's end. (Not a cursor moved there: a cursor takes
        its x from the line it lands on, laying out that block first if it is not yet; 3-4
        times the cost, and a reply's update asks this a few times: issue 16.)"""
        return self.document.characterCount() - 1
