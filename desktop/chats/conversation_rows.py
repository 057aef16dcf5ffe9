"""The sidebar's rows, kept in step with the server's list by the smallest edit.

Any change to a QListWidget's item (its text, its icon, any role's data) makes the view lay
out and repaint every row: with 1,000 chats, 9–28 ms a change on a slow machine. The list was
cleared and built again at every reply's start, 80–270 ms of the window's thread.
So the rows shown are kept beside the widget, and a refresh removes, moves, inserts or rewrites
only the rows that differ: nothing when nothing changed, one move when a chat went to the top.
"""

from __future__ import annotations

from datetime import datetime
from typing import NamedTuple

from PySide6.QtCore import Qt
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QListWidget, QListWidgetItem

from desktop.chats.groups import grouped
from desktop.chats.search_result import SNIPPET_ROLE, clean_snippet
from server.types import ConversationJSON

ID_ROLE = Qt.ItemDataRole.UserRole
TITLE_ROLE = Qt.ItemDataRole.UserRole + 2
HIT_ROLE = Qt.ItemDataRole.UserRole + 4  # a search hit's message id
EDITED = "\0"  # in a row's snippet and hit: its item was edited in place, shows who knows what
UNTITLED = "New chat"


class Row(NamedTuple):
    """What one row shows (a tuple: a list of 1,000 compares in well under a millisecond)."""

    id: str
    title: str
    snippet: str = ""  # HTML: the text a search matched, "" for none
    hit: str = ""  # the message a search found, "" for none
    at: float = 0.0  # its last activity (seconds since the epoch): the group it is drawn in


def row_of(conversation: ConversationJSON) -> Row:
    title = conversation["title"] or UNTITLED
    at = conversation.get("updated_at", 0.0)
    match = conversation.get("match")
    if not match or not match["message_id"]:  # no search, or the title matched
        return Row(conversation["id"], title, at=at)
    snippet = clean_snippet(match["snippet"])
    return Row(conversation["id"], title, snippet, match["message_id"], at)


def arranged(rows: list[Row], now: datetime) -> tuple[list[Row], list[str]]:
    """`rows` (the first of any repeated id) in their date groups, and beside each row the
    header drawn above it: its group's name on a group's first row, "" on the others."""
    seen: set[str] = set()
    unique = []
    for row in rows:
        if row.id not in seen:
            seen.add(row.id)
            unique.append(row)
    ordered: list[Row] = []
    headers: list[str] = []
    for label, members in grouped(unique, lambda row: row.at, now):
        ordered += members
        headers += [label] + [""] * (len(members) - 1)
    return ordered, headers


class ShownRows:
    """The rows a list widget shows, in its order; `show` edits the widget to another list."""

    def __init__(self, view: QListWidget, icon: QIcon) -> None:
        self._view = view
        self._icon = icon  # every row's: the space where a busy chat's dot is drawn
        self.rows: list[Row] = []
        self.headers: list[str] = []  # beside each row: its group's header drawn above it

    def item(self, conversation_id: str | None) -> QListWidgetItem | None:
        for index, row in enumerate(self.rows):
            if row.id == conversation_id:
                return self._view.item(index)
        return None

    def forget(self, conversation_id: str) -> None:
        """The row's item no longer shows what was recorded (its title was edited in place):
        the next `show` writes it whatever it is."""
        for index, row in enumerate(self.rows):
            if row.id == conversation_id:
                self.rows[index] = Row(row.id, "", EDITED, EDITED, row.at)

    def edited(self) -> bool:
        """A row was edited in place since the rows were last told what it is."""
        return any(row.hit == EDITED for row in self.rows)

    def with_top(self, top: list[Row]) -> list[Row]:
        """`top`, the first rows of the list as it is now, then the rest as shown: a chat only
        moves up, to the top, so the rows below the first page keep their order."""
        ids = {row.id for row in top}
        return top + [row for row in self.rows if row.id not in ids]

    def header_at(self, index: int) -> str:
        """The header drawn above the row at `index` ("" for none)."""
        return self.headers[index] if 0 <= index < len(self.headers) else ""

    def show(self, wanted: list[Row], now: datetime) -> bool:
        """Make the widget show `wanted` (the first of any repeated id) in their date groups
        as they are at `now`, by the fewest edits. Whether the headers changed: the headers
        are no item's data (writing it would lay out every row once more), so the view lays
        itself out again when they do."""
        wanted, headers = arranged(wanted, now)
        moved = headers != self.headers
        self.headers = headers
        seen = {row.id for row in wanted}
        if wanted == self.rows:
            return moved
        for index in range(len(self.rows) - 1, -1, -1):
            if self.rows[index].id not in seen:
                del self.rows[index]
                self._view.takeItem(index)
        ids = [row.id for row in self.rows]
        present = set(ids)
        for index, row in enumerate(wanted):
            if index < len(ids) and ids[index] == row.id:
                placed = False
            elif row.id in present:  # further down: moved up to here
                found = ids.index(row.id, index)
                self._view.insertItem(index, self._view.takeItem(found))
                ids.insert(index, ids.pop(found))
                self.rows.insert(index, self.rows.pop(found))
                placed = True
            else:
                self._view.insertItem(index, self._new_item(row))
                ids.insert(index, row.id)
                self.rows.insert(index, row)
                present.add(row.id)
                placed = True
            if self.rows[index] != row:
                _rewrite(self._view.item(index), self.rows[index], row)
                self.rows[index] = row
            if (
                placed
                and len(self.rows) == len(wanted)
                and self.rows[index + 1 :] == wanted[index + 1 :]
            ):
                break  # the rest shows what it should already (compared only then: O(n))
        return moved

    def _new_item(self, row: Row) -> QListWidgetItem:
        item = QListWidgetItem(self._icon, row.title)
        item.setData(ID_ROLE, row.id)
        item.setData(TITLE_ROLE, row.title)
        item.setToolTip(row.title)
        if row.snippet:
            item.setData(SNIPPET_ROLE, row.snippet)
        if row.hit:
            item.setData(HIT_ROLE, row.hit)
        item.setFlags(item.flags() | Qt.ItemFlag.ItemIsEditable)
        return item


def _rewrite(item: QListWidgetItem, old: Row, new: Row) -> None:
    if old.title != new.title:
        item.setText(new.title)
        item.setData(TITLE_ROLE, new.title)
        item.setToolTip(new.title)
    if old.snippet != new.snippet:
        item.setData(SNIPPET_ROLE, new.snippet or None)
    if old.hit != new.hit:
        item.setData(HIT_ROLE, new.hit or None)
