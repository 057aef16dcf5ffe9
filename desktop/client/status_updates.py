"""The server's status as it changes (`GET /api/status/stream`): one read that stays open
instead of a request every second. The server sends the whole status at once and again at
each change; a comment line now and then says it is still there."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx

from desktop.client.answers import error_from, shaped
from desktop.client.event_stream import event_data
from desktop.errors import ClientError
from server.types import StatusJSON
from server.types.keys import required_keys

STATUS_KEYS = required_keys(StatusJSON)


async def status_updates(http: httpx.AsyncClient) -> AsyncIterator[StatusJSON]:
    """Each status the server sends, until it ends the stream or the caller stops reading
    (closing the generator hangs up). ClientError when it cannot be reached or answers
    something that is not a status."""
    try:
        async with http.stream("GET", "/api/status/stream") as response:
            if response.status_code >= 400:
                raise error_from(response.status_code, await response.aread())
            async for data in event_data(response):
                try:
                    value: object = json.loads(data)
                except ValueError as exc:
                    raise ClientError("the server's status was not JSON") from exc
                yield shaped(StatusJSON, STATUS_KEYS, value)
    except httpx.HTTPError as exc:
        raise ClientError(f"cannot reach Parley's server: {exc}") from exc
