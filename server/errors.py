"""Parley server errors.

Every error a client can see is an `ApiError`: it carries an HTTP status, a stable
machine-readable `code` and a message a person can act on. Nothing else (and never a
traceback) reaches a response body.
"""

from __future__ import annotations


class ParleyError(Exception):
    """Base class of every error raised on purpose by the server."""


class ApiError(ParleyError):
    """An error reported to the client as `{"error": {"code", "message", "type", "param"}}`."""

    status = 500
    code = "internal_error"
    type = "server_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def to_json(self) -> dict[str, dict[str, str | None]]:
        # OpenAI's error shape, so OpenAI clients show the message.
        return {
            "error": {"code": self.code, "message": self.message, "type": self.type, "param": None}
        }


class BadRequestError(ApiError):
    """Malformed JSON, invalid UTF-8, or a field of the wrong type or value."""

    status = 400
    code = "bad_request"
    type = "invalid_request_error"


class UnauthorizedError(ApiError):
    """Missing or wrong bearer token."""

    status = 401
    code = "unauthorized"
    type = "authentication_error"


class ForbiddenError(ApiError):
    """A request whose Host or Origin is not this local server (DNS rebinding, cross-site)."""

    status = 403
    code = "forbidden"
    type = "permission_error"


class NotFoundError(ApiError):
    """An unknown route, conversation or message."""

    status = 404
    code = "not_found"
    type = "invalid_request_error"


class ConflictError(ApiError):
    """A second message while the conversation's reply is still streaming."""

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


class UnavailableError(ApiError):
    """The server cannot serve this now: shutting down, no model, storage failing."""

    status = 503
    code = "unavailable"
    type = "server_error"


class StorageError(ParleyError):
    """The database refused a read or write (locked, disk full, corrupt).

    Never answered by deleting anything: the user's data stays as it was.
    """


class BackendError(ParleyError):
    """A model backend failed: unreachable, refused the request, or broke mid-stream."""
