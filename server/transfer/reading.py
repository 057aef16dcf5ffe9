"""Reading an import file as a stream of checked conversations, in bounded memory.

The file (the request body, spooled to disk) is parsed with ijson's C backend one
conversation at a time: memory holds one conversation of the file, never the whole of it.
Each conversation is checked as it comes (server/transfer/parley.py, server/transfer/chatgpt.py),
so a file wrong at its end is found wrong only there: the caller stages what came before and
drops it (server/transfer/jobs.py). A JSON syntax error is located ("line 3 column 7") by a
second parse that feeds the parser one byte at a time from the block it failed in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import ijson

from server.errors import BadImport
from server.transfer import chatgpt, parley
from server.transfer.parley import Conversation

BLOCK = 64 * 1024  # bytes handed to the parser at a time
SURROGATE = re.compile(rb"\\u[dD]([89a-fA-F])[0-9a-fA-F]{2}")
HIGH = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}")
LOW = re.compile(rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
SCALARS = ("null", "boolean", "integer", "double", "number", "string")


@dataclass(frozen=True)
class Item:
    """One conversation of the file, checked: to import (`conversation`) or skipped."""

    conversation: Conversation | None
    skipped: chatgpt.Skipped | None = None


class Counted:
    """A file that counts the bytes read from it (the import's progress), and can be told to
    hand them out one at a time from an offset on (to locate a syntax error).

    It also notes the first unpaired surrogate escape (`\\ud800` alone): ijson's C parser
    turns one into "?" where Python's json keeps it and Parley refuses it (SQLite would)."""

    def __init__(self, raw: IO[bytes], single_from: int | None = None) -> None:
        self._raw = raw
        self.offset = 0
        self._single_from = single_from
        self._tail = b""  # the end of the block before, for an escape cut between blocks
        self.surrogate_at: int | None = None

    def read(self, size: int = -1) -> bytes:
        if self._single_from is not None and self.offset >= self._single_from:
            size = 1
        elif self._single_from is not None and size > 0:
            size = min(size, self._single_from - self.offset)
        data = self._raw.read(size)
        if self.surrogate_at is None and self._single_from is None:
            self._scan(data)
        self.offset += len(data)
        return data

    def _scan(self, data: bytes) -> None:
        text, base = self._tail + data, self.offset - len(self._tail)
        for match in SURROGATE.finditer(text):
            at = match.start()
            if _escaped(text, at):
                continue
            high = match.group(1).lower() in b"89ab"
            paired = (
                LOW.match(text, at + 6) is not None
                if high
                else at >= 6 and HIGH.match(text, at - 6) is not None and not _escaped(text, at - 6)
            )
            if not paired and (not high or at + 12 <= len(text)):
                self.surrogate_at = base + at
                return
        self._tail = text[-12:]


def items(
    path: Path, max_chars: int, max_reply_tokens: int, on_read: Callable[[int], None]
) -> Iterator[Item]:
    """The file's conversations, checked, in order. Raises BadImport (the first problem).
    `on_read(bytes)` is called with the bytes read so far, once per conversation."""
    first = first_byte(path)
    with path.open("rb") as raw:
        source = Counted(raw)
        try:
            if first == b"{":
                header = _header(path)
                yield from _parley(path, source, header, max_chars, max_reply_tokens, on_read)
            elif first == b"[":
                yield from _chatgpt(path, source, max_chars, on_read)
            else:
                for _ in ijson.parse(source):  # a syntax error is said first, as json says it
                    pass
                raise BadImport("", "give Parley's export (an object) or ChatGPT's (a list)")
        except ijson.JSONError as exc:
            raise _located(path, source.offset, exc) from exc
        except UnicodeDecodeError as exc:  # ijson's C parser on a lone low surrogate
            _no_surrogate(path, source)
            raise BadImport("", "the file is not UTF-8 text") from exc


def first_byte(path: Path) -> bytes:
    """The file's first byte that is not white space (b"" for none): `{` or `[` for a file
    Parley reads."""
    with path.open("rb") as raw:
        while True:
            byte = raw.read(1)
            if byte not in (b" ", b"\t", b"\r", b"\n"):
                return byte


@dataclass
class _Header:
    format: object = None
    version: object = None
    conversations: str | None = None  # the event that starts it: start_array for a list


def _header(path: Path) -> _Header:
    """`format`, `version` and what `conversations` is, read from the top of the object (Parley
    writes them first; another order costs a pass over the file's events)."""
    header = _Header()
    seen: set[str] = set()
    with path.open("rb") as raw:
        try:
            for prefix, event, value in ijson.parse(Counted(raw), use_float=True):
                if prefix in ("format", "version") and event in SCALARS:
                    setattr(header, prefix, value)
                    seen.add(prefix)
                elif prefix == "conversations" and header.conversations is None:
                    header.conversations = event
                if header.conversations is not None and seen == {"format", "version"}:
                    break
        except ijson.JSONError:
            pass  # said by the main pass, with its place
    return header


def _check_header(header: _Header) -> None:
    if header.format != "parley":
        raise BadImport("format", "must be 'parley' (or give ChatGPT's conversations.json)")
    if header.version != 1 or isinstance(header.version, bool):
        raise BadImport("version", "this Parley reads version 1 of its export")
    if header.conversations != "start_array":
        raise BadImport("conversations", "must be a list")


def _parley(
    path: Path,
    source: Counted,
    header: _Header,
    max_chars: int,
    max_reply_tokens: int,
    on_read: Callable[[int], None],
) -> Iterator[Item]:
    _check_header(header)
    for index, raw in enumerate(ijson.items(source, "conversations.item", use_float=True)):
        where = f"conversations[{index}]"
        _no_surrogate(path, source)
        yield Item(parley.parley_conversation(raw, where, max_chars, max_reply_tokens))
        on_read(source.offset)


def _chatgpt(
    path: Path, source: Counted, max_chars: int, on_read: Callable[[int], None]
) -> Iterator[Item]:
    for index, raw in enumerate(ijson.items(source, "item", use_float=True)):
        _no_surrogate(path, source)
        conversation = chatgpt.conversation(raw, f"[{index}]", max_chars)
        if conversation.messages:
            yield Item(conversation)
        else:
            yield Item(None, chatgpt.Skipped(index, conversation.title, chatgpt.NO_MESSAGE))
        on_read(source.offset)


def _escaped(text: bytes, at: int) -> bool:
    """The backslash at `at` is itself escaped (an odd run of backslashes before it)."""
    run = 0
    while at - run - 1 >= 0 and text[at - run - 1] == 0x5C:
        run += 1
    return run % 2 == 1


def _no_surrogate(path: Path, source: Counted) -> None:
    if source.surrogate_at is not None:
        line, column = _place(path, source.surrogate_at)
        raise BadImport(f"line {line} column {column}", "contains an unpaired surrogate")


def _located(path: Path, failed_by: int, exc: ijson.JSONError) -> BadImport:
    """The syntax error's line and column (1-based, in characters, as Python's json says).
    The parser failed somewhere in the last block it read: parse again, one byte at a time
    from that block on, and the byte it fails at is the place."""
    problem = (
        str(exc).strip().splitlines()[0].removeprefix("b'") if str(exc).strip() else "bad JSON"
    )
    if "invalid bytes in UTF8" in str(exc):
        problem = "the file is not UTF-8 text"
    where = max(0, failed_by - BLOCK)
    with path.open("rb") as raw:
        source = Counted(raw, single_from=where)
        try:
            for _ in ijson.parse(source, buf_size=BLOCK):
                pass
        except ijson.JSONError:
            pass
        offset = max(0, source.offset - 1)
    line, column = _place(path, offset)
    return BadImport(f"line {line} column {column}", _plain(problem))


def _place(path: Path, offset: int) -> tuple[int, int]:
    """Line and column (1-based, the column in characters) of a byte offset of the file."""
    with path.open("rb") as raw:
        line, line_start, done = 1, 0, 0
        while done < offset:
            block = raw.read(min(BLOCK, offset - done))
            if not block:
                break
            newlines = block.count(b"\n")
            if newlines:
                line += newlines
                line_start = done + block.rindex(b"\n") + 1
            done += len(block)
        raw.seek(line_start)
        column = len(raw.read(offset - line_start).decode("utf-8", "replace")) + 1
    return line, column


def _plain(problem: str) -> str:
    return problem.removeprefix("parse error: ").removeprefix("lexical error: ")
