"""The body of an import, written to a file as it arrives, so it is never held in memory."""

from __future__ import annotations

from pathlib import Path

import anyio
from starlette.requests import ClientDisconnect, Request

from server.errors import (
    BadRequestError,
    PayloadTooLargeError,
    RequestTimeoutError,
    UnsupportedMediaTypeError,
)
from server.settings import Limits

FLUSH_BYTES = 1 << 20  # written to the file (off the loop) a megabyte at a time


async def spool(request: Request, limits: Limits, path: Path) -> int:
    """Write the JSON body to `path` with the checks of server/jsonbody.read_bytes (415, 413
    against `Limits.max_import_bytes`, 408); its size. The file is removed on any error."""
    max_bytes, timeout = limits.max_import_bytes, limits.body_timeout
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaTypeError(
            "send the body as JSON with 'Content-Type: application/json'"
        )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLargeError(f"the body is larger than {max_bytes} bytes")
    size = 0
    pending = bytearray()
    try:
        async with await anyio.open_file(path, "wb") as file:
            with anyio.fail_after(timeout):
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > max_bytes:
                        raise PayloadTooLargeError(f"the body is larger than {max_bytes} bytes")
                    pending += chunk
                    if len(pending) >= FLUSH_BYTES:
                        await file.write(bytes(pending))
                        pending.clear()
            await file.write(bytes(pending))
    except BaseException as exc:
        with anyio.CancelScope(shield=True):  # the file goes even when cancelled
            await anyio.Path(path).unlink(missing_ok=True)
        if isinstance(exc, TimeoutError):
            raise RequestTimeoutError(f"the body was not sent within {timeout:g} s") from exc
        if isinstance(exc, ClientDisconnect):  # nobody is left to read the answer
            raise BadRequestError("the client went away while sending", code="client_gone") from exc
        raise
    return size
