"""Desktop errors. Each one's message is written for the person using the app."""

from __future__ import annotations


class DesktopError(Exception):
    """Base class of every error the desktop raises on purpose."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ClientError(DesktopError):
    """The server refused a request, could not be reached, or answered something this
    client cannot read. `status` and `code` are the HTTP status and the server's error
    code, when there was an answer."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.status = status
        self.code = code


class AlreadyHereError(ClientError):
    """An import that asks found chats of its file already here, and imported nothing:
    `already_here` of the file's `conversations` (desktop/chats/history_files.py asks the user)."""

    def __init__(self, message: str, already_here: int, conversations: int) -> None:
        super().__init__(message, status=409, code="already_here")
        self.already_here = already_here
        self.conversations = conversations


class ServerStartError(DesktopError):
    """The embedded server could not start (port, data directory, model, deadline)."""


class LaunchError(DesktopError):
    """The command line asks for something Parley cannot start with (a flag, a file, an
    environment variable): `parley` says so and exits 2."""


class AttachmentError(DesktopError):
    """A file the user attaches cannot be: it is too large, not a regular file, a link, or
    cannot be read (desktop/composer/attachment_files.py). Shown on its chip."""
