"""Sections cut into passages the model can be given: ~1,500 characters, broken at headings
and blank lines where possible, each overlapping the one before by a little, each knowing its
page or its lines."""

from __future__ import annotations

import re
from dataclasses import dataclass

from server.library.parsing import Section

TARGET_CHARS = 1500
MAX_CHARS = 2000
OVERLAP_CHARS = 200
HEADING = re.compile(r"^(#{1,6} |[^\n]+\n[=\-~^]{3,}$)")


@dataclass(frozen=True)
class Chunk:
    text: str
    page: int | None
    line_start: int | None
    line_end: int | None


def chunk(sections: list[Section]) -> list[Chunk]:
    found: list[Chunk] = []
    for section in sections:
        found.extend(_chunk_section(section))
    return found


def _blocks(section: Section) -> list[tuple[str, int, int]]:
    """Paragraphs (runs of lines between blank lines) with their first and last line."""
    blocks: list[tuple[str, int, int]] = []
    current: list[str] = []
    start = section.first_line
    for number, line in enumerate(section.text.splitlines(), start=section.first_line):
        if line.strip():
            if not current:
                start = number
            current.append(line)
        elif current:
            blocks.append(("\n".join(current), start, number - 1))
            current = []
    if current:
        blocks.append(("\n".join(current), start, start + len(current) - 1))
    return blocks


def _cut(text: str, first: int, last: int) -> list[tuple[str, int, int]]:
    """A paragraph longer than a passage, cut at line ends (or anywhere, at worst).

    Walks the paragraph by offset rather than slicing off what is left after each cut, which
    copied the rest every time: an 18.6 MB log with no blank line took 36 s. A cut
    inside a line leaves the rest of that line, and its number, to the next piece."""
    pieces: list[tuple[str, int, int]] = []
    start = 0
    while len(text) - start > MAX_CHARS:
        cut = text.rfind("\n", start, start + MAX_CHARS)
        cut = cut if cut - start > TARGET_CHARS // 2 else start + MAX_CHARS
        head = text[start:cut]
        end_line = first + head.count("\n")
        pieces.append((head, first, end_line))
        start = cut
        while start < len(text) and text[start] == "\n":
            start += 1
        first = end_line + (start - cut)
    pieces.append((text[start:] if start else text, first, last))
    return pieces


def _chunk_section(section: Section) -> list[Chunk]:
    pieces: list[tuple[str, int, int]] = []
    for text, first, last in _blocks(section):
        if len(text) > MAX_CHARS:
            pieces.extend(_cut(text, first, last))
        else:
            pieces.append((text, first, last))
    chunks: list[Chunk] = []
    current: list[tuple[str, int, int]] = []
    size = 0
    for piece in pieces:
        # The heading test only when it can matter: most pieces of a big file skip the regex.
        if current and (
            size + len(piece[0]) > TARGET_CHARS or (size > 300 and HEADING.match(piece[0]))
        ):
            chunks.append(_make(current, section.page, chunks))
            current, size = [], 0
        current.append(piece)
        size += len(piece[0]) + 2
    if current:
        chunks.append(_make(current, section.page, chunks))
    return chunks


def _make(pieces: list[tuple[str, int, int]], page: int | None, before: list[Chunk]) -> Chunk:
    text = "\n\n".join(p[0] for p in pieces)
    if before and before[-1].page == page:  # a little of the passage before, for context
        tail = before[-1].text[-OVERLAP_CHARS:]
        cut = tail.find(" ")
        text = (tail[cut + 1 :] if cut >= 0 else tail) + " … " + text
    if page is not None:
        return Chunk(text, page, None, None)
    return Chunk(text, None, pieces[0][1], pieces[-1][2])
