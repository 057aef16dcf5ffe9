"""The transcript's rows: one per message, the list model a Qt Quick ListView draws.

Opening a chat costs one light object per message; a message's HTML is rendered only when
its row is first drawn (the ListView asks for its `blocks`), so a chat of 100,000 messages
opens as fast as one of ten. A reply that streams is the last row: its text grows through
`PartBlocks` into its `BlockList`, and only the blocks that changed are drawn again."""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from PySide6.QtCore import (
    QAbstractListModel,
    QByteArray,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
)

from desktop.client.events import ReplyEnd
from desktop.composer.attachment_files import size_text
from desktop.transcript.badges import acted_text, badge_for, stats_for
from desktop.transcript.blocks import Block, BlockList, PartBlocks
from desktop.transcript.markdown import MarkdownRenderer
from desktop.transcript.sealing import Sealer
from desktop.transcript.sources import place, sources
from desktop.transcript.step_view import step_view
from server.types import AttachmentJSON, MessageJSON, PartJSON, SummaryJSON, continuable

# The roles QML reads, and the Row attribute each one is (`blocks` is made when first read).
ROLES = {
    "rowId": "id",
    "author": "role",
    "header": "header",
    "blocks": "blocks",
    "badge": "badge",
    "tone": "tone",
    "stats": "stats",
    "acted": "acted",
    "streaming": "streaming",
    "question": "question",
    "actions": "actions",
    "version": "version",
    "versions": "versions",
    "note": "note",
    "sources": "sources",
    "found": "found",
    "files": "files",
}
_ROLE_IDS = {name: Qt.ItemDataRole.UserRole + 1 + i for i, name in enumerate(ROLES)}
_ATTRIBUTES = {number: ROLES[name] for name, number in _ROLE_IDS.items()}


@dataclass
class Row:
    """One message as the transcript shows it."""

    id: str
    role: str  # "user", "assistant", or "summary" (earlier messages summarised above it)
    text: str  # the user's words (a reply's are in `parts`)
    parts: list[str | PartJSON] = field(default_factory=list)  # a reply's text and steps
    header: str = ""  # over a reply: the model that wrote it
    streaming: bool = False
    ending: ReplyEnd | None = None  # how a reply ended, once it has
    version: str = ""  # "2/3": which of its versions this is, when it has several
    siblings: list[str] = field(default_factory=list)  # its versions' ids, in order
    sibling_index: int = 0
    # Where a streaming reply's text will come, while none has: "Loading <model>… 40%".
    note: str = ""
    found: bool = False  # the message Find in chat is on
    attached: list[AttachmentJSON] = field(default_factory=list)  # a question's files
    blocks: BlockList | None = None  # made when the row is first drawn
    growing: PartBlocks | None = field(default=None, repr=False)

    def actions(self, last: bool) -> list[str]:
        """What may be done with the message, in the order its buttons show; `last`: it ends
        the chat shown (only then may a stopped or cut reply be continued)."""
        if self.streaming:
            return []
        if self.role == "summary":
            return ["view", "edit", "undo"]
        if self.role == "user":
            return ["copy", "edit"]
        shown = ["copy", "regenerate"]
        ending = self.ending
        has_text = any(
            (p if isinstance(p, str) else p["text"] if p["type"] == "text" else "").strip()
            for p in self.parts
        )
        if last and has_text and ending and continuable(ending.status, ending.finish_reason):
            shown.append("continue")
        return shown

    @property
    def versions(self) -> list[str]:
        """The ids of the other versions before and after it ("" where there is none):
        [previous, next], or [] when it has one version."""
        if len(self.siblings) < 2:
            return []
        at = self.sibling_index
        before = self.siblings[at - 1] if at > 0 else ""
        after = self.siblings[at + 1] if at + 1 < len(self.siblings) else ""
        return [before, after]

    @property
    def badge(self) -> str:
        """How it ended, when that is worth saying ("Stopped · ended 1 tool call")."""
        return badge_for(self.ending) if self.ending is not None else ""

    @property
    def tone(self) -> str:
        """The palette's colour for the badge: "danger" for an error, else "warning"."""
        return "danger" if self.ending is not None and self.ending.status == "error" else "warning"

    @property
    def stats(self) -> str:
        return stats_for(self.ending.usage) if self.ending is not None else ""

    @property
    def acted(self) -> str:
        """The calls a stop cut while they ran, which may have acted already."""
        if self.ending is None or self.ending.status != "interrupted":
            return ""
        return acted_text(self.ending.ended)

    @property
    def sources(self) -> list[dict[str, object]]:
        """The reply's sources as its chips show them: number, file and place, and whether
        it cited it (else the passage was only given to it)."""
        found = sources([part for part in self.parts if not isinstance(part, str)])
        return [
            {
                "n": n,
                "label": f"{PurePosixPath(source['path']).name}{place(source)}",
                "path": source["path"],
                "place": place(source),
                "cited": source.get("cited", True),
            }
            for n, source in found.items()
        ]

    @property
    def files(self) -> list[dict[str, object]]:
        """A question's files as its chips show them."""
        return [
            {"id": f["id"], "name": f["name"], "size": size_text(f["bytes"]),
             "image": f["kind"] == "image"}
            for f in self.attached
        ]  # fmt: skip

    @property
    def question(self) -> str:
        """The user's words as rich text (never interpreted as markup); "" for a reply."""
        return html.escape(self.text).replace("\n", "<br>") if self.role == "user" else ""


def row_of(message: MessageJSON) -> Row:
    role = "user" if message["role"] == "user" else "assistant"
    parts: list[str | PartJSON] = list(message["parts"]) or [message["content"]]
    return Row(
        id=message["id"],
        role=role,
        text=message["content"] if role == "user" else "",
        parts=parts if role == "assistant" else [],
        header=(message.get("model") or "") if role == "assistant" else "",
        streaming=message["status"] == "streaming",
        ending=ReplyEnd.from_message(message)
        if role == "assistant" and message["status"] != "streaming"
        else None,
        version=version_of(message),
        siblings=list(message.get("siblings") or []),
        sibling_index=message.get("sibling_index") or 0,
        attached=list(message.get("attachments") or []) if role == "user" else [],
    )


def _part_text(part: str | PartJSON) -> str:
    if isinstance(part, str):
        return part
    if part["type"] == "text":
        return part["text"]
    if part["type"] == "tool":
        return f"\n{step_view(part).text}\n"
    return ""


def summary_row(summary: SummaryJSON) -> Row:
    """The divider that stands where a summary ends: the messages above it are given to the
    model as its text (they stay here, shown and searched)."""
    by = f"by {summary['model']}" if summary["model"] else "edited by you"
    return Row(id=summary["id"], role="summary", text=summary["content"], header=by)


def version_of(message: MessageJSON) -> str:
    siblings = message.get("siblings") or []
    at = message.get("sibling_index")
    return f"{at + 1}/{len(siblings)}" if len(siblings) > 1 and at is not None else ""


class TranscriptRows(QAbstractListModel):
    """The messages on screen, oldest first. A stored message becomes a Row only when it is
    first read (drawn, or looked up), so opening a chat costs one list of references."""

    def __init__(self, renderer: MarkdownRenderer, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._renderer = renderer
        self.sealer = Sealer()  # where a streaming reply's long paragraph is cut
        self._items: list[Row | MessageJSON] = []

    # -- what QML reads ---------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex | None = None) -> int:
        return 0 if parent is not None and parent.isValid() else len(self._items)

    def roleNames(self) -> dict[int, QByteArray]:
        return {number: QByteArray(name.encode()) for name, number in _ROLE_IDS.items()}

    def data(
        self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole
    ) -> object:
        if not 0 <= index.row() < len(self._items):
            return None
        row = self._row_at(index.row())
        if role == _ROLE_IDS["blocks"]:
            return self._blocks(row)
        if role == _ROLE_IDS["actions"]:
            return row.actions(last=index.row() == len(self._items) - 1)
        attribute = _ATTRIBUTES.get(role)
        return None if attribute is None else getattr(row, attribute)

    def _row_at(self, at: int) -> Row:
        item = self._items[at]
        if not isinstance(item, Row):
            item = self._items[at] = row_of(item)
        return item

    def _blocks(self, row: Row) -> BlockList:
        if row.blocks is None:
            row.blocks = BlockList(self)
            row.blocks.set_blocks(self._render(row))
        return row.blocks

    def _render(self, row: Row) -> list[Block]:
        if row.role == "user":
            return []  # its words are `question`
        if row.growing is None:  # drawn once (a stored reply), or grown from here on
            row.growing = PartBlocks(self._renderer, self.sealer if row.streaming else None)
        return row.growing.set_parts(row.parts)

    def remeasure(self, width: float, pixel_size: int) -> None:
        """The replies' text is drawn at a new width or size: a paragraph cut at the old one
        is put back together (and a streaming one cut again at the new)."""
        if not self.sealer.set_measure(width, pixel_size):
            return
        for item in self._items:
            if isinstance(item, Row) and item.growing is not None and item.growing.sealed:
                item.growing = None
                if item.blocks is not None:
                    item.blocks.set_blocks(self._render(item))

    # -- what the window does ---------------------------------------------------------------

    def show(self, messages: Iterable[MessageJSON], summaries: Iterable[SummaryJSON] = ()) -> None:
        """Show these messages (a chat opened) in place of the ones shown, each summary's
        divider under the last message it covers."""
        self.beginResetModel()
        for item in self._items:
            if isinstance(item, Row) and item.blocks is not None:
                item.blocks.deleteLater()
        self._items = list(messages)
        for summary in summaries:
            at = self._find(summary["through_id"])
            if at is not None:
                self._items.insert(at + 1, summary_row(summary))
        self.endResetModel()

    def text_at(self, at: int) -> str:
        """The words of the message at `at`, as Find reads them: a reply's text, and its
        steps as their lines, in order."""
        item = self._items[at]
        if not isinstance(item, Row):
            return (
                item["content"]
                if not item["parts"] or item["role"] == "user"
                else ("".join(_part_text(part) for part in item["parts"]))
            )
        if item.role != "assistant":
            return item.text
        return "".join(_part_text(part) for part in item.parts)

    def plain_text(self) -> str:
        """Every message's words, one after the other (what a search of the chat reads)."""
        return "\n\n".join(self.text_at(at) for at in range(len(self._items)))

    def find(self, query: str, after: int = -1, backwards: bool = False) -> int | None:
        """The next message (from `after`, wrapping around) whose words hold `query`, any
        case; None if none does. Messages not drawn yet are searched too."""
        count = len(self._items)
        if not query or not count:
            return None
        wanted = query.casefold()
        step = -1 if backwards else 1
        start = after if after >= 0 else (count if backwards else -1)
        for offset in range(1, count + 1):
            at = (start + step * offset) % count
            if wanted in self.text_at(at).casefold():
                return at
        return None

    def matches(self, query: str, most: int) -> list[tuple[int, int]]:
        """Every place `query` stands (any case), in order: the message's place and where in
        its words; at most `most`."""
        wanted = query.casefold()
        found: list[tuple[int, int]] = []
        for at in range(len(self._items)):
            words = self.text_at(at).casefold()
            start = words.find(wanted)
            while start >= 0 and len(found) < most:
                found.append((at, start))
                start = words.find(wanted, start + max(1, len(wanted)))
            if len(found) >= most:
                break
        return found

    def mark_found(self, at: int | None) -> None:
        """Mark the message Find is on (None: none)."""
        for index, item in enumerate(self._items):
            if isinstance(item, Row) and item.found and index != at:
                item.found = False
                self.dataChanged.emit(self.index(index), self.index(index), [_ROLE_IDS["found"]])
        if at is not None:
            self._row_at(at).found = True
            self.dataChanged.emit(self.index(at), self.index(at), [_ROLE_IDS["found"]])

    def blocks_of(self, row_id: str) -> list[Block]:
        """The blocks of a message (rendered now if it was not drawn yet)."""
        row = self.row(row_id)
        return self._blocks(row).blocks if row is not None else []

    def render_again(self) -> None:
        """Every message rendered anew when next drawn (the colours changed)."""
        self.beginResetModel()
        for item in self._items:
            if isinstance(item, Row):
                if item.blocks is not None:
                    item.blocks.deleteLater()
                item.blocks, item.growing = None, None
        self.endResetModel()

    def ids(self) -> list[str]:
        return [item.id if isinstance(item, Row) else item["id"] for item in self._items]

    def _find(self, row_id: str) -> int | None:
        """Where the message is: looked for from the newest, where the rows that change are."""
        for at in range(len(self._items) - 1, -1, -1):
            item = self._items[at]
            if (item.id if isinstance(item, Row) else item["id"]) == row_id:
                return at
        return None

    def row(self, row_id: str) -> Row | None:
        at = self._find(row_id)
        return None if at is None else self._row_at(at)

    def prepend(self, messages: Sequence[MessageJSON]) -> None:
        """Messages from before the first one shown (a page of a long chat), above it."""
        if not messages:
            return
        self.beginInsertRows(QModelIndex(), 0, len(messages) - 1)
        self._items[:0] = list(messages)
        self.endInsertRows()

    def remove(self, row_ids: Iterable[str]) -> None:
        """Take these messages (or dividers) away."""
        for row_id in row_ids:
            at = self._find(row_id)
            if at is not None:
                self.beginRemoveRows(QModelIndex(), at, at)
                removed = self._items.pop(at)
                self.endRemoveRows()
                if isinstance(removed, Row) and removed.blocks is not None:
                    removed.blocks.deleteLater()

    def place_summary(self, summary: SummaryJSON) -> bool:
        """A summary's divider under the last message it covers, in place of the one it
        replaces; False if that message is not shown (yet)."""
        self.remove([summary["id"]])
        at = self._find(summary["through_id"])
        if at is None:
            return False
        self.beginInsertRows(QModelIndex(), at + 1, at + 1)
        self._items.insert(at + 1, summary_row(summary))
        self.endInsertRows()
        return True

    def append(self, row: Row) -> None:
        """A message sent (the question) or a reply begun, below the others."""
        self.beginInsertRows(QModelIndex(), len(self._items), len(self._items))
        self._items.append(row)
        self.endInsertRows()
        if len(self._items) > 1:  # the one above is no longer the last: no Continue there
            above = self.index(len(self._items) - 2)
            self.dataChanged.emit(above, above, [_ROLE_IDS["actions"]])

    def rename(self, row_id: str, new_id: str, header: str | None = None) -> None:
        """A row drawn before the server named it takes its id (and a reply its model's
        name): the same delegate, nothing laid out again."""
        at = self._find(row_id)
        if at is None:
            return
        row = self._row_at(at)
        row.id = new_id
        changed = [_ROLE_IDS["rowId"]]
        if header is not None and header != row.header:
            row.header = header
            changed.append(_ROLE_IDS["header"])
        self.dataChanged.emit(self.index(at), self.index(at), changed)

    def grow(self, row_id: str, parts: Sequence[str | PartJSON]) -> None:
        """A streaming reply's parts so far (its text pieces and steps, as they came): only
        its blocks that changed are drawn again."""
        row = self.row(row_id)
        if row is None:
            return
        row.parts = list(parts)
        if row.note and parts:
            self.set_note(row_id, "")  # what it waited for came
        if any(not isinstance(part, str) and part["type"] == "citation" for part in parts):
            at = self._find(row_id)
            if at is not None:
                self.dataChanged.emit(self.index(at), self.index(at), [_ROLE_IDS["sources"]])
        if row.blocks is not None:  # drawn: its blocks follow; else rendered when drawn
            row.blocks.set_blocks(self._render(row))

    def set_note(self, row_id: str, note: str) -> None:
        """What a reply that has brought nothing yet is waiting for ("" once it has)."""
        at = self._find(row_id)
        if at is None:
            return
        self._row_at(at).note = note
        self.dataChanged.emit(self.index(at), self.index(at), [_ROLE_IDS["note"]])

    def end(self, row_id: str, end: ReplyEnd) -> None:
        """A reply is over: its footer says how, and what may be done with it now."""
        at = self._find(row_id)
        if at is None:
            return
        row = self._row_at(at)
        row.ending, row.streaming, row.note = end, False, ""
        changed = [_ROLE_IDS[name] for name in ("badge", "tone", "stats", "acted")]
        changed += [_ROLE_IDS[name] for name in ("streaming", "actions", "note")]
        self.dataChanged.emit(self.index(at), self.index(at), changed)
