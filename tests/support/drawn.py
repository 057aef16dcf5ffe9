"""Facts about what a Qt text view has laid out, for GUI tests to wait on instead of time.

Qt lays a long document out a part at a time, on timers, after an edit or a change of width:
a block not laid out yet has no lines. The scroll bar's range follows the layout, so what
the view shows (and where it scrolls to) is final only once the layout has reached the end.
"""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QTextEdit


def undrawn_blocks(view: QTextEdit) -> list[str]:
    """The start of every block with text that has no lines (not laid out yet, or never)."""
    found = []
    block = view.document().begin()
    while block.isValid():
        if block.length() > 1 and block.layout().lineCount() == 0:
            found.append(block.text()[:20])
        block = block.next()
    return found


def laid_out(view: QTextEdit) -> bool:
    """Every block has its lines; the events that follow a layout (the scroll bar's new
    range, a view keeping to the end) are then delivered before this answers True."""
    if undrawn_blocks(view):
        return False
    QApplication.processEvents()
    return not undrawn_blocks(view)
