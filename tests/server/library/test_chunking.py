"""Chunking: passages cut where they were before, line numbers right even where a line is cut,
and work linear in the size of what is cut (issue 38: an 18.6 MB log took 36 s). The figures
are in bench/heavy.py (`python -m bench.heavy chunking`); no test here times anything."""

from __future__ import annotations

import itertools
import random
import re
from typing import SupportsIndex

import pytest

from server.library import chunking
from server.library.chunking import MAX_CHARS, Chunk, chunk
from server.library.parsing import Section

# ---- The implementation before issue 38, kept verbatim as the reference for equality -------

_HEADING = re.compile(r"^(#{1,6} |[^\n]+\n[=\-~^]{3,}$)")


def reference_chunk(sections: list[Section]) -> list[Chunk]:
    found: list[Chunk] = []
    for section in sections:
        found.extend(_reference_section(section))
    return found


def _reference_blocks(section: Section) -> list[tuple[str, int, int]]:
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


def _reference_section(section: Section) -> list[Chunk]:
    pieces = []
    for text, first, last in _reference_blocks(section):
        while len(text) > 2000:
            cut = text.rfind("\n", 0, 2000)
            cut = cut if cut > 1500 // 2 else 2000
            head, text = text[:cut], text[cut:].lstrip("\n")
            lines = head.count("\n") + 1
            pieces.append((head, first, first + lines - 1))
            first += lines
        pieces.append((text, first, last))
    chunks: list[Chunk] = []
    current: list[tuple[str, int, int]] = []
    size = 0
    for piece in pieces:
        starts_section = bool(_HEADING.match(piece[0]))
        if current and (size + len(piece[0]) > 1500 or (starts_section and size > 300)):
            chunks.append(_reference_make(current, section.page, chunks))
            current, size = [], 0
        current.append(piece)
        size += len(piece[0]) + 2
    if current:
        chunks.append(_reference_make(current, section.page, chunks))
    return chunks


def _reference_make(
    pieces: list[tuple[str, int, int]], page: int | None, before: list[Chunk]
) -> Chunk:
    text = "\n\n".join(p[0] for p in pieces)
    if before and before[-1].page == page:
        tail = before[-1].text[-200:]
        cut = tail.find(" ")
        text = (tail[cut + 1 :] if cut >= 0 else tail) + " … " + text
    if page is not None:
        return Chunk(text, page, None, None)
    return Chunk(text, None, pieces[0][1], pieces[-1][2])


# ---- A varied corpus ------------------------------------------------------------------------

WORDS = [
    "the",
    "a",
    "log",
    "entry",
    "request",
    "took",
    "ms",
    "über",
    "中文",
    "naïve",
    "café",
    "error",
    "INFO",
    "DEBUG",
    "—",
    "x",
]


def sentence(rng: random.Random, chars: int) -> str:
    words: list[str] = []
    length = 0
    while length < chars:
        words.append(rng.choice(WORDS))
        length += len(words[-1]) + 1
    return " ".join(words)


def document(rng: random.Random, longest_line: int) -> str:
    """Headings (both kinds), paragraphs short and long, blank and whitespace-only lines
    between them, lines up to `longest_line` characters, now and then CRLF."""
    parts: list[str] = []
    for _ in range(rng.randint(1, 25)):
        kind = rng.random()
        if kind < 0.15:
            parts.append("#" * rng.randint(1, 6) + " " + sentence(rng, 20))
        elif kind < 0.25:
            title = sentence(rng, 15)
            parts.append(title + "\n" + rng.choice("=-~^") * rng.randint(3, 20))
        elif kind < 0.6:
            parts.append(sentence(rng, rng.randint(1, 600)))
        else:
            lines = [sentence(rng, rng.randint(1, longest_line)) for _ in range(rng.randint(2, 80))]
            parts.append("\n".join(lines))
        parts.append(rng.choice(["\n\n", "\n\n\n", "\n  \t\n", "\n\n\n\n"]))
    text = "".join(parts)
    return text.replace("\n", "\r\n") if rng.random() < 0.1 else text


def corpus(seed: int, longest_line: int) -> list[Section]:
    rng = random.Random(seed)
    if rng.random() < 0.3:  # a PDF: a page per section
        return [Section(document(rng, longest_line), page=n) for n in range(1, rng.randint(2, 6))]
    return [Section(document(rng, longest_line), first_line=rng.randint(1, 40))]


def bodies(passages: list[Chunk]) -> list[str]:
    """The passages (of one section) without the overlap each takes from the one before."""
    found = [passages[0].text]
    for before, passage in itertools.pairwise(passages):
        tail = before.text[-200:]
        overlap = tail[tail.find(" ") + 1 :] + " … "
        assert passage.text.startswith(overlap)
        found.append(passage.text[len(overlap) :])
    return found


def check_lines(section: Section, passages: list[Chunk]) -> None:
    """Each passage starts within its first line and ends within its last (a passage of one
    line, cut from a longer one, lies within it)."""
    lines = section.text.splitlines()
    for passage, text in zip(passages, bodies(passages), strict=True):
        assert passage.line_start is not None and passage.line_end is not None
        assert section.first_line <= passage.line_start <= passage.line_end
        first_line = lines[passage.line_start - section.first_line]
        last_line = lines[passage.line_end - section.first_line]
        parts = text.split("\n")
        first, last = parts[0], parts[-1]
        if len(parts) == 1:
            assert passage.line_start == passage.line_end and first in first_line
        else:
            assert first_line.endswith(first) and last_line.startswith(last)


# ---- Tests ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(60))
def test_passages_are_the_same_as_before_where_no_line_is_cut(seed: int) -> None:
    # Lines under 750 characters: a long paragraph is always cut at a line end.
    sections = corpus(seed, longest_line=740)
    assert chunk(sections) == reference_chunk(sections)


@pytest.mark.parametrize("seed", range(30))
def test_with_lines_cut_the_text_is_the_same_and_the_line_numbers_right(seed: int) -> None:
    sections = corpus(seed, longest_line=6000)
    found = chunk(sections)
    before = reference_chunk(sections)
    assert [(c.text, c.page) for c in found] == [(c.text, c.page) for c in before]
    if sections[0].page is None:
        check_lines(sections[0], found)


def test_a_long_paragraph_cut_at_line_ends_knows_its_lines() -> None:
    lines = [f"line {n:04d} " + "word " * 10 for n in range(5, 205)]
    section = Section("\n".join(lines), first_line=5)
    found = chunk([section])
    assert len(found) > 3
    assert (found[0].line_start, found[-1].line_end) == (5, 204)
    for before, after in itertools.pairwise(found):
        assert after.line_start == (before.line_end or 0) + 1
    for passage, text in zip(found, bodies(found), strict=True):
        assert text.startswith(f"line {passage.line_start:04d} ")
        assert text.rsplit("\n", 1)[-1].startswith(f"line {passage.line_end:04d} ")
    check_lines(section, found)


def test_a_paragraph_cut_inside_a_line_keeps_that_lines_number() -> None:
    # Line 12 is 5,000 characters: it is cut twice, and every piece of it says line 12 (before
    # issue 38 the pieces said 13 and 14, and the last one ran from 14 back to 12).
    section = Section("intro\n\n" + "x" * 5000 + "\n\nafter", first_line=10)
    found = chunk([section])
    assert [(c.line_start, c.line_end) for c in found] == [(10, 10), (12, 12), (12, 12), (12, 14)]
    check_lines(section, found)


def test_a_cut_inside_the_second_line_of_a_paragraph_counts_the_first() -> None:
    section = Section("short\n" + "y" * 3000 + "\nz", first_line=1)
    found = chunk([section])
    assert [(c.line_start, c.line_end) for c in found] == [(1, 2), (2, 3)]
    check_lines(section, found)


class CountingText(str):
    """A str that counts the characters every slice of it (or of its slices) copies."""

    copied = 0

    def __getitem__(self, key: SupportsIndex | slice) -> str:
        part = super().__getitem__(key)
        CountingText.copied += len(part)
        return CountingText(part)

    def lstrip(self, chars: str | None = None) -> str:
        part = super().lstrip(chars)
        CountingText.copied += len(part)
        return CountingText(part)


@pytest.mark.parametrize("lines", [True, False], ids=["at line ends", "one long line"])
def test_cutting_a_paragraph_copies_each_character_once_whatever_its_size(lines: bool) -> None:
    # Deterministic, unlike a timing: slicing off the rest after each cut copied the rest
    # every time, n²/4,000 characters for n; now each character is copied once.
    for size in (200_000, 800_000):
        text = ("entry 42 took 7 ms\n" * (size // 19)) if lines else "x" * size
        CountingText.copied = 0
        pieces = chunking._cut(CountingText(text), 1, text.count("\n") + 1)
        assert "".join(p[0] for p in pieces).replace("\n", "") == text.replace("\n", "")
        assert CountingText.copied <= len(text) + MAX_CHARS
