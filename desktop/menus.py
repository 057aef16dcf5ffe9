"""The window's menu bar: every command of the window in one place, with its shortcut (the
platform's standard one where Qt knows one), enabled only when it can do something.

File, Edit, View, Chat, Help. A few keys belong to the widget with the focus (Ctrl+C copies
what is selected there, Delete deletes the chat selected in the list, Esc first closes what
it can, then stops the reply): their menu entries show the key but leave it to the widget.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QApplication, QMenu

if TYPE_CHECKING:
    from desktop.main_window import MainWindow

Key = QKeySequence.StandardKey | str
THEMES = (("system", "&System"), ("light", "&Light"), ("dark", "&Dark"))


class Menus(QObject):
    theme_chosen = Signal(str)  # "system", "light" or "dark"

    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        self._window = window
        bar = window.menuBar()
        files = window.history_files

        file = bar.addMenu("&File")
        self.new_chat = self._add(file, "&New chat", window.new_chat, QKeySequence.StandardKey.New)
        file.addSeparator()
        self.import_chats = self._add(
            file, "&Import chats…", files.import_file, QKeySequence.StandardKey.Open
        )
        self.export_chat = self._add(file, "&Export this chat…", files.export_chat, "Ctrl+E")
        self.export_all = self._add(file, "Export &every chat…", files.export_all)
        file.addSeparator()
        # Quitting mid-reply takes the path closing the window takes.
        self.quit = self._add(file, "&Quit", window.close, QKeySequence.StandardKey.Quit, "Ctrl+Q")

        edit = bar.addMenu("&Edit")
        self.copy = self._add(edit, "&Copy", _copy_in_focus, hint="Ctrl+C")
        self.find = self._add(
            edit, "&Find in chat…", window.find_bar.open, QKeySequence.StandardKey.Find
        )
        edit.addSeparator()
        self.settings = self._add(
            edit, "&Settings…", window.settings_requested.emit,
            QKeySequence.StandardKey.Preferences, "Ctrl+,",
        )  # fmt: skip
        self.models = self._add(edit, "&Models…", window.models_requested.emit)
        self.tools = self._add(edit, "MCP &servers…", window.tools_requested.emit)
        self.library = self._add(edit, "&Library…", window.library_requested.emit)

        view = bar.addMenu("&View")
        self.sidebar = self._add(
            view, "Show &sidebar", lambda: window.set_sidebar_shown(self.sidebar.isChecked()),
            "Ctrl+B",
        )  # fmt: skip
        self.sidebar.setCheckable(True)
        self.sidebar.setChecked(True)
        view.addSeparator()
        self.zoom_in = self._add(
            view, "Zoom &in", lambda: window.zoom(+1),
            QKeySequence.StandardKey.ZoomIn, "Ctrl+=", "Ctrl++",
        )  # fmt: skip
        self.zoom_out = self._add(
            view, "Zoom &out", lambda: window.zoom(-1), QKeySequence.StandardKey.ZoomOut, "Ctrl+-"
        )
        self.zoom_reset = self._add(view, "&Actual size", lambda: window.zoom(0), "Ctrl+0")
        view.addSeparator()
        themes = view.addMenu("&Theme")
        group = QActionGroup(self)
        self.themes: dict[str, QAction] = {}
        for name, label in THEMES:
            action = self._add(themes, label, self._choose_theme(name))
            action.setCheckable(True)
            group.addAction(action)
            self.themes[name] = action
        self.themes["system"].setChecked(True)

        chat = bar.addMenu("&Chat")
        self.stop = self._add(chat, "&Stop the reply", window.stop_reply, hint="Esc")
        self.regenerate = self._add(
            chat, "&Regenerate the last reply", lambda: self._last("regenerate"), "Ctrl+R"
        )
        self.continue_ = self._add(
            chat, "&Continue the stopped reply", lambda: self._last("continue"),
            "Ctrl+Shift+Return",
        )  # fmt: skip
        chat.addSeparator()
        self.chat_settings = self._add(chat, "Chat s&ettings…", window.chat_settings.open)
        self.rename = self._add(chat, "Re&name", window.sidebar.start_rename, "F2")
        self.delete = self._add(chat, "&Delete…", window.sidebar.ask_delete, hint="Del")
        chat.aboutToShow.connect(self.refresh)

        help_ = bar.addMenu("&Help")
        self.shortcuts = self._add(
            help_, "&Keyboard shortcuts", window.help.show_shortcuts,
            QKeySequence.StandardKey.HelpContents, "F1",
        )  # fmt: skip
        self.log_folder = self._add(help_, "Open &log folder", window.help.open_log_folder)
        help_.addSeparator()
        self.about = self._add(help_, "&About Parley", window.help.show_about)
        self.menus = (file, edit, view, chat, help_)

    def _add(
        self,
        menu: QMenu,
        text: str,
        slot: Callable[[], object],
        *keys: Key,
        hint: str = "",
    ) -> QAction:
        """An entry of `menu`; its shortcuts work anywhere in the window. `hint`: a key the
        focused widget handles, shown only."""
        action = QAction(text + (f"\t{hint}" if hint else ""), self._window)
        action.triggered.connect(lambda _checked=False: slot())
        found = _sequences(keys)
        if found:
            action.setShortcuts(found)
        menu.addAction(action)
        self._window.addAction(action)  # its shortcut works while the menu bar is hidden too
        return action

    def refresh(self) -> None:
        """Enable what can act now: on the chat shown, and on its last reply."""
        window = self._window
        open_ = window.current_id is not None
        busy = window.reply.busy_in(window.current_id)
        last = window.transcript.last_actions() if open_ and not busy else {}
        for action in (self.export_chat, self.chat_settings, self.rename, self.delete):
            action.setEnabled(open_)
        self.stop.setEnabled(busy)
        self.regenerate.setEnabled("regenerate" in last)
        self.continue_.setEnabled("continue" in last)

    def show_theme(self, name: str) -> None:
        self.themes.get(name, self.themes["system"]).setChecked(True)

    def _choose_theme(self, name: str) -> Callable[[], None]:
        return lambda: self.theme_chosen.emit(name)

    def _last(self, action: str) -> None:
        """Regenerate or Continue the last reply shown, as its own link does."""
        window = self._window
        if window.reply.busy_in(window.current_id):
            return
        message_id = window.transcript.last_actions().get(action)
        if message_id is not None:
            window.turn_actions.handle(action, message_id)


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
    return rows
