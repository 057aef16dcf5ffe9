"""The tools dialog's safety: the selected server's injection guard switch (on by default;
turning it off asks first, saying what it means) and every chat's allows given on approval
cards, each with Revoke (server/routes/grants.py). It only shows and asks: the tools
controller calls the server and shows the answer here.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QGroupBox,
    QHeaderView,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from server.types.tools import GrantJSON, ToolServerJSON

GUARD_LABEL = "Ask before its tools act on text you did not write (the injection guard)"
GUARD_OFF = (
    "Turn the injection guard off for {server}?\n\n"
    "Its tools will then run as their trust says even after the model has read text you did "
    "not write — a tool's result, a web page, a document, an attached file — which may hold "
    "instructions to write, delete or send your data somewhere. Parley will no longer ask "
    "before such a call."
)
CHAT, ALLOWED, REVOKE = range(3)


def grant_words(grant: GrantJSON) -> str:
    """What a grant lets run unasked, in words."""
    if grant["scope"] == "server":
        return f"every tool of {grant['server']}"
    if grant["scope"] == "arguments":
        where = f"when {grant['argument']} is under {grant['under']}"
        return f"{grant['server']} · {grant['tool']} {where}"
    return f"{grant['server']} · {grant['tool']}"


class ToolSafety(QGroupBox):
    guard_chosen = Signal(str, bool)  # a server's name, the guard on
    revoke_requested = Signal(str)  # a grant's id

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Safety", parent)
        self.guard = QCheckBox(GUARD_LABEL, self)
        self.guard.setAccessibleName("The injection guard for the selected server")
        self.guard.setEnabled(False)
        self.grants = QTableWidget(0, 3, self)
        self.grants.setObjectName("tool-grants")
        self.grants.setAccessibleName("Allowed for a chat from approval cards")
        self.grants.setHorizontalHeaderLabels(["Chat", "Runs without asking", ""])
        self.grants.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.grants.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.grants.verticalHeader().setVisible(False)
        header = self.grants.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(ALLOWED, QHeaderView.ResizeMode.Stretch)
        column = QVBoxLayout(self)
        column.addWidget(self.guard)
        column.addWidget(self.grants)
        self._server: str | None = None
        self._shown: list[str] = []  # the grants' ids, as listed
        self.confirm: QMessageBox | None = None  # turning the guard off, while it asks
        self.guard.toggled.connect(self._on_guard_toggled)

    def show_server(self, server: ToolServerJSON | None) -> None:
        """The selected server's switch, as its entry has it (not emitted)."""
        self._server = server["name"] if server is not None else None
        with QSignalBlocker(self.guard):
            self.guard.setEnabled(server is not None)
            self.guard.setChecked(server is None or server.get("guard", True))

    def show_grants(self, grants: list[GrantJSON]) -> None:
        """The grants as the server has them; the rows are made again only when they change
        (a Revoke button keeps the keyboard's focus across the dialog's refreshes)."""
        ids = [grant["id"] for grant in grants]
        if ids == self._shown:
            return
        self._shown = ids
        self.grants.setRowCount(len(grants))
        for row, grant in enumerate(grants):
            title = grant["conversation_title"] or "(untitled chat)"
            when = time.strftime("%H:%M", time.localtime(grant["granted_at"]))
            self.grants.setItem(row, CHAT, QTableWidgetItem(title))
            allowed = QTableWidgetItem(grant_words(grant))
            allowed.setToolTip(f"Allowed at {when} for the chat {title}")
            self.grants.setItem(row, ALLOWED, allowed)
            revoke = QPushButton("Revoke", self.grants)
            revoke.setAccessibleName(f"Revoke: {grant_words(grant)}, in {title}")
            revoke.clicked.connect(lambda _=False, found=grant["id"]: self._on_revoke(found))
            self.grants.setCellWidget(row, REVOKE, revoke)

    def revoke_button(self, row: int) -> QPushButton:
        widget = self.grants.cellWidget(row, REVOKE)
        if not isinstance(widget, QPushButton):
            raise LookupError(f"no grant at row {row}")
        return widget

    def _on_revoke(self, grant_id: str) -> None:
        self.revoke_requested.emit(grant_id)

    def _on_guard_toggled(self, on: bool) -> None:
        server = self._server
        if server is None:
            return
        if on:
            self.guard_chosen.emit(server, True)
            return
        with QSignalBlocker(self.guard):
            self.guard.setChecked(True)  # on until the user confirms
        confirm = QMessageBox(
            QMessageBox.Icon.Warning, "Turn the guard off?", GUARD_OFF.format(server=server),
            QMessageBox.StandardButton.Cancel, self,
        )  # fmt: skip
        turn_off = confirm.addButton("Turn it off", QMessageBox.ButtonRole.DestructiveRole)
        confirm.setDefaultButton(QMessageBox.StandardButton.Cancel)
        confirm.finished.connect(lambda _: self._on_confirm_finished(confirm, turn_off, server))
        self.confirm = confirm
        confirm.open()  # not exec(): no nested loop under qasync

    def _on_confirm_finished(
        self, confirm: QMessageBox, turn_off: QPushButton, server: str
    ) -> None:
        self.confirm = None
        confirm.deleteLater()
        if confirm.clickedButton() is turn_off:
            with QSignalBlocker(self.guard):
                self.guard.setChecked(False)
            self.guard_chosen.emit(server, False)
