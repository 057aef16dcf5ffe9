"""The one renderer of an `ApiError`: a JSON response in OpenAI's error shape.

Used by the app's exception handlers, the front-door middlewares (security, framing), the
header-deadline protocol and whole completions alike, so every error a client sees has the
same body and headers.
"""

from __future__ import annotations

import http

from starlette.responses import JSONResponse

from server.errors import ApiError, UnauthorizedError


class ErrorResponse(JSONResponse):
    """`{"error": {...}}` with the error's status. `close=True` adds `connection: close`
    (framing errors and deadlines: the rest of the request cannot be trusted)."""

    def __init__(self, error: ApiError, *, close: bool = False) -> None:
        headers: dict[str, str] = {}
        if close:
            headers["connection"] = "close"
        if isinstance(error, UnauthorizedError):
            headers["www-authenticate"] = "Bearer"
        super().__init__({"error": error.body()}, status_code=error.status, headers=headers)

    def http_bytes(self) -> bytes:
        """The whole HTTP/1.1 response, for a protocol that writes to its transport itself."""
        reason = http.HTTPStatus(self.status_code).phrase
        head = [f"HTTP/1.1 {self.status_code} {reason}".encode()]
        head += [name + b": " + value for name, value in self.raw_headers]
        return b"\r\n".join(head) + b"\r\n\r\n" + self.body
