"""What the window's controllers act with, and the one way they are made.

A controller is a piece of the window that asks the server for something (a dialog's life,
the list of chats, a message's actions). It is given a `Context` and reads it when it acts:
the client (None while the server is down or restarting) and the chat on screen are state
its owner sets on the context when they change (attributes down), never getters the
controller calls back; what a controller has to say goes up as its signals.
"""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from desktop.client import ParleyClient
from desktop.errors import ClientError
from desktop.tasks import Tasks


class Context:
    """The state the controllers of one owner (the window, the app) share: set by the owner
    alone, read by the controllers."""

    def __init__(self, tasks: Tasks) -> None:
        self.client: ParleyClient | None = None
        self.current_id: str | None = None  # the chat on screen (None: a new chat)
        # The project a new chat starts in (None: outside every project): the chat on
        # screen's, or the one last opened in the sidebar.
        self.project_id: str | None = None
        self.tasks = tasks  # where every request a controller makes runs

    def require_client(self) -> ParleyClient:
        """The client; a ClientError the user is shown when the server is not up yet."""
        if self.client is None:
            raise ClientError("Parley's server is still starting")
        return self.client


class Controller(QObject):
    """A controller of `parent`'s: its dialogs open over `parent`, its requests run as the
    context's tasks."""

    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(parent)
        self._context = context
        self._parent = parent
