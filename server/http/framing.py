"""Requests whose framing is wrong or oversized are refused before anything else looks at them.

h11 (under uvicorn) accepts a request carrying both Content-Length and Transfer-Encoding
(it obeys Transfer-Encoding), and headers of any total size once they arrive in one read
(in several reads, h11 itself refuses more than `max_header_bytes` with a plain-text 400):
both are refused here, with Parley's JSON error and the connection closed (RFC 9112 §6.1),
so no route ever sees such a request.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from server.errors import ApiError, BadRequestError, HeadersTooLargeError
from server.http.error_response import ErrorResponse


class FramingMiddleware:
    def __init__(self, app: ASGIApp, *, max_header_bytes: int) -> None:
        self.app = app
        self._max_header_bytes = max_header_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            error = self._check(scope)
            if error is not None:
                await ErrorResponse(error, close=True)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _check(self, scope: Scope) -> ApiError | None:
        headers = scope["headers"]
        size = sum(len(name) + len(value) + 4 for name, value in headers)
        if size > self._max_header_bytes:
            return HeadersTooLargeError(
                f"the request's headers are larger than {self._max_header_bytes} bytes"
            )
        names = {name for name, _ in headers}
        if b"content-length" in names and b"transfer-encoding" in names:
            return BadRequestError(
                "a request may not carry both Content-Length and Transfer-Encoding",
                code="conflicting_framing",
            )
        return None
