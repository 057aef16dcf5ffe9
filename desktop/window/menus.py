"""The window's menu bar: every command of the window in one place, with its shortcut (the
platform's standard one where Qt knows one), enabled only when it can do something.

File, Edit, View, Chat, Help. A few keys belong to the widget with the focus (Ctrl+C copies
what is selected there, Delete deletes the chat selected in the list, Esc first closes what
it can, then stops the reply): their menu entries show the key but leave it to the widget.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QMainWindow, QMenu

from desktop.replies import approval_card, overdue_card, question_card, sign_in_card

Key = QKeySequence.StandardKey | str
THEMES = (("system", "&System"), ("light", "&Light"), ("dark", "&Dark"))


class Menus(QObject):
    """The menu bar's entries, each an action the window connects to what it does (`copy`
    and the theme are the menus' own). The window says what can act now (`show_chat`,
    `show_zoom`)."""

    theme_chosen = Signal(str)  # "system", "light" or "dark"

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self._window = window
        bar = window.menuBar()

        file = bar.addMenu("&File")
        self.new_chat = self._add(file, "&New chat", QKeySequence.StandardKey.New)
        file.addSeparator()
        self.import_chats = self._add(file, "&Import chats…", QKeySequence.StandardKey.Open)
        self.export_chat = self._add(file, "&Export this chat…", "Ctrl+E")
        self.export_all = self._add(file, "Export &every chat…")
        file.addSeparator()
        # Quitting mid-reply takes the path closing the window takes.
        self.quit = self._add(file, "&Quit", QKeySequence.StandardKey.Quit, "Ctrl+Q")

        edit = bar.addMenu("&Edit")
        self.copy = self._add(edit, "&Copy", hint="Ctrl+C")
        when_triggered(self.copy, _copy_in_focus)
        self.find = self._add(edit, "&Find in chat…", QKeySequence.StandardKey.Find)
        edit.addSeparator()
        self.settings = self._add(
            edit, "&Settings…", QKeySequence.StandardKey.Preferences, "Ctrl+,"
        )
        self.models = self._add(edit, "&Models…")
        self.tools = self._add(edit, "MCP &servers…")
        self.library = self._add(edit, "&Library…")

        view = bar.addMenu("&View")
        self.sidebar = self._add(view, "Show &sidebar", "Ctrl+B")
        self.sidebar.setCheckable(True)
        self.sidebar.setChecked(True)
        # Moving about without the mouse: the browser's keys for the next tab.
        self.next_chat = self._add(view, "&Next chat", "Ctrl+PgDown", "Ctrl+Tab")
        self.previous_chat = self._add(view, "&Previous chat", "Ctrl+PgUp", "Ctrl+Shift+Tab")
        self.search_chats = self._add(view, "Searc&h chats", "Ctrl+K")
        self.type_message = self._add(view, "&Type a message", "Ctrl+L")
        view.addSeparator()
        self.zoom_in = self._add(
            view, "Zoom &in", QKeySequence.StandardKey.ZoomIn, "Ctrl+=", "Ctrl++"
        )
        self.zoom_out = self._add(view, "Zoom &out", QKeySequence.StandardKey.ZoomOut, "Ctrl+-")
        self.zoom_reset = self._add(view, "&Actual size", "Ctrl+0")
        view.addSeparator()
        themes = view.addMenu("&Theme")
        group = QActionGroup(self)
        self.themes: dict[str, QAction] = {}
        for name, label in THEMES:
            action = self._add(themes, label)
            when_triggered(action, self._choose_theme(name))
            action.setCheckable(True)
            group.addAction(action)
            self.themes[name] = action
        self.themes["system"].setChecked(True)

        chat = bar.addMenu("&Chat")
        self.attach = self._add(chat, "&Attach files…", "Ctrl+Shift+A")
        chat.addSeparator()
        self.stop = self._add(chat, "&Stop the reply", hint="Esc")
        self.regenerate = self._add(chat, "&Regenerate the last reply", "Ctrl+R")
        self.continue_ = self._add(chat, "&Continue the stopped reply", "Ctrl+Shift+Return")
        self.compact = self._add(chat, "Co&mpact now (summarise earlier messages)")
        chat.addSeparator()
        self.chat_settings = self._add(chat, "Chat s&ettings…")
        self.rename = self._add(chat, "Re&name", "F2")
        self.delete = self._add(chat, "&Delete…", hint="Del")
        self.chat = chat  # the window brings it up to date as it opens (aboutToShow)

        help_ = bar.addMenu("&Help")
        self.shortcuts = self._add(
            help_, "&Keyboard shortcuts", QKeySequence.StandardKey.HelpContents, "F1"
        )
        self.log_folder = self._add(help_, "Open &log folder")
        help_.addSeparator()
        self.about = self._add(help_, "&About Parley")
        self.menus = (file, edit, view, chat, help_)

    def _add(self, menu: QMenu, text: str, *keys: Key, hint: str = "") -> QAction:
        """An entry of `menu`; its shortcuts work anywhere in the window. `hint`: a key the
        focused widget handles, shown only."""
        action = QAction(text + (f"\t{hint}" if hint else ""), self._window)
        found = _sequences(keys)
        if found:
            action.setShortcuts(found)
        menu.addAction(action)
        self._window.addAction(action)  # its shortcut works while the menu bar is hidden too
        return action

    def show_chat(self, open_: bool, busy: bool, last: dict[str, str]) -> None:
        """Enable what can act now: on the chat shown (`open_`: one is, not a new chat;
        `busy`: its reply is in flight), and on its last reply (`last`: its actions)."""
        for action in (self.export_chat, self.chat_settings, self.rename, self.delete):
            action.setEnabled(open_)
        self.stop.setEnabled(busy)
        self.regenerate.setEnabled("regenerate" in last)
        self.continue_.setEnabled("continue" in last)

    def show_zoom(self, can_zoom_in: bool, can_zoom_out: bool) -> None:
        self.zoom_in.setEnabled(can_zoom_in)
        self.zoom_out.setEnabled(can_zoom_out)

    def show_theme(self, name: str) -> None:
        self.themes.get(name, self.themes["system"]).setChecked(True)

    def _choose_theme(self, name: str) -> Callable[[], None]:
        return lambda: self.theme_chosen.emit(name)


def when_triggered(action: QAction, command: Callable[[], object]) -> None:
    """Run `command` when `action` is chosen (from the menu or by its key)."""
    action.triggered.connect(lambda _checked=False: command())


def _sequences(keys: tuple[Key, ...]) -> list[QKeySequence]:
    """The key sequences, the platform's standard ones first, each once (the same key twice
    on one action would make it ambiguous)."""
    found: list[QKeySequence] = []
    for key in keys:
        if isinstance(key, QKeySequence.StandardKey):
            candidates = QKeySequence.keyBindings(key)
        else:
            candidates = [QKeySequence(key)]
        for sequence in candidates:
            if not sequence.isEmpty() and sequence not in found:
                found.append(sequence)
    return found


def _copy_in_focus() -> None:
    """Edit → Copy: what is selected in the widget with the focus (Ctrl+C there does the
    same by itself)."""
    widget = QApplication.focusWidget()
    copy = getattr(widget, "copy", None)
    if callable(copy):
        copy()


def shortcut_rows(menus: Menus) -> list[tuple[str, str, str]]:
    """(menu, command, keys) for every command with a key, for the shortcuts window."""
    rows = []
    for menu in menus.menus:
        for action in menu.actions():
            text, _, hint = action.text().partition("\t")
            # The first key (a standard key's primary one: the others are media keys and
            # the like, or a second way to type the same, as Ctrl+= for Ctrl++).
            keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText) or hint
            if keys:
                label = text.replace("&", "").rstrip("…")
                rows.append((menu.title().replace("&", ""), label, keys))
    cards = approval_card.CARD_KEYS + overdue_card.CARD_KEYS + question_card.CARD_KEYS
    return rows + cards + sign_in_card.CARD_KEYS
