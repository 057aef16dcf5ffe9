"""A paragraph longer than a block may grow to (JOIN_MAX_CHARS), drawn while it streams: each
time it passes that length, the paragraph so far (its sealed pieces put back together) stays a
block of its own for good, cut at a line's start with no margin below it, so the paragraph
reads as one, line for line where the paragraph drawn whole puts them. Its end puts back
together only what was sealed since (a layout in proportion to its length, bounded by
JOIN_MAX_CHARS), not the whole paragraph.

The kept pieces wrap as one paragraph only at the width and in the font they were cut in: when
either changes they are put back together (the window lays out everything again then anyway).
Find joins them too (it matches within a block), and a copy gives the paragraph whole.
"""

from __future__ import annotations

from PySide6.QtGui import QTextCursor

from desktop.widgets.transcript.document import Editor
from desktop.widgets.transcript.growing_paragraph import SealedLines

CONTINUED_STATE = 2  # a block's user state: its paragraph goes on in the next block
NO_STATE = -1
# What a copy's plain text makes of the document's own characters (QTextDocument.toPlainText):
# paragraph and line separators and a frame's ends are line breaks, a no-break space a space.
PLAIN = str.maketrans({"\u2029": "\n", "\u2028": "\n", "\ufdd0": "\n", "\ufdd1": "\n",
                       "\u00a0": " "})  # fmt: skip


class LongParagraphs:
    """The paragraphs of the document kept in pieces."""

    def __init__(self, editor: Editor) -> None:
        self._editor = editor
        self.width: float | None = None  # of the lines pieces were kept at (None: none kept)

    def keep_pieces(self, sealed: SealedLines, edit: QTextCursor) -> None:
        """The paragraph so far stays a block of its own for good: its sealed pieces but the
        live lines are put back together (unseen: at the width they were cut at they wrap as
        shown; one block, so Find and a copy are cut only there), and it is marked as going
        on in the next block. The paragraph may then grow by JOIN_MAX_CHARS again. `edit`:
        the update's edit, open."""
        if not sealed.seals:
            return
        cut = max(sealed.seals)  # kept: between the paragraph so far and its live lines
        del sealed.seals[cut]
        width = sealed.width
        cut -= sealed.unseal_unseen(edit)
        block = self._editor.document.findBlock(cut)
        piece = block.blockFormat()
        if piece.bottomMargin():  # the paragraph's, set back by unseal: none above the cut
            piece.setBottomMargin(0)
            QTextCursor(block).setBlockFormat(piece)
        block.setUserState(CONTINUED_STATE)
        self.width = width

    def outdated(self) -> bool:
        """Pieces kept at another width: they would no longer wrap as one paragraph."""
        return self.width is not None and self._editor.line_width() != self.width

    def forget(self) -> None:
        """The document is drawn anew: no paragraph in pieces any more."""
        self.width = None

    def join(self) -> list[int]:
        """Put every paragraph kept in pieces back together, each one block again (as drawn
        whole). Returns where the block separators removed were, ascending."""
        if self.width is None:
            return []
        self.width = None
        document = self._editor.document
        # Laid out to its end first: an edit above the part Qt has yet to lay out after a
        # change of width (it lays a long document out a part at a time) left the blocks
        # below that part never laid out, and so never painted.
        document.documentLayout().blockBoundingRect(document.lastBlock())
        removed: list[int] = []
        cursor = QTextCursor(document)
        cursor.beginEditBlock()
        block = document.lastBlock()
        while block.isValid():
            before = block.previous()
            if block.userState() == CONTINUED_STATE:
                # The piece below holds the paragraph's bottom margin (the last one's, once
                # the pieces after it are joined): the joined block takes it.
                margin = block.next().blockFormat().bottomMargin()
                separator = block.position() + block.length() - 1
                cursor.setPosition(separator)
                cursor.deleteChar()
                joined = cursor.blockFormat()
                joined.setBottomMargin(margin)
                cursor.setBlockFormat(joined)
                cursor.block().setUserState(NO_STATE)
                removed.append(separator)
            block = before
        cursor.endEditBlock()
        removed.reverse()
        return removed

    def copied_text(self, selection: QTextCursor) -> str | None:
        """The plain text a copy of `selection` gives, with no line break where a paragraph
        was kept in pieces; None when no such cut lies in it (Qt's own text is right)."""
        if self.width is None or not selection.hasSelection():
            return None
        start, end = selection.selectionStart(), selection.selectionEnd()
        cuts = []
        block = self._editor.document.findBlock(start)
        while block.isValid() and block.position() < end:
            separator = block.position() + block.length() - 1
            if block.userState() == CONTINUED_STATE and start <= separator < end:
                cuts.append(separator - start)
            block = block.next()
        if not cuts:
            return None
        text = selection.selectedText()  # a character per position: the cuts' separators too
        pieces = [text[a + 1 : b] for a, b in zip([-1, *cuts], [*cuts, len(text)], strict=True)]
        return "".join(pieces).translate(PLAIN)
