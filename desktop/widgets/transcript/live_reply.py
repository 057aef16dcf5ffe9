"""The state of the one reply a transcript may be drawing as it grows: how much of it is drawn,
how the last paragraph was cut, and where its pieces lie in the document (moved when something
is drawn above it: earlier messages, a piece of its question). A reply begun anew, or dropped,
is a fresh `LiveReply`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from desktop.reply_events import ReplyEnd, ReplyParts


@dataclass
class LiveReply:
    # What the reply brought so far, held by its owner (desktop/reply.py): read, not written.
    parts: ReplyParts = field(default_factory=ReplyParts)
    ids: tuple[str, str] | None = None  # its question's and its own (their actions)
    model: str | None = None  # the model answering (a sub-agent's is named when it differs)
    taken: int = 0  # items of `parts` taken in
    told: int = 0  # characters of its text taken in (to draw)
    frozen_len: int = 0  # drawn for good
    shown_len: int = 0  # drawn so far (the live tail too)
    carry: str = ""  # a code fence to reopen: the reply was cut inside a code block
    joiner: str | None = None  # cut inside a paragraph: what goes between its pieces
    joined: bool = False  # a paragraph of this reply was drawn in pieces
    code_in_pieces: bool = False  # so was a code block (cut with its fence line carried on)
    keep_due: bool = False  # a paragraph past JOIN_MAX_CHARS was cut: keep its pieces so far
    ending: tuple[ReplyEnd | None, str] | None = None  # to draw once the text is drawn
    streaming: bool = False  # text may still come
    live: bool = False  # on screen, waiting for its saved ending
    noted: bool = False  # a note (compaction) is drawn where its text will come
    # Where it lies: its text's start, the live tail's, the footer's (a note, or the
    # ending), the tool steps being run now (at the end), and their ids.
    reply_start: int = 0
    live_start: int = 0
    footer_start: int | None = None
    group_start: int | None = None
    group: list[str] = field(default_factory=list)
    # Its sources so far (given or cited), by number -> their links: its "[n]" are links.
    sources: dict[int, str] = field(default_factory=dict)

    def move(self, move: Callable[[int], int]) -> None:
        """Every position it keeps in the document, moved by `move`."""
        self.live_start = move(self.live_start)
        self.reply_start = move(self.reply_start)
        if self.footer_start is not None:
            self.footer_start = move(self.footer_start)
        if self.group_start is not None:
            self.group_start = move(self.group_start)

    def text(self) -> str:
        """Its text taken in so far."""
        return self.parts.text[: self.told]
