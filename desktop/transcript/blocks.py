"""A message's text (and a reply's tool steps) as a list of blocks, for a Qt Quick list.

A stored message is one block, rendered when its row is first drawn. A reply that streams
grows: the part of it that can no longer change (markdown_render.split_stable: up to the last
blank line outside a code fence) is rendered once into a block of its own and frozen; only
the live tail after it is rendered again as text comes. `BlockList` is the list model QML
reads: frozen blocks are never touched again, so their items are never laid out again. A
reply's tool steps are blocks of their own between its runs of text (`PartBlocks`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from desktop.transcript.markdown import FENCE_OPEN, PLAIN_LINE, MarkdownRenderer, split_stable
from desktop.transcript.sealing import RETRY_CHARS, SEAL_CHARS, Sealer
from desktop.transcript.step_view import StepView, step_view
from server.types import PartJSON

KIND_ROLE = Qt.ItemDataRole.UserRole + 1
HTML_ROLE = Qt.ItemDataRole.UserRole + 2
STEP_ROLE = Qt.ItemDataRole.UserRole + 3
JOINED_ROLE = Qt.ItemDataRole.UserRole + 4


@dataclass(frozen=True)
class Block:
    """Rendered text (`html`), or a tool step (`step`). A `joined` block goes on with the
    paragraph of the block above it (sealing.py): no gap is drawn between them."""

    kind: str  # "text" or "step"
    html: str = ""
    step: StepView | None = None
    joined: bool = False


# Prose read at a generous line height, a list's items a little closer, code closer still
# (../shared/LOOK.md). Each on its own element: Qt's rich text gives a div's line height to
# its first block only (a list's first item stood apart from the rest).
PROSE = '<div style="line-height:155%;">'
PARAGRAPH = "line-height:155%;"
LINE_HEIGHTS = {
    "<p>": f'<p style="{PARAGRAPH}">',
    "<li>": '<li style="line-height:135%;">',
    '<pre style="': '<pre style="line-height:125%; ',
}


def typeset(html: str, joined: bool = False, sealed: bool = False) -> str:
    """`html` at the look's line heights. A `joined` block's first paragraph goes on with the
    block above it, a `sealed` block's paragraph goes on in the block below: no margin there."""
    first = 0 if joined and html.startswith("<p>") else -1
    last = html.rfind("<p>") if sealed and html.endswith("</p>") else -1
    for at, margin in sorted({first: "top", last: "bottom"}.items(), reverse=True):
        if at >= 0:
            margins = "margin-top:0; margin-bottom:0;" if first == last else f"margin-{margin}:0;"
            html = html[:at] + f'<p style="{PARAGRAPH} {margins}">' + html[at + 3 :]
    for tag, spaced in LINE_HEIGHTS.items():
        html = html.replace(tag, spaced)
    return PROSE + html + "</div>"


class BlockList(QAbstractListModel):
    """The blocks of one message (roles `kind`, `html`, `step`: a map of the StepView).
    `set_blocks` tells views only what changed: blocks that stayed the same are left alone."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._blocks: list[Block] = []

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._blocks)

    def roleNames(self) -> dict[int, QByteArray]:
        return {
            KIND_ROLE: QByteArray(b"kind"),
            HTML_ROLE: QByteArray(b"html"),
            STEP_ROLE: QByteArray(b"step"),
            JOINED_ROLE: QByteArray(b"joined"),
        }

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = HTML_ROLE) -> object:
        if not 0 <= index.row() < len(self._blocks):
            return None
        block = self._blocks[index.row()]
        if role == KIND_ROLE:
            return block.kind
        if role == HTML_ROLE:
            return block.html
        if role == STEP_ROLE:
            return asdict(block.step) if block.step is not None else {}
        if role == JOINED_ROLE:
            return block.joined
        return None

    @property
    def blocks(self) -> list[Block]:
        return list(self._blocks)

    def set_blocks(self, blocks: list[Block]) -> None:
        old = self._blocks
        same = 0
        while same < min(len(old), len(blocks)) and old[same] == blocks[same]:
            same += 1
        if len(blocks) < len(old):
            self.beginRemoveRows(QModelIndex(), len(blocks), len(old) - 1)
            self._blocks = old[: len(blocks)]
            self.endRemoveRows()
        changed_end = min(len(self._blocks), len(blocks))
        self._blocks[same:changed_end] = blocks[same:changed_end]
        if same < changed_end:
            roles = [KIND_ROLE, HTML_ROLE, STEP_ROLE, JOINED_ROLE]
            self.dataChanged.emit(self.index(same), self.index(changed_end - 1), roles)
        if len(blocks) > len(self._blocks):
            self.beginInsertRows(QModelIndex(), len(self._blocks), len(blocks) - 1)
            self._blocks.extend(blocks[len(self._blocks) :])
            self.endInsertRows()


class ReplyBlocks:
    """A growing reply's Markdown as frozen blocks and one live tail (`pieces`; `blocks`, their
    HTML). With a `sealer`, a long plain paragraph's finished lines are frozen too."""

    def __init__(self, renderer: MarkdownRenderer, sealer: Sealer | None = None) -> None:
        self._renderer = renderer
        self._sealer = sealer
        self._measure = sealer.revision if sealer is not None else 0
        self._frozen: list[Block] = []  # the text up to `_frozen_chars`
        self._frozen_chars = 0
        self._carry = ""  # the fence line that opens the rest, when a code block was cut
        self._open = False  # the rest goes on with a paragraph a cut sealed off
        self._retry_at = 0  # after a cut that failed, how long the live part grows first
        self._text = ""
        self.pieces: list[Block] = []

    @property
    def blocks(self) -> list[str]:
        return [piece.html for piece in self.pieces]

    @property
    def sealed(self) -> bool:
        """A paragraph of it was cut at the sealer's measure."""
        return any(piece.joined for piece in self.pieces)

    def set_text(self, text: str) -> list[str]:
        """The blocks of `text` (the reply so far). Text that only grew renders just what is
        new past the last frozen block; any other change renders it afresh, and so does a
        new measure where a paragraph was cut at the old one."""
        measure = self._sealer.revision if self._sealer is not None else 0
        if not text.startswith(self._text[: self._frozen_chars]) or (
            measure != self._measure and self.sealed
        ):
            self._frozen, self._frozen_chars, self._carry, self._open = [], 0, "", False
            self._retry_at = 0
        self._measure = measure
        self._text = text
        rest = self._carry + text[self._frozen_chars :]
        continued = bool(self._carry)
        stable, tail, carry = split_whole_paragraphs(rest)
        if stable.strip() and len(stable) > len(self._carry):
            html = self._renderer.render(stable, continued=continued, cut=bool(carry))
            self._frozen.append(Block("text", typeset(html, joined=self._open), joined=self._open))
            self._frozen_chars += len(stable) - len(self._carry)
            self._carry, self._open = carry, False
            rest, continued = carry + tail, bool(carry)
        if not continued:
            rest = self._seal(rest)
        live = self._renderer.render(rest, continued=continued) if rest.strip() else ""
        self.pieces = list(self._frozen)
        if live:
            self.pieces.append(Block("text", typeset(live, joined=self._open), joined=self._open))
        return self.blocks

    def _seal(self, rest: str) -> str:
        """Freeze the finished lines of `rest` when it is one long plain paragraph; what is
        left live."""
        if self._sealer is None or len(rest) <= SEAL_CHARS or not PLAIN_LINE.fullmatch(rest):
            return rest
        if len(rest) < self._retry_at:
            return rest  # a cut just failed here: laying it out again each update costs twice
        cut = self._sealer.cut(rest, typeset("<p>{}</p>", joined=self._open))
        # What goes on must read as the paragraph's words, not open a list or a heading.
        if not cut or not PLAIN_LINE.fullmatch(rest[cut:]):
            self._retry_at = len(rest) + RETRY_CHARS
            return rest
        self._retry_at = 0
        html = self._renderer.render(rest[:cut])
        self._frozen.append(
            Block("text", typeset(html, joined=self._open, sealed=True), joined=self._open)
        )
        self._frozen_chars += cut
        self._open = True
        return rest[cut:]


def split_whole_paragraphs(text: str) -> tuple[str, str, str]:
    """markdown_render.split_stable, but prose is never cut inside a paragraph: each block is
    a text item of its own, and a paragraph cut in two would be drawn as two. A long code
    block may be cut at a line end (its fence carried), as its lines stand on their own."""
    stable, tail, carry = split_stable(text, max_tail=sys.maxsize, max_plain_tail=sys.maxsize)
    first_line = tail.split("\n", 1)[0]
    if FENCE_OPEN.match(first_line):
        return split_stable(text)  # a code block: cut at a line end when it grows long
    return stable, tail, carry


class PartBlocks:
    """A reply's parts as blocks: each run of text through its own ReplyBlocks (only the last
    run grows), each tool step a block (drawn again when it changes)."""

    def __init__(self, renderer: MarkdownRenderer, sealer: Sealer | None = None) -> None:
        self._renderer = renderer
        self._sealer = sealer
        self._runs: list[ReplyBlocks] = []

    @property
    def sealed(self) -> bool:
        """A paragraph of it was cut at the sealer's measure (sealing.py)."""
        return any(run.sealed for run in self._runs)

    def set_parts(self, parts: Sequence[str | PartJSON]) -> list[Block]:
        """`parts`: the reply's text pieces and tool steps in order (pieces next to each
        other are one run of text; a citation between them is listed elsewhere)."""
        blocks: list[Block] = []
        run: list[str] = []
        runs = 0

        def close_run() -> None:
            nonlocal runs
            if not run:
                return
            if runs == len(self._runs):
                self._runs.append(ReplyBlocks(self._renderer, self._sealer))
            self._runs[runs].set_text("".join(run))
            blocks.extend(self._runs[runs].pieces)
            runs += 1
            run.clear()

        for part in parts:
            if isinstance(part, str):
                run.append(part)
            elif part["type"] == "text":
                run.append(part["text"])
            elif part["type"] == "tool":
                close_run()
                blocks.append(Block("step", step=step_view(part)))
        close_run()
        del self._runs[runs:]
        return blocks
