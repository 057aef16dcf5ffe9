"""Where a growing paragraph can be cut so that its pieces, drawn one under the other, read as
the paragraph drawn whole.

A reply that streams one endless paragraph would be laid out again, all of it, at every
update: the cost of an update would grow with the reply. Its finished lines are sealed off
instead, into blocks of their own that are never laid out again: each cut falls at the start
of a line as the paragraph wraps at the transcript's width and in its font, so nothing moves
(a line breaks where it broke). The pieces wrap as one only at the measure they were cut at;
a change of width or of text size asks for the cut replies to be drawn again (`revision`).

Only plain prose is cut (markdown.PLAIN_LINE: no markup a cut could split, no HTML entity),
so the paragraph's text is the source's, with runs of spaces drawn as one."""

from __future__ import annotations

from PySide6.QtGui import QFont, QGuiApplication, QTextDocument, QTextOption

SEAL_CHARS = 1000  # a plain paragraph's live part longer than this is cut at a line start
RETRY_CHARS = 200  # after a cut that failed, the characters the live part grows before another
KEEP_LINES = 1  # lines of it left live: the last one, which may still be re-wrapped


class Sealer:
    """The transcript's measure (its text's width and size), and where a paragraph can be
    cut at it."""

    def __init__(self, width: float = 0.0, pixel_size: int = 15) -> None:
        self.width = width
        self.pixel_size = pixel_size
        self.revision = 0  # moves when the measure changes: cuts made before no longer hold

    def set_measure(self, width: float, pixel_size: int) -> bool:
        """The text's width and size now; whether that changed the measure."""
        if (width, pixel_size) == (self.width, self.pixel_size):
            return False
        self.width, self.pixel_size = width, pixel_size
        self.revision += 1
        return True

    def cut(self, text: str, wrap: str) -> int:
        """Where to cut `text` (a plain paragraph, drawn as `wrap` with `{}` for its text):
        the index of the first character of a line, with KEEP_LINES lines after it; 0 when
        it wraps to too few lines, or the measure is not known yet."""
        if self.width <= 0:
            return 0
        indent = len(text) - len(text.lstrip(" "))  # the renderer drops a paragraph's indent
        shown, source_of = collapsed(text[indent:])
        document = QTextDocument()
        document.setDocumentMargin(0)
        # As QQuickTextEdit lays its text out: design metrics, wrapped anywhere if need be.
        document.setUseDesignMetrics(True)
        option = QTextOption()
        option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        document.setDefaultTextOption(option)
        font = QFont(QGuiApplication.font())
        font.setPixelSize(self.pixel_size)
        document.setDefaultFont(font)
        document.setTextWidth(self.width)
        document.setHtml(wrap.replace("{}", shown, 1))  # plain: no "<", ">" or "&" in it
        document.size()  # laid out when asked for, as a whole
        block = document.firstBlock()
        while block.isValid() and not block.text():
            block = block.next()
        layout = block.layout() if block.isValid() else None
        # (rich text may drop a paragraph's last space)
        if layout is None or block.text().rstrip(" ") != shown.rstrip(" "):
            return 0
        if layout.lineCount() <= KEEP_LINES + 1:
            return 0
        start = layout.lineAt(layout.lineCount() - KEEP_LINES).textStart()
        return indent + source_of[start] if 0 < start < len(source_of) else 0


def collapsed(text: str) -> tuple[str, list[int]]:
    """`text` as rich text shows it (each run of spaces one space), and, for each character
    shown, the index in `text` of the character it shows."""
    shown: list[str] = []
    source_of: list[int] = []
    previous = ""
    for index, char in enumerate(text):
        if char == " " and previous == " ":
            continue
        shown.append(char)
        source_of.append(index)
        previous = char
    return "".join(shown), source_of
