"""A file's text, in sections that know where they are (a PDF page, or a range of lines).

Parsed: Markdown, plain text, reStructuredText, HTML, PDF (pypdf) and source code (by its
extension: see TEXT_KINDS). Anything else, and any file binary, encrypted or unreadable, is
skipped with a reason (SkipFile): the indexer never crashes on a file. The bytes come from
`reading`, which reads a file of the library as hostile input.
"""

from __future__ import annotations

import html.parser
from dataclasses import dataclass
from pathlib import Path

from server.errors import SkipFile

TEXT_KINDS = {
    ".md": "markdown", ".markdown": "markdown", ".txt": "text", ".rst": "rst", ".text": "text",
    ".html": "html", ".htm": "html", ".pdf": "pdf",
    **{ext: "code" for ext in (
        ".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".java", ".kt", ".c", ".h", ".cc",
        ".cpp", ".hpp", ".cs", ".rb", ".php", ".swift", ".sh", ".bash", ".sql", ".lua", ".r",
        ".scala", ".toml", ".yaml", ".yml", ".ini", ".cfg", ".json", ".css", ".scss",
    )},
}  # fmt: skip


@dataclass(frozen=True)
class Section:
    text: str
    page: int | None = None  # 1-based, for a PDF
    first_line: int = 1  # of `text` in the file (text formats)


def kind_of(path: Path) -> str | None:
    return TEXT_KINDS.get(path.suffix.lower())


def too_much_text(max_chars: int) -> str:
    return f"more than {max_chars:,} characters of text"


def parse(kind: str, data: bytes, *, max_chars: int | None = None) -> list[Section]:
    """The file's text in sections. Raises SkipFile saying why it is not indexed, among
    others a text longer than `max_chars` (a PDF is stopped at the page that passes it)."""
    if kind == "pdf":
        return _pdf(data, max_chars)
    if b"\x00" in data[:8192]:
        raise SkipFile("binary, not text")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SkipFile("not UTF-8 text") from exc
    if kind == "html":
        text = _html_text(text)
    if max_chars is not None and len(text) > max_chars:
        raise SkipFile(too_much_text(max_chars))
    return [Section(text)]


def _pdf(data: bytes, max_chars: int | None) -> list[Section]:
    import io

    import pypdf
    from pypdf.errors import PdfReadError

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise SkipFile("an encrypted PDF")
        sections = []
        total = 0
        for number, page in enumerate(reader.pages, start=1):
            text = page.extract_text() or ""
            total += len(text)
            if max_chars is not None and total > max_chars:
                raise SkipFile(too_much_text(max_chars))
            if text.strip():
                sections.append(Section(text, page=number))
    except SkipFile:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError, RecursionError) as exc:
        raise SkipFile(f"a PDF that cannot be read ({type(exc).__name__})") from exc
    if not sections:
        raise SkipFile("a PDF with no text (scanned pages?)")
    return sections


SKIPPED_TAGS = frozenset({"script", "style", "noscript", "template"})
BLOCK_TAGS = frozenset(
    {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "pre", "section"}
)


class _TextOfHTML(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.pieces: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED_TAGS:
            self._skipping += 1
        elif tag in BLOCK_TAGS:
            self.pieces.append("\n\n" if tag != "br" else "\n")
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.pieces.append("#" * int(tag[1]) + " ")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED_TAGS and self._skipping:
            self._skipping -= 1
        elif tag in BLOCK_TAGS:
            self.pieces.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.pieces.append(data)


def _html_text(text: str) -> str:
    parser = _TextOfHTML()
    parser.feed(text)
    parser.close()
    lines = [line.strip() for line in "".join(parser.pieces).splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()
