"""Editing the end of a transcript's document so that it comes out as the same text drawn
whole (a reopened chat): fresh blocks with the margins Qt gives HTML paragraphs, HTML merged
into a block or kept whole, the empty block Qt leaves after a table, and the lines of a
growing paragraph sealed off while it grows.

A mixin of `Transcript` (desktop/widgets/transcript.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

from PySide6.QtGui import QTextBlock, QTextBlockFormat, QTextCharFormat, QTextCursor

if TYPE_CHECKING:
    from PySide6.QtGui import QTextDocument

MERGE_GUARD = "\u200b"  # see _insert_whole
JOIN_MAX_CHARS = 2000  # see _block_fits_more
SEAL_LINES = 1  # see _seal_lines


class TranscriptDocument:
    if TYPE_CHECKING:  # QTextBrowser's (a stub here would hide it)

        def document(self) -> QTextDocument: ...

    # Lines of a growing paragraph sealed off in blocks of their own (_seal_lines): where
    # each piece's block ends -> the bottom margin of the paragraph; and the width of the
    # lines when they were sealed.
    _seals: dict[int, float]
    _sealed_width: float

    @contextlib.contextmanager
    def _one_edit(self) -> Iterator[QTextCursor]:
        """One edit of the document, however many changes it makes: laid out once, at its
        end, not after each change (a cursor, open; other edits inside it join it)."""
        edit = QTextCursor(self.document())
        edit.beginEditBlock()
        try:
            yield edit
        finally:
            edit.endEditBlock()

    def _replace_from(self, position: int, html_text: str, joiner: str = "") -> None:
        """Replace everything from `position` on with `html_text` (its first paragraph
        merged into the block at `position`, after `joiner`)."""
        end = self._end()
        if position >= end and not html_text:
            return  # nothing to remove or draw: no edit (an edit lays the block out again)
        cursor = QTextCursor(self.document())
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

    def _insert_whole(self, position: int, html_text: str) -> None:
        """Replace everything after `position` (the end of a block) with `html_text`, each
        block of it keeping its own format, as in a document drawn whole.

        Qt merges the first block of inserted HTML into the block at the cursor, stripping
        a list item, a quote or a table of its own format. So a one-character paragraph goes
        first, takes that merge, and is removed. (It costs a layout of the block before, so
        it is used once per reply, not per update.)
        """
        cursor = QTextCursor(self.document())
        cursor.setPosition(min(position, self._end()))
        cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        start = cursor.position()
        cursor.insertHtml(f"<p>{MERGE_GUARD}</p>{html_text}")
        cursor.setPosition(start)
        cursor.setPosition(start + 1, QTextCursor.MoveMode.KeepAnchor)
        if cursor.selectedText() == MERGE_GUARD:
            cursor.removeSelectedText()

    def _append_html(self, html_text: str, top_margin: float = 0, bottom_margin: float = 0) -> None:
        """Insert `html_text` in a fresh block with these margins (its first paragraph's own
        are lost: Qt merges it into the block)."""
        cursor = QTextCursor(self.document())
        cursor.setPosition(self._open_block(top_margin))
        if bottom_margin:
            block = cursor.blockFormat()
            block.setBottomMargin(bottom_margin)
            cursor.setBlockFormat(block)
        cursor.insertHtml(html_text)

    def _open_block(self, top_margin: float = 0) -> int:
        """Start a fresh, plainly formatted block at the end (unless the last one is empty).

        Inserted HTML would otherwise merge into the previous block (a header, a code block).
        The empty block Qt leaves after a table is kept as it is: a document drawn whole has
        it too, and its height, before what follows the table.
        """
        block = QTextBlockFormat()
        block.setTopMargin(top_margin)
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if cursor.block().length() > 1 or self._ends_after_table():
            cursor.insertBlock(block, QTextCharFormat())
        else:
            cursor.setBlockFormat(block)
            cursor.setBlockCharFormat(QTextCharFormat())
        return cursor.position()

    def _block_fits_more(self) -> bool:
        """Whether the last paragraph may grow in pieces put back together when it ends (a
        layout that costs in proportion to their length): past JOIN_MAX_CHARS, the pieces
        so far are kept as they are (LongParagraphs)."""
        block = self.document().lastBlock()
        length = block.length()
        while block.position() - 1 in self._seals:
            block = block.previous()
            length += block.length()
        return length < JOIN_MAX_CHARS

    def _seal_lines(self, live_start: int) -> int:
        """Move the lines of the block at `live_start` that can no longer change into a
        block of their own: each update lays out and repaints only the lines still growing,
        not the whole paragraph (on a slow machine, painting a long paragraph at every
        update was the largest cost of a streaming reply: issue 16).

        A line can no longer change when it, and the line after it, are before
        `live_start` (frozen text): the words where it wraps are final. The pieces wrap as
        the paragraph would, as long as the width of the lines stays the same
        (_seals_outdated). Returns the characters inserted (a block separator, or none).
        """
        block = self.document().findBlock(live_start)
        layout = block.layout()
        frozen = live_start - block.position()
        cut = 0
        for index in range(layout.lineCount() - 2, SEAL_LINES - 1, -1):
            line = layout.lineAt(index)
            if line.textStart() + line.textLength() <= frozen:
                cut = line.textStart()
                break
        if not cut:
            return 0
        if not self._seals:
            self._sealed_width = self._line_width()
        paragraph = block.blockFormat()
        rest = QTextBlockFormat(paragraph)
        rest.setTopMargin(0)
        sealed = QTextBlockFormat(paragraph)
        sealed.setBottomMargin(0)
        cursor = QTextCursor(block)
        cursor.setBlockFormat(sealed)
        cursor.setPosition(block.position() + cut)
        cursor.insertBlock(rest, block.charFormat())
        self._seals[block.position() + cut] = paragraph.bottomMargin()
        return 1

    def _unseal(self) -> int:
        """Put the sealed lines back into their paragraphs (each one block again, as drawn
        whole): returns the characters removed, all before the live part."""
        if not self._seals:
            return 0
        cursor = QTextCursor(self.document())
        cursor.beginEditBlock()
        for position in sorted(self._seals, reverse=True):
            cursor.setPosition(position)
            cursor.deleteChar()
            paragraph = cursor.blockFormat()
            paragraph.setBottomMargin(self._seals[position])
            cursor.setBlockFormat(paragraph)
        cursor.endEditBlock()
        removed = len(self._seals)
        self._seals = {}
        return removed

    def _unseal_unseen(self, edit: QTextCursor) -> int:
        """_unseal, at the end of a paragraph drawn at the same width: its pieces put back
        together wrap exactly as they are shown, so the paragraph is laid out again but not
        repainted. (The repaint, of the whole paragraph, was most of what a paragraph's end
        cost: 322 px p50 against 74 px for another update; 250-300 px took 1.8 ms to paint
        on the slower machine, issue 16.) `edit`: the update's edit, open; what it drew so
        far is laid out and repainted first, so the next block must be open already:
        opening it after would lay out and repaint the paragraph it follows."""
        if not self._seals or self._seals_outdated():
            return self._unseal()
        edit.endEditBlock()
        layout = self.document().documentLayout()
        blocked = layout.blockSignals(True)
        try:
            return self._unseal()  # its own edit: one layout, its update signals unheard
        finally:
            layout.blockSignals(blocked)
            edit.beginEditBlock()

    def _seals_outdated(self) -> bool:
        """Lines sealed at another width: the pieces would no longer wrap as one paragraph."""
        return bool(self._seals) and self._line_width() != self._sealed_width

    def _line_width(self) -> float:
        document = self.document()
        frame = document.rootFrame().frameFormat()
        return document.textWidth() - frame.leftMargin() - frame.rightMargin()

    def _ends_after_table(self) -> bool:
        """The document ends with the empty block Qt puts after a table (a code block too)."""
        return self._block_after_last_table() == self.document().lastBlock()

    def _block_after_last_table(self) -> QTextBlock | None:
        """The empty block Qt put after a table, when nothing but empty blocks follows it."""
        block = self.document().lastBlock()
        while block.isValid() and block.length() <= 1:
            if QTextCursor(block.previous()).currentTable() is not None:
                return block
            block = block.previous()
        return None

    def _end(self) -> int:
        """The position at the document's end. (Not a cursor moved there: a cursor takes
        its x from the line it lands on, laying out that block first if it is not yet; 3-4
        times the cost, and a reply's update asks this a few times: issue 16.)"""
        return self.document().characterCount() - 1
