"""Characters that `str.splitlines` takes for line ends (U+0085, U+2028, U+2029) inside a
reply: the server escapes them in its chunks, and the desktop's client splits the stream at
CR and LF only, so a reply that carries them arrives and is saved whole."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pytest

from desktop.client import ParleyClient, ReplyEnd, ReplyEvent, ReplyText
from desktop.client.event_stream import event_data
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream, ServedOnLoopback

pytestmark = pytest.mark.slow

SEPARATED = ["Line one\u2028", "then\u2029two", " and\x85three", ", a web page's words."]


def test_a_reply_with_line_separators_is_delivered_and_saved_whole(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(texts=SEPARATED)
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        conversation_id, events = asyncio.run(converse(parley))
        stored = parley.conversation(conversation_id)["messages"][-1]
    finally:
        parley.stop()
    delivered = "".join(e.text for e in events if isinstance(e, ReplyText))
    assert delivered == "".join(SEPARATED)
    end = events[-1]
    assert isinstance(end, ReplyEnd) and end.status == "completed", end
    assert (stored["status"], stored["content"]) == ("completed", "".join(SEPARATED))


def test_the_server_writes_no_raw_line_separator(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    """A reader of the stream other than Parley's own window (one that splits like
    `splitlines`) sees every chunk as one line."""
    upstream.script = Script(texts=SEPARATED)
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        conversation_id = parley.new_conversation()
        url = f"http://127.0.0.1:{parley.port}/api/conversations/{conversation_id}/messages"
        headers = {"Authorization": f"Bearer {parley.token}"}
        with httpx.Client(trust_env=False, timeout=30) as http:
            body = http.post(url, json={"content": "hi"}, headers=headers).content
    finally:
        parley.stop()
    text = body.decode()
    for separator in ("\u2028", "\u2029", "\x85"):
        assert separator not in text
    assert "\\u2028" in text and "\\u2029" in text and "\\u0085" in text


class RawStream(ServedOnLoopback):
    """Sends the given pieces of an event stream as they are, one `send` each."""

    def __init__(self, pieces: list[bytes]) -> None:
        self.pieces = pieces

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for piece in self.pieces:
            await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


def test_the_client_ends_lines_at_cr_and_lf_only() -> None:
    """Raw separators (a server that does not escape them), a CRLF split between two
    pieces, a lone CR, an event of two lines, and a last event with no blank line."""
    pieces = [
        'data: {"a": "x\u2028y\u2029z\x85w"}\r'.encode(),
        b"\n\r\ndata: 2\r\rdata: 3\ndata: 3b\n\n",
        "data: 4 é".encode()[:-1],
        "data: 4 é".encode()[-1:],
    ]

    async def read(url: str) -> list[str]:
        async with (
            httpx.AsyncClient(trust_env=False) as http,
            http.stream("GET", url) as response,
        ):
            return [data async for data in event_data(response)]

    served = RawStream(pieces).start()
    try:
        lines = asyncio.run(read(served.base_url))
    finally:
        served.stop()
    assert lines == ['{"a": "x\u2028y\u2029z\x85w"}', "2", "3\n3b", "4 é"]


async def converse(parley: Parley) -> tuple[str, list[ReplyEvent]]:
    client = ParleyClient(f"http://127.0.0.1:{parley.port}", parley.token)
    try:
        conversation = await client.create_conversation()
        stream = await client.send(conversation["id"], "read the page")
        return conversation["id"], [event async for event in stream.events()]
    finally:
        await client.aclose()
