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


def _chunk_section(section: Section) -> list[Chunk]:
    pieces = []
    for text, first, last in _blocks(section):
        # A paragraph longer than a passage is cut at line ends (or anywhere, at worst).
        while len(text) > MAX_CHARS:
            cut = text.rfind("\n", 0, MAX_CHARS)
            cut = cut if cut > TARGET_CHARS // 2 else MAX_CHARS
            head, text = text[:cut], text[cut:].lstrip("\n")
            lines = head.count("\n") + 1
            pieces.append((head, first, first + lines - 1))
            first += lines
        pieces.append((text, first, last))
    chunks: list[Chunk] = []
    current: list[tuple[str, int, int]] = []
    size = 0
    for piece in pieces:
        starts_section = bool(HEADING.match(piece[0]))
        if current and (size + len(piece[0]) > TARGET_CHARS or (starts_section and size > 300)):
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
