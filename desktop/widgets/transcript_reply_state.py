"""The state of the one growing reply a transcript may hold: where its parts lie in the
document (moved down when something is drawn above it: earlier messages, a piece of its
question), its paragraphs put back together, and all of it dropped when the view shows
something else.

A mixin of `Transcript` (desktop/widgets/transcript.py).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer, SignalInstance

from desktop.client import ReplyEnd
from server.types import CitationPartJSON, ToolPartJSON


class GrowingReply:
    # One growing reply (see _reset_reply).
    _reply: list[str]
    _carry: str  # a code fence to reopen: the reply was cut inside a code block
    _joiner: str | None  # cut inside a paragraph: what goes between its pieces (else None)
    _joined: bool  # a paragraph of this reply was drawn in pieces
    _code_in_pieces: bool  # so was a code block (cut with its fence line carried on)
    _keep_due: bool  # a paragraph past JOIN_MAX_CHARS was cut: keep its pieces so far
    _frozen_len: int
    _shown_len: int
    _ending: tuple[ReplyEnd | None, str] | None
    _live_start: int
    _reply_start: int
    _footer_start: int | None
    _streaming: bool
    _live: bool
    # The reply's parts as they come (text pieces, tool steps, citations): ReplyPartsView.
    _parts: list[list[str] | ToolPartJSON | CitationPartJSON]
    _group_start: int | None
    _group: list[str]
    _seals: dict[int, float]
    _question_end: int
    _timer: QTimer
    reply_ended: SignalInstance

    if TYPE_CHECKING:  # TranscriptDocument's (a stub here would hide it)

        def _unseal(self) -> int: ...

        def _seals_outdated(self) -> bool: ...

        def _pieces_outdated(self) -> bool: ...

        def _join_kept_pieces(self) -> list[int]: ...

    def _unseal_reply(self) -> None:  # its paragraphs each one block again (_seal_lines)
        removed = self._unseal()
        self._live_start -= removed
        if self._group_start is not None:
            self._group_start -= removed

    def _fit_pieces(self, rewrapped: bool = False) -> None:
        """Paragraphs drawn in pieces one block again where the width of the lines changed,
        or wherever the lines wrap anew (`rewrapped`: another font): the pieces wrap as one
        paragraph only at the width and in the font they were cut in."""
        if self._seals and (rewrapped or self._seals_outdated()):
            self._unseal_reply()
        if rewrapped or self._pieces_outdated():
            self._separators_removed(self._join_kept_pieces())

    def _separators_removed(self, removed: list[int]) -> None:
        """Block separators were taken out at `removed` (where they were, ascending): what
        the reply's positions point at moved up by one for each of them before it."""
        if removed:
            self._move(lambda position: position - bisect_left(removed, position))

    def _moved_down(self, by: int) -> None:
        """What the reply's positions point at moved `by` characters down (earlier messages
        were drawn above it, or a piece of its question: LiveQuestion)."""
        self._move(lambda position: position + by)

    def _move(self, move: Callable[[int], int]) -> None:
        """Every position the reply keeps in the document, moved by `move`."""
        self._question_end = move(self._question_end)
        self._live_start = move(self._live_start)
        self._reply_start = move(self._reply_start)
        if self._footer_start is not None:
            self._footer_start = move(self._footer_start)
        if self._group_start is not None:
            self._group_start = move(self._group_start)
        self._seals = {move(position): margin for position, margin in self._seals.items()}

    def _abandon_reply(self) -> None:
        """The view is about to show something else: drop any reply in progress here."""
        self._timer.stop()
        abandoned = self._ending is not None
        self._reset_reply()
        if abandoned:
            self.reply_ended.emit()  # whoever waits for that ending must not wait forever

    def _reset_reply(self) -> None:
        """No reply in progress: the state of one growing reply, empty."""
        self._reply = []
        self._carry = ""
        self._joiner = None
        self._joined = False
        self._code_in_pieces = False
        self._keep_due = False
        self._frozen_len = 0
        self._shown_len = 0
        self._ending = None
        self._live_start = 0
        self._reply_start = 0
        self._footer_start = None
        self._streaming = False
        self._live = False
        self._parts = []
        self._group_start = None
        self._group = []
        self._seals = {}
