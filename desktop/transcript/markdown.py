"""Model text (Markdown) to the HTML subset Qt's rich text understands.

Code blocks are highlighted with Pygments (inline styles: Qt has no stylesheets for them)
and get a "Copy" link; raw HTML in the model's text is shown as text, never interpreted.
`split_stable` finds where a growing reply can be frozen: after the last blank line that is
not inside a code fence, so only the tail is re-rendered while a reply streams. A reply's
"[n]" that names one of its sources is a link to it (`sources`), never inside code.
"""

from __future__ import annotations

import html
import itertools
import re
from collections.abc import Mapping

import markdown
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name
from pygments.util import ClassNotFound

FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)[^\n]*$")
LIST_ITEM = re.compile(r"^( *)([-*+]|\d{1,9}[.)])( +|$)")
# One line of prose in which Markdown finds no markup: its HTML is the line in a paragraph.
# (Most of a streaming reply's updates are such a line; the parser costs ~0.3 ms each.)
PLAIN_LINE = re.compile(r" {0,3}(?![\s\-+*#>=|]|\d{1,9}[.)])[^\x00-\x1f\x7f\\`*_\[\]<>&!#|~=]*")
# The last line of a growing reply that is a numbered item's number alone ("3."): Markdown
# reads no item in it yet (see begun_item).
ITEM_LOOKBACK = 2000  # characters before the tail searched for the item above
BARE_NUMBER = re.compile(r"\n( {0,12})\d{1,9}[.)]$")
# A source cited in a reply's text: "[n]" (server/agent/buffer.py finds them the same way).
CITATION = re.compile(r"\[(\d{1,4})\]")
# What of rendered HTML is a tag, and the tags whose text a citation is never linked in.
TAG = re.compile(r"(<[^>]*>)")
UNLINKED = re.compile(r"<(/?)(a|code|pre)\b", re.IGNORECASE)
# Lines that make a block Qt lays out differently when it is cut in pieces: lists (their
# numbering and nesting), quotes and tables.
STRUCTURED = re.compile(r"^( *([-*+]|\d{1,9}[.)]) |\s*>|\s*\|)", re.MULTILINE)


def nest_lists(text: str) -> str:
    """Models indent nested list items by 2 or 3 spaces; Markdown wants 4. Each list item
    is re-indented to 4 spaces per nesting level (deeper than the item above: one level
    more; as deep as an earlier item: that item's level), and so are its continuation lines.
    Text already in steps of 4 comes out unchanged."""
    stack: list[int] = []  # the original indentation of each open level
    lines = []
    for line in text.split("\n"):
        match = LIST_ITEM.match(line)
        indent = len(line) - len(line.lstrip(" "))
        if match:
            while stack and stack[-1] > indent:
                stack.pop()
            if not stack or stack[-1] < indent:
                stack.append(indent)
            lines.append(" " * (4 * (len(stack) - 1)) + line.lstrip(" "))
        elif line.strip() and indent == 0:
            stack = []  # a paragraph: the list is over
            lines.append(line)
        elif line.strip() and stack:
            lines.append(" " * (4 * len(stack)) + line.lstrip(" "))  # inside the last item
        else:
            lines.append(line)
    return "\n".join(lines)


def is_structured(text: str) -> bool:
    return STRUCTURED.search(text) is not None


TABLE_OPEN = '<table border="1"'
QUOTE_OPEN = '<table cellspacing="0"'
CODE_OPEN = '<table width="100%" cellpadding="6"'
CODE_LABEL = "#8a8a86"  # a code block's language: grey on light and dark


def opens_with_a_list_table_or_quote(rendered: str) -> bool:
    """HTML whose first block Qt would strip of its format when merging it into another (a
    list, a quote), or that it would put after the block it is inserted into, leaving that
    block empty above it (a table: a code block too), where a whole document has none."""
    return rendered.lstrip().startswith(("<ol", "<ul", TABLE_OPEN, QUOTE_OPEN, CODE_OPEN))


def _markdown() -> markdown.Markdown:
    md = markdown.Markdown(extensions=["tables", "sane_lists"])
    # Raw HTML from a model is text to show, not markup to obey.
    md.preprocessors.deregister("html_block")
    md.inlinePatterns.deregister("html")
    return md


class MarkdownRenderer:
    """Renders Markdown; remembers each code block's text for its Copy link (`copy:N`)."""

    def __init__(self, dark: bool = False) -> None:
        self._md = _markdown()
        self._ids = itertools.count(1)
        self.code_blocks: dict[str, str] = {}
        # Links drawn in this colour (Qt Quick's text items draw them in a fixed blue).
        self.link_colour: str | None = None
        self.set_dark(dark)

    def set_dark(self, dark: bool) -> None:
        """Colours for a dark or a light background (for what is rendered from now on)."""
        self.dark = dark
        self._formatter = HtmlFormatter(
            noclasses=True, nowrap=True, style="monokai" if dark else "friendly"
        )
        self._code_bg = "#272822" if dark else "#f4f4f4"

    def render(
        self,
        text: str,
        continued: bool = False,
        cut: bool = False,
        sources: Mapping[int, str] | None = None,
    ) -> str:
        """HTML of `text`. While a reply streams, a code block may be drawn in pieces, with no
        gap between them: `continued`, `text` opens with the fence line of a block cut above
        it, drawn as its continuation (no header); `cut`, the block open at its end goes on
        below. `sources`: the reply's source numbers -> their links; its "[n]" of one of
        them is that link (not in code)."""
        out: list[str] = []
        prose: list[str] = []
        code: list[str] = []
        fence: tuple[str, str] | None = None  # (marker, language) while inside a block
        for line in text.split("\n"):
            if fence is None:
                match = FENCE_OPEN.match(line)
                if match:
                    out.append(self._prose("\n".join(prose), sources))
                    prose = []
                    fence = (match.group(1), match.group(2))
                else:
                    prose.append(line)
            elif line.strip().startswith(fence[0]) and not line.strip().strip(fence[0][0]):
                out.append(self._code("\n".join(code), fence[1], continued))
                code, fence, continued = [], None, False
            else:
                code.append(line)
        if fence is not None:  # still streaming inside a block: show it as code already
            out.append(self._code("\n".join(code), fence[1], continued, cut))
        out.append(self._prose("\n".join(prose), sources))
        rendered = "".join(out)
        colour = f"color:{self.link_colour}; " if self.link_colour is not None else ""
        rendered = rendered.replace(
            '<a href="copy:', f'<a style="{colour}text-decoration:none;" href="copy:'
        )
        if self.link_colour is not None:
            rendered = rendered.replace("<a href=", f'<a style="color:{self.link_colour};" href=')
        return rendered

    def _prose(self, text: str, sources: Mapping[int, str] | None = None) -> str:
        if not text.strip():
            return ""
        if PLAIN_LINE.fullmatch(text):
            return f"<p>{text.lstrip(' ')}</p>"  # (no "[": no citation)
        rendered = self.parsed(text)
        return link_citations(rendered, sources) if sources else rendered

    def parsed(self, text: str) -> str:
        """Prose rendered by the Markdown parser (what a plain line is rendered as, too)."""
        self._md.reset()
        rendered: str = self._md.convert(nest_lists(text))
        return self._decorate(rendered)

    def _decorate(self, rendered: str) -> str:
        """What Qt's rich text does not draw by itself: table rules and padding, and the bar
        beside a quote (a two-cell table, as Qt has no left border)."""
        rule = "#5f6368" if self.dark else "#c8c8c8"
        rendered = rendered.replace(
            "<table>", f'{TABLE_OPEN} cellspacing="0" cellpadding="5" style="border-color:{rule};">'
        )
        rendered = rendered.replace(
            "<blockquote>",
            f'{QUOTE_OPEN} cellpadding="0"><tr><td width="3" bgcolor="{rule}"></td>'
            '<td style="padding-left:10px;">',
        )
        return rendered.replace("</blockquote>", "</td></tr></table>")

    def _code(self, code: str, language: str, continued: bool = False, cut: bool = False) -> str:
        block_id = str(next(self._ids))
        self.code_blocks[block_id] = code
        try:
            lexer = get_lexer_by_name(language) if language else TextLexer()
        except ClassNotFound:
            lexer = TextLexer()
        body = highlight(code, lexer, self._formatter).rstrip("\n")
        label = html.escape(language) if language else "code"
        # A header: the language, and Copy (a link, so the keyboard and the context menu
        # reach it; not underlined). (No icon: an image in a Qt Quick text item's rich text
        # warns at each load, and is drawn at its cell's left whatever the alignment.)
        copy = f'<a href="copy:{block_id}">Copy</a>'
        top = (
            ""
            if continued
            else f'<tr><td><span style="color:{CODE_LABEL};">{label}</span>'
            f"&nbsp;&nbsp;&nbsp;{copy}</td></tr>"
        )
        joins = ("padding-top:0;" if continued else "") + ("padding-bottom:0;" if cut else "")
        # A table: its own frame, so it never merges with the text around it.
        return (
            f'{CODE_OPEN} cellspacing="0" bgcolor="{self._code_bg}">{top}'
            f'<tr><td style="{joins}">'
            f'<pre style="white-space:pre-wrap; margin:0;">{body}</pre></td></tr></table>'
        )


def link_citations(rendered: str, sources: Mapping[int, str]) -> str:
    """`rendered` prose with each "[n]" of a source in `sources` (n -> its link) a link to it;
    not inside a code span, a code block or a link the text made itself."""
    pieces = TAG.split(rendered)
    inside = 0  # how deep in tags whose text is not linked
    for index, piece in enumerate(pieces):
        if index % 2:  # a tag
            tag = UNLINKED.match(piece)
            if tag is not None:
                inside = max(0, inside - 1) if tag.group(1) else inside + 1
        elif not inside and "[" in piece:
            pieces[index] = CITATION.sub(lambda m: _cite(m, sources), piece)
    return "".join(pieces)


def _cite(match: re.Match[str], sources: Mapping[int, str]) -> str:
    link = sources.get(int(match.group(1)))
    return match.group(0) if link is None else f'<a href="{link}">{match.group(0)}</a>'


def begun_item(tail: str, before: str = "") -> str:
    """The live tail of a growing reply, with a last line that is a numbered item's number
    alone ("3.") after a numbered list's item (in the tail, or `before` it) made an item
    begun: drawn in its list, with its number, not as a paragraph or as words of the item
    above it. (Markdown reads an item only once text follows the number.)"""
    if BARE_NUMBER.search("\n" + tail) is None:
        return tail
    _cut, fence_at_line_end = _line_ends(tail)
    if fence_at_line_end and fence_at_line_end[-1][1] is not None:
        return tail  # inside a code block
    lines = (before[-ITEM_LOOKBACK:] + tail).split("\n")[:-1]
    above = next((line for line in reversed(lines) if line.strip()), "")
    if not (LIST_ITEM.match(above) or above.startswith((" ", "\t"))):
        return tail  # no list above: a number that starts a sentence ("3.5 is...")
    return tail + " \u200b"


MAX_TAIL_CHARS = 1500
# A tail of plain prose (PLAIN_LINE: no markup that a cut could split) is cut far sooner: the
# live block of a growing paragraph stays short, so each update lays out and paints a few
# lines, not the paragraph so far (each update within a frame).
MAX_PLAIN_TAIL_CHARS = 240
# Emphasis, code spans, links and escapes: what renders unlike its pieces when cut in two.
INLINE_MARKUP = re.compile(r"[*_`\[\\]")


def has_inline_markup(text: str) -> bool:
    return INLINE_MARKUP.search(text) is not None


def cut_inside_paragraph(stable: str, rendered: str) -> bool:
    """Whether `stable`, a frozen part of a growing reply (`rendered` its HTML), ends
    inside a paragraph (cut at a space, a line break, or where a burst's budget ended),
    not at a blank line or after another kind of block: what follows continues that
    paragraph."""
    if stable.endswith("\n"):
        last_line = stable[:-1].rsplit("\n", 1)[-1]
        if not last_line.strip():
            return False  # a blank line: the paragraph is over
    return rendered.endswith("</p>")


def _line_ends(text: str) -> tuple[int, list[tuple[int, str | None, str]]]:
    """Where `text` may be cut: after its last blank line outside a code fence (or closing
    fence), and at each line's end with the fence open there (None) and its opening line."""
    cut = 0
    position = 0
    fence: str | None = None
    fence_line = ""
    fence_at_line_end: list[tuple[int, str | None, str]] = []
    for line in text.split("\n")[:-1]:  # the last line may still be growing
        position += len(line) + 1
        stripped = line.strip()
        if fence is None:
            match = FENCE_OPEN.match(line)
            if match:
                fence, fence_line = match.group(1), line
            elif not stripped:
                cut = position
        elif stripped.startswith(fence) and not stripped.strip(fence[0]):
            fence = None
            cut = position
        fence_at_line_end.append((position, fence, fence_line))
    return cut, fence_at_line_end


def split_within(text: str, beyond: int = 0) -> tuple[str, str, str]:
    """Split `text`, which has nothing stable past its first `beyond` characters (what the
    last cut carried: split_stable), because more of the reply waits than one update takes:
    at its last line break (the fence line carried, in a code block) or space; with neither,
    all of it (one unbreakable run), the fence line carried if a code block is open at its
    end."""
    stable, tail, carry = split_stable(text, max_tail=0, max_plain_tail=0)
    if len(stable) > beyond:
        return stable, tail, carry
    _cut, fence_at_line_end = _line_ends(text)
    _end, fence, opener = fence_at_line_end[-1] if fence_at_line_end else (0, None, "")
    return text, "", opener + "\n" if fence is not None else ""


def split_stable(
    text: str, max_tail: int = MAX_TAIL_CHARS, max_plain_tail: int = MAX_PLAIN_TAIL_CHARS
) -> tuple[str, str, str]:
    """Split a growing reply into (stable prefix, live tail, carry).

    The prefix ends after the last blank line outside a code fence (or a closing fence), so
    it renders the same however the text grows. A tail longer than `max_tail` (one endless
    paragraph, a long code block), or than `max_plain_tail` when all its lines are plain
    prose, is cut at its last line break, or last space, instead, so re-rendering stays
    cheap; if that cut falls inside a code block, `carry` is the fence line that must open
    the rest when it is rendered.
    """
    cut, fence_at_line_end = _line_ends(text)
    fence = fence_at_line_end[-1][1] if fence_at_line_end else None
    size = len(text) - cut
    if size <= max_plain_tail:
        return text[:cut], text[cut:], ""
    plain = all(PLAIN_LINE.fullmatch(line) for line in text[cut:].split("\n"))
    if size <= max_tail and not plain:
        return text[:cut], text[cut:], ""
    for end, open_fence, opener in reversed(fence_at_line_end):
        if end > cut:
            carry = opener + "\n" if open_fence is not None else ""
            return text[:end], text[end:], carry
        break
    space = text.rfind(" ", cut + 1)
    if space > cut and fence is None:
        return text[: space + 1], text[space + 1 :], ""
    return text[:cut], text[cut:], ""
