"""The only way the desktop talks to the server: an async HTTP client over loopback.

Stop is a hang-up: `ReplyStream.aclose()` closes the HTTP response before its body ends,
which closes the socket; the server notices within milliseconds, stops the generation, saves
the partial reply and frees the model. Nothing else is needed, and nothing else is done.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

JSON = dict[str, Any]
YIELD_EVERY_LINES = 32


class ClientError(Exception):
    """The server refused a request or could not be reached. `message` is for the user."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code


@dataclass
class ReplyEvent:
    """One step of a streamed reply: new text, or the end (with what the server saved)."""

    text: str = ""
    final: JSON | None = None


@dataclass
class ReplyStream:
    """A reply being streamed. Iterate for events; `aclose()` hangs up (that is Stop)."""

    conversation_id: str
    user_message_id: str
    message_id: str
    model: str
    _response: httpx.Response
    _lines: AsyncIterator[str]
    closed: bool = field(default=False)

    async def events(self) -> AsyncIterator[ReplyEvent]:
        try:
            count = 0
            async for line in self._lines:
                count += 1
                if count % YIELD_EVERY_LINES == 0:
                    # Lines already buffered come without a suspension: on the GUI's loop a
                    # fast burst would otherwise hold it for tens of milliseconds.
                    await asyncio.sleep(0)
                if not line.startswith("data: "):
                    continue
                data = line[6:]
                if data == "[DONE]":
                    return
                chunk = json.loads(data)
                delta = chunk["choices"][0]["delta"] if chunk.get("choices") else {}
                if "parley" in chunk:
                    yield ReplyEvent(final=chunk)
                elif delta.get("content"):
                    yield ReplyEvent(text=delta["content"])
        except httpx.HTTPError as exc:
            if not self.closed:
                raise ClientError(f"the connection to the server broke: {exc}") from exc
        finally:
            await self.aclose()

    async def aclose(self) -> None:
        """Hang up. The server settles the reply (saved, marked stopped) on its own."""
        if not self.closed:
            self.closed = True
            await self._response.aclose()


class ParleyClient:
    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"},
            # Streaming reads may be silent for a long prefill: no read timeout there.
            timeout=httpx.Timeout(10.0, read=None),
            trust_env=False,  # loopback: never through a proxy
        )

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, body: JSON | None = None) -> Any:
        try:
            response = await self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach Parley's server: {exc}") from exc
        if response.status_code >= 400:
            raise _error_from(response.status_code, response.content)
        return response.json() if response.content else None

    # -- conversations ---------------------------------------------------------------------

    async def status(self) -> JSON:
        result: JSON = await self._call("GET", "/api/status")
        return result

    async def conversations(self, query: str | None = None) -> list[JSON]:
        path = "/api/conversations"
        if query:
            path += "?q=" + quote(query, safe="")
        result: list[JSON] = (await self._call("GET", path))["conversations"]
        return result

    async def create_conversation(
        self, model: str | None = None, system: str | None = None
    ) -> JSON:
        body: JSON = {}
        if model:
            body["model"] = model
        if system:
            body["system"] = system
        result: JSON = await self._call("POST", "/api/conversations", body)
        return result

    async def conversation(self, conversation_id: str) -> JSON:
        result: JSON = await self._call("GET", f"/api/conversations/{quote(conversation_id)}")
        return result

    async def rename(self, conversation_id: str, title: str) -> JSON:
        path = f"/api/conversations/{quote(conversation_id)}"
        result: JSON = await self._call("PATCH", path, {"title": title})
        return result

    async def delete(self, conversation_id: str) -> None:
        await self._call("DELETE", f"/api/conversations/{quote(conversation_id)}")

    # -- replies ---------------------------------------------------------------------------

    async def send(
        self, conversation_id: str, content: str, model: str | None = None
    ) -> ReplyStream:
        """Send a message; returns once the server has stored it and the reply has begun."""
        body: JSON = {"content": content}
        if model:
            body["model"] = model
        path = f"/api/conversations/{quote(conversation_id)}/messages"
        request = self._http.build_request("POST", path, json=body)
        try:
            response = await self._http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach Parley's server: {exc}") from exc
        if response.status_code >= 400:
            raw = await response.aread()
            await response.aclose()
            raise _error_from(response.status_code, raw)
        lines = response.aiter_lines()
        try:
            first = await _first_chunk(lines)
        except BaseException:
            await response.aclose()
            raise
        return ReplyStream(
            conversation_id=first["conversation_id"],
            user_message_id=first["user_message_id"],
            message_id=first["message_id"],
            model=first.get("model", ""),
            _response=response,
            _lines=lines,
        )


async def _first_chunk(lines: AsyncIterator[str]) -> JSON:
    async for line in lines:
        if line.startswith("data: "):
            first: JSON = json.loads(line[6:])
            return first
    raise ClientError("the server ended the reply before it began")


def _error_from(status: int, raw: bytes) -> ClientError:
    try:
        error = json.loads(raw)["error"]
        return ClientError(str(error["message"]), status=status, code=error.get("code"))
    except (ValueError, KeyError, TypeError):
        return ClientError(f"the server answered HTTP {status}", status=status)
