"""What each menu entry of the main window does: one table, from the entry to the command of
the piece of the window that owns it (the window gives each piece; nothing here reaches back)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from desktop.chats.conversation_list import ConversationList
from desktop.chats.history_files import HistoryFiles
from desktop.composer.composer import Composer
from desktop.context.model_view import ModelView
from desktop.replies.actions import TurnActions
from desktop.replies.request import TurnAsked
from desktop.window.find_bar import FindBar
from desktop.window.help_windows import HelpWindows
from desktop.window.menus import Menus, when_triggered
from desktop.window.view import WindowView


@dataclass(frozen=True)
class WindowCommands:
    """The window's own commands (the rest belong to its pieces)."""

    new_chat: Callable[[], None]
    quit: Callable[[], object]
    stop: Callable[[], None]
    title: Callable[[], str | None]  # the chat shown's (an export's file name)
    asked: Callable[[], TurnAsked]  # what a turn asked for now is asked with
    chat_settings: Callable[[], None]
    settings: Callable[[], None]
    models: Callable[[], None]
    tools: Callable[[], None]
    library: Callable[[], None]


def connect_menus(
    menus: Menus,
    window: WindowCommands,
    files: HistoryFiles,
    help_: HelpWindows,
    view: WindowView,
    find: FindBar,
    composer: Composer,
    sidebar: ConversationList,
    turns: TurnActions,
    model_view: ModelView,
) -> None:
    for action, command in (
        (menus.new_chat, window.new_chat),
        (menus.import_chats, files.import_file),
        (menus.export_chat, lambda: files.export_chat(window.title())),
        (menus.export_all, files.export_all),
        (menus.quit, window.quit),
        (menus.find, find.open),
        (menus.settings, window.settings),
        (menus.models, window.models),
        (menus.tools, window.tools),
        (menus.library, window.library),
        (menus.sidebar, lambda: view.set_sidebar_shown(menus.sidebar.isChecked())),
        (menus.next_chat, lambda: view.go_to_chat(+1)),
        (menus.previous_chat, lambda: view.go_to_chat(-1)),
        (menus.search_chats, view.focus_search),
        (menus.type_message, composer.focus),
        (menus.attach, composer.attach_requested.emit),  # as its Attach button does
        (menus.zoom_in, lambda: view.zoom(+1)),
        (menus.zoom_out, lambda: view.zoom(-1)),
        (menus.zoom_reset, lambda: view.zoom(0)),
        (menus.stop, window.stop),
        (menus.regenerate, lambda: turns.act_on_last("regenerate", window.asked())),
        (menus.continue_, lambda: turns.act_on_last("continue", window.asked())),
        (menus.compact, model_view.compact_now),
        (menus.chat_settings, window.chat_settings),
        (menus.rename, sidebar.start_rename),
        (menus.delete, sidebar.ask_delete),
        (menus.shortcuts, help_.show_shortcuts),
        (menus.log_folder, help_.open_log_folder),
        (menus.about, help_.show_about),
    ):
        when_triggered(action, command)
