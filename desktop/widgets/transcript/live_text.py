"""A reply's text drawn as it streams, only ever appended to: the part that can no longer
change (up to the last blank line outside a code fence) is rendered once and frozen, and only
the short live tail is drawn again. A paragraph cut in two goes on in the same block, its
lines that can no longer change sealed off (growing_paragraph.py); past JOIN_MAX_CHARS its
pieces so far are kept as they are (long_paragraph.py). A list drawn in pieces stays one list
(its half-written item too: issue 43 item 16), and the reply's "[n]" of its sources are
links from the moment the source is known."""

from __future__ import annotations

from PySide6.QtGui import QTextBlock, QTextCursor, QTextList, QTextListFormat

from desktop.markdown_render import (
    MarkdownRenderer,
    begun_item,
    cut_inside_paragraph,
    opens_with_a_list_table_or_quote,
    split_stable,
    split_within,
)
from desktop.widgets.transcript.document import Editor
from desktop.widgets.transcript.growing_paragraph import SealedLines
from desktop.widgets.transcript.live_reply import LiveReply
from desktop.widgets.transcript.long_paragraph import LongParagraphs
from desktop.widgets.transcript.message_html import PARAGRAPH_GAP


class LiveText:
    def __init__(
        self,
        editor: Editor,
        renderer: MarkdownRenderer,
        sealed: SealedLines,
        long: LongParagraphs,
    ) -> None:
        self._editor = editor
        self._renderer = renderer
        self._sealed = sealed
        self._long = long

    def draw_up_to(self, reply: LiveReply, text: str, end: int, edit: QTextCursor) -> None:
        """Draw the reply's text up to `end`: freeze what can no longer change, redraw the
        live tail. `edit`: the update's edit, open."""
        if reply.group_start is not None:
            # Text after the steps: a new paragraph below them.
            reply.group_start = None
            reply.live_start = self._editor.open_block(PARAGRAPH_GAP)
        if reply.joiner is not None:
            reply.live_start += self._sealed.seal(reply.live_start)
        pending = reply.carry + text[reply.frozen_len : end]
        stable, tail, carry = split_stable(pending)
        if len(stable) <= len(reply.carry):
            # Nothing new can be frozen (at most the code block's fence line carried over).
            stable, tail, carry = "", pending, ""
            if end < len(text):
                # More waits than one update takes: cut all the same, where a code block
                # can go on (the reply's next text is the rest of `pending`).
                stable, tail, carry = split_within(pending, beyond=len(reply.carry))
        # Text that begins with a carried fence line goes on with a code block cut above it:
        # drawn as its continuation (no header of its own), and the reply drawn whole at
        # its end, the block in one piece.
        continued = bool(reply.carry)
        if stable:
            frozen = self._renderer.render(
                stable, continued=continued, cut=bool(carry), sources=reply.sources
            )
            self.draw_live(reply, frozen)
            reply.frozen_len += len(stable) - len(reply.carry)
            reply.carry = carry
            continued = bool(carry)
            reply.code_in_pieces = reply.code_in_pieces or continued
            if not carry and cut_inside_paragraph(stable, frozen):
                # Cut inside a paragraph (a long one, or a burst bigger than the budget):
                # the rest goes on in the same block, so its lines wrap as in the paragraph
                # drawn whole. Past JOIN_MAX_CHARS, its pieces so far stay as they are.
                if not self._sealed.fits_more():
                    reply.keep_due = True  # in the next update (keep_paragraph)
                # A space where the cut took one (a line break reads as one in a paragraph),
                # unless the frozen part's HTML kept it.
                kept = frozen[: -len("</p>")][-1:].isspace()
                reply.joiner = " " if stable[-1].isspace() and not kept else ""
                reply.joined = True
                reply.live_start = self._editor.end()
            else:
                # A frozen part ends at a blank line: the next paragraph keeps the gap a
                # reopened conversation shows there (not inside a code block cut in two).
                # Its sealed lines one block again, once the next is open (all the reply's
                # at its end: ~40 ms).
                reply.joiner = None
                if frozen.rstrip().endswith("</table>"):
                    # Qt knows a table's frame only once the edit that made it is over,
                    # and where the next block opens depends on it (Editor.open_block).
                    edit.endEditBlock()
                    edit.beginEditBlock()
                reply.live_start = self._editor.open_block(0 if carry else PARAGRAPH_GAP)
                reply.live_start -= self._sealed.unseal_unseen(edit)
            tail = carry + tail
        rendered = ""
        if tail.strip():
            before = "" if continued else text[: reply.frozen_len]
            tail = begun_item(tail, before)
            rendered = self._renderer.render(tail, continued=continued, sources=reply.sources)
        self.draw_live(reply, rendered)

    def draw_live(self, reply: LiveReply, html_text: str) -> None:
        """Draw `html_text` from the live start on, in place of what was there."""
        editor = self._editor
        if reply.joiner is not None:
            if not html_text or html_text.startswith("<p>"):
                editor.replace_from(reply.live_start, html_text, joiner=reply.joiner)
                return
            # What follows the cut is no longer the paragraph (a list began): a block of
            # its own after all.
            editor.replace_from(reply.live_start, "")
            reply.joiner = None
            reply.live_start = editor.open_block(PARAGRAPH_GAP)
        if opens_with_a_list_table_or_quote(html_text):
            # Kept whole: costs a layout of the block before, only while such a block is
            # the first of the live part.
            editor.insert_whole(reply.live_start - 1, html_text)
            self._join_list(reply.live_start)
        else:
            editor.replace_from(reply.live_start, html_text)

    def _join_list(self, position: int) -> None:
        """A list drawn from `position` on that goes on with the list drawn above it (its
        next number, or both bulleted, at the same depth): made one list with it, as drawn
        whole, so its items are numbered on and laid out as that list's."""
        block = self._editor.document.findBlock(position)
        below = block.textList()
        if below is None:
            return
        above = _list_above(block, below)
        if above is None or above.format().style() != below.format().style():
            return
        if (
            above.format().style() not in BULLETS
            and below.format().start() != above.format().start() + above.count()
        ):
            return  # numbered anew: a list of its own
        for item in [below.item(i) for i in range(below.count())]:
            below.remove(item)
            above.add(item)

    def draw_all(self, reply: LiveReply) -> None:
        """Draw every bit of text taken in (a tool step follows it): frozen, whole."""
        text = reply.text()
        pending = reply.carry + text[reply.frozen_len :]
        if pending.strip():
            self.draw_live(reply, self._renderer.render(pending, sources=reply.sources))
        reply.frozen_len = reply.shown_len = len(text)
        reply.carry = ""

    def keep_paragraph(self, reply: LiveReply) -> None:
        """A paragraph past JOIN_MAX_CHARS: its pieces so far kept as they are
        (LongParagraphs.keep_pieces), in an update of its own, the one after its cut: in the
        same one, the two cost 3.5-4.5 ms, the costliest updates of a long paragraph."""
        length = self._editor.end()
        with self._editor.one_edit() as edit:
            self._long.keep_pieces(self._sealed, edit)
        reply.live_start -= length - self._editor.end()  # the separators taken out, before it

    def unseal(self, reply: LiveReply) -> None:
        """Its paragraphs each one block again (growing_paragraph.py)."""
        removed = self._sealed.unseal()
        reply.live_start -= removed
        if reply.group_start is not None:
            reply.group_start -= removed


BULLETS = (
    QTextListFormat.Style.ListDisc,
    QTextListFormat.Style.ListCircle,
    QTextListFormat.Style.ListSquare,
)
LOOKBACK_BLOCKS = 200  # the blocks searched above a list for the one it goes on with


def _list_above(block: QTextBlock, below: QTextList) -> QTextList | None:
    """The list just above `block` at the depth of `below` (through the deeper lists nested
    in it), if the blocks above it are list items."""
    indent = below.format().indent()
    above = block.previous()
    for _ in range(LOOKBACK_BLOCKS):
        found = above.textList() if above.isValid() else None
        if found is None:
            return None
        if found.format().indent() == indent:
            return found
        if found.format().indent() < indent:
            return None
        above = above.previous()
    return None
