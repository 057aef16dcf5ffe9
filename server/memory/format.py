"""A memory file's text: its lines, the chat each came from, a line added, a line forgotten,
and what the model is given of it.

A line the assistant adds is a Markdown list item that ends with an HTML comment naming the
chat it was remembered in, which a Markdown viewer hides and an editor shows:

    - The user prefers metric units. <!-- chat:0f3c... -->

Everything else in the file (headings, paragraphs, lines written by hand with no link) is
kept as it is and given to the model as it is; only whole lines are ever added or removed.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

LINK = re.compile(r"\s*<!--\s*chat:([A-Za-z0-9_-]{1,64})\s*-->\s*$")
LIST_MARK = re.compile(r"^(?:[-*+](?:\s+|$))+")
# C0 controls other than tab, line feed, form feed and carriage return: no text file has them.
BINARY = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")


@dataclass(frozen=True)
class Line:
    """A line of the file that says something."""

    number: int  # 1: the file's first line
    raw: str  # as in the file, without its line ending
    text: str  # without its list mark and its chat link
    chat_id: str | None  # None: written by hand

    @property
    def id(self) -> str:
        return line_id(self.raw)


def line_id(raw: str) -> str:
    """The same for the same text (spaces around it aside), whatever line it is on: a hand
    edit above it does not make "Forget" remove another line."""
    return hashlib.sha256(raw.strip().encode("utf-8", "surrogatepass")).hexdigest()[:16]


def decoded(data: bytes) -> str:
    """The file's text. ValueError, saying why, when it is not text."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"it is not UTF-8 text (byte {exc.start:,} is not)") from None
    found = BINARY.search(text)
    if found is not None:
        raise ValueError(f"it holds binary bytes (U+{ord(found.group()):04X} at {found.start():,})")
    return text


def lines(text: str) -> list[Line]:
    found = []
    for number, piece in enumerate(text.split("\n"), start=1):
        raw = piece.rstrip("\r")
        if number == 1:
            raw = raw.removeprefix("\ufeff")
        if not raw.strip():
            continue
        link = LINK.search(raw)
        said = raw[: link.start()] if link else raw
        found.append(
            Line(number, raw, LIST_MARK.sub("", said.strip()), link.group(1) if link else None)
        )
    return found


def entry(proposed: str, chat_id: str, max_chars: int) -> str:
    """The line the model proposed, as it is added: one line, a list item, linked to its
    chat. ValueError, saying what to do, when there is nothing to add or too much."""
    text = "".join(ch for ch in " ".join(proposed.split()) if ch.isprintable())
    # The list mark and the link are Parley's: a comment in the text could hide words in a
    # Markdown viewer, or pass for a link to another chat.
    text = LIST_MARK.sub("", text).replace("<!--", "&lt;!--").replace("-->", "--&gt;").strip()
    if not text:
        raise ValueError("'line' must be the text to remember: one short sentence")
    if len(text) > max_chars:
        raise ValueError(
            f"a line to remember is at most {max_chars} characters ({len(text):,} given): "
            "say it in one short sentence"
        )
    return f"- {text} <!-- chat:{chat_id} -->"


def with_line(text: str, added: str) -> str | None:
    """The text with `added` as its last line, written as the file writes its lines (CRLF
    where it does); None when a line says the same already."""
    said = lines(added)[0].text
    if any(line.text == said for line in lines(text)):
        return None
    ending = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += ending
    return f"{text}{added}{ending}"


def without(text: str, forgotten: str) -> str | None:
    """The text without every line whose id is `forgotten` (copies of one line are one
    thing remembered); every other byte as it was. None: no such line."""
    pieces = text.split("\n")
    gone = {line.number - 1 for line in lines(text) if line.id == forgotten}
    if not gone:
        return None
    kept = [piece for at, piece in enumerate(pieces) if at not in gone]
    if 0 in gone and text.startswith("\ufeff") and kept:
        kept[0] = "\ufeff" + kept[0]  # the byte-order mark was the file's, not the line's
    return "\n".join(kept)


def for_model(text: str) -> str:
    """What the model reads of the file: its lines without their chat links (an id means
    nothing to it), runs of blank lines made one, the text that would close the part it is
    given in (prompt.py) broken."""
    out: list[str] = []
    for piece in text.removeprefix("\ufeff").split("\n"):
        line = LINK.sub("", piece.rstrip("\r")).rstrip()
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip().replace("</memory", "<\\/memory")
