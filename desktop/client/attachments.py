"""Files attached to a message, for the window: an upload as soon as a file is
attached (the server answers what it made of it, or why it refuses it), and a file's bytes
read back (a thumbnail, a file saved or shown). Composed into ParleyClient as
`client.attachments`; calls go through its one HTTP client. A message sent names them by id
(`ParleyClient.send`'s `attachments`)."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from desktop.client.answers import error_from, shaped
from desktop.client.paths import segment
from desktop.errors import ClientError
from server.types import AttachmentJSON
from server.types.keys import required_keys

ATTACHMENT_KEYS = required_keys(AttachmentJSON)
MAX_BYTES = 20 * 1024 * 1024  # the most the server takes (images: 10 MB), and reads back
# An upload of 20 MB on a slow disk or a busy server: more than the client's 10 s default.
UPLOAD_TIMEOUT = httpx.Timeout(120.0)


class AttachmentsApi:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self._http = http

    async def upload(self, name: str, data: bytes, mime: str | None = None) -> AttachmentJSON:
        """Store `data` as the file `name`; what the server made of it. ClientError with the
        server's reason (its code: attachment_unsupported, attachment_too_large,
        attachment_unreadable) when it refuses it."""
        headers = {"Content-Type": mime or "application/octet-stream"}
        path = "/api/attachments?name=" + quote(name, safe="")
        try:
            response = await self._http.post(
                path, content=data, headers=headers, timeout=UPLOAD_TIMEOUT
            )
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach Parley's server: {exc}") from exc
        if response.status_code >= 400:
            raise error_from(response.status_code, response.content)
        try:
            answer: object = response.json()
        except ValueError as exc:
            raise ClientError("the server's answer was not JSON") from exc
        return shaped(AttachmentJSON, ATTACHMENT_KEYS, answer)

    async def content(self, attachment_id: str) -> bytes:
        """The file as stored (at most MAX_BYTES: a bigger answer is refused, not read)."""
        path = f"/api/attachments/{segment(attachment_id)}"
        data = bytearray()
        try:
            async with self._http.stream("GET", path) as response:
                if response.status_code >= 400:
                    raise error_from(response.status_code, await response.aread())
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > MAX_BYTES:
                        raise ClientError("the attachment the server sent is too large")
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach Parley's server: {exc}") from exc
        return bytes(data)
