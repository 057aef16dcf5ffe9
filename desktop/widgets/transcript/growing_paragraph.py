"""The lines of a growing paragraph sealed off while it grows: the lines that can no longer
change go into a block of their own, so each update of a streaming reply lays out and repaints
only the lines still growing, not the whole paragraph (on a slow machine, painting a long
paragraph at every update was the largest cost of a streaming reply: issue 16). Put back
together, each paragraph one block again, when it ends, and whenever the lines' width changes
(the pieces wrap as the paragraph would only at the width they were sealed at)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QTextBlockFormat, QTextCursor

from desktop.widgets.transcript.document import Editor

JOIN_MAX_CHARS = 2000  # see fits_more
SEAL_LINES = 1  # see seal


class SealedLines:
    """The sealed lines of the reply growing at the end of the document."""

    def __init__(self, editor: Editor) -> None:
        self._editor = editor
        # Where each piece's block ends -> the bottom margin of its paragraph.
        self.seals: dict[int, float] = {}
        self.width = 0.0  # of the lines when they were sealed

    def fits_more(self) -> bool:
        """Whether the last paragraph may grow in pieces put back together when it ends (a
        layout that costs in proportion to their length): past JOIN_MAX_CHARS, the pieces
        so far are kept as they are (long_paragraph.py)."""
        block = self._editor.document.lastBlock()
        length = block.length()
        while block.position() - 1 in self.seals:
            block = block.previous()
            length += block.length()
        return length < JOIN_MAX_CHARS

    def seal(self, live_start: int) -> int:
        """Move the lines of the block at `live_start` that can no longer change into a
        block of their own.

        A line can no longer change when it, and the line after it, are before
        `live_start` (frozen text): the words where it wraps are final. The pieces wrap as
        the paragraph would, as long as the width of the lines stays the same
        (`outdated`). Returns the characters inserted (a block separator, or none).
        """
        block = self._editor.document.findBlock(live_start)
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
        if not self.seals:
            self.width = self._editor.line_width()
        paragraph = block.blockFormat()
        rest = QTextBlockFormat(paragraph)
        rest.setTopMargin(0)
        sealed = QTextBlockFormat(paragraph)
        sealed.setBottomMargin(0)
        cursor = QTextCursor(block)
        cursor.setBlockFormat(sealed)
        cursor.setPosition(block.position() + cut)
        cursor.insertBlock(rest, block.charFormat())
        self.seals[block.position() + cut] = paragraph.bottomMargin()
        return 1

    def unseal(self) -> int:
        """Put the sealed lines back into their paragraphs (each one block again, as drawn
        whole): returns the characters removed, all before the live part."""
        if not self.seals:
            return 0
        cursor = QTextCursor(self._editor.document)
        cursor.beginEditBlock()
        for position in sorted(self.seals, reverse=True):
            cursor.setPosition(position)
            cursor.deleteChar()
            paragraph = cursor.blockFormat()
            paragraph.setBottomMargin(self.seals[position])
            cursor.setBlockFormat(paragraph)
        cursor.endEditBlock()
        removed = len(self.seals)
        self.seals = {}
        return removed

    def unseal_unseen(self, edit: QTextCursor) -> int:
        """`unseal`, at the end of a paragraph drawn at the same width: its pieces put back
        together wrap exactly as they are shown, so the paragraph is laid out again but not
        repainted. (The repaint, of the whole paragraph, was most of what a paragraph's end
        cost: 322 px p50 against 74 px for another update; 250-300 px took 1.8 ms to paint
        on the slower machine, issue 16.) `edit`: the update's edit, open; what it drew so
        far is laid out and repainted first, so the next block must be open already:
        opening it after would lay out and repaint the paragraph it follows."""
        if not self.seals or self.outdated():
            return self.unseal()
        edit.endEditBlock()
        layout = self._editor.document.documentLayout()
        blocked = layout.blockSignals(True)
        try:
            return self.unseal()  # its own edit: one layout, its update signals unheard
        finally:
            layout.blockSignals(blocked)
            edit.beginEditBlock()

    def outdated(self) -> bool:
        """Lines sealed at another width: the pieces would no longer wrap as one paragraph."""
        return bool(self.seals) and self._editor.line_width() != self.width

    def move(self, move: Callable[[int], int]) -> None:
        self.seals = {move(position): margin for position, margin in self.seals.items()}

    def forget(self) -> None:
        """The document is drawn anew, or the reply's end put its paragraphs together."""
        self.seals = {}
