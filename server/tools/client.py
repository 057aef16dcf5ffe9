"""How Parley opens its client to one MCP server: the SDK's `Client` over Parley's transport.

The SDK negotiates the protocol (`mode="auto"`): it probes `server/discover` at 2026-07-28
and adopts it where the server answers so, and falls back to the `initialize` handshake
(2025-11-25) on any other answer. Parley names itself in that handshake, and on every
2026-07-28 request, rather than the SDK's default name.

The response cache stays off: Parley holds a server's tools itself and lists them again only
when the server says they changed (server/tools/mcp_server.py).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
from collections.abc import AsyncIterator

import httpx2
import mcp_types
from mcp import Client
from mcp.client import Transport
from mcp.client._transport import TransportStreams
from mcp.client.session import ElicitationFnT, MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client

HTTP_TIMEOUT = httpx2.Timeout(30.0, read=300.0)


def client_info() -> mcp_types.Implementation:
    """Parley as servers see it (`clientInfo`): its name and installed version."""
    try:
        version = importlib.metadata.version("parley")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree never installed
        version = "unknown"
    return mcp_types.Implementation(name="parley", title="Parley", version=version)


def mcp_client(
    transport: Transport, on_message: MessageHandlerFnT, on_question: ElicitationFnT
) -> Client:
    """The client to enter (`async with`): entering it negotiates the protocol.

    With `on_question` the SDK declares elicitation (form and URL) to the server, in the
    `initialize` handshake (2025-11-25) and on every request (2026-07-28), and hands it each
    question: one the server sends as a request of its own (2025-11-25), or one a call's
    result asks for, when the SDK answers by calling again (2026-07-28)."""
    return Client(
        transport,
        mode="auto",
        client_info=client_info(),
        message_handler=on_message,
        elicitation_callback=on_question,
        cache=None,
    )


@contextlib.asynccontextmanager
async def opened(streams: TransportStreams) -> AsyncIterator[TransportStreams]:
    """Streams Parley opened itself (its stdio transport) as the SDK's `Transport`: Parley,
    not the client, closes them."""
    yield streams


def http_client(headers: dict[str, str]) -> httpx2.AsyncClient:
    """The HTTP client of a server that asks for no sign-in."""
    return httpx2.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT)


@contextlib.asynccontextmanager
async def http_transport(url: str, http: httpx2.AsyncClient) -> AsyncIterator[TransportStreams]:
    """Streamable HTTP to `url` through `http` (closed on the way out: see `http_client`;
    a server's sign-in gives its own, server/tools/sign_in.py). Leaving it ends the server's
    session: the SDK sends a DELETE with its `Mcp-Session-Id` on the way out (2025-11-25; a
    2026-07-28 server keeps none) — unless the way out is cancelled, which is why a stop lets
    a ready server leave uncancelled (server/tools/mcp_server.py)."""
    async with http, streamable_http_client(url, http_client=http, terminate_on_close=True) as s:
        yield s
