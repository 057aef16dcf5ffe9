"""Is an OpenAI-compatible upstream there, does it take the key, which models does it serve?

One bounded `GET models`, used to check a configured upstream at start and by the Settings
dialog's "Test connection" (through `POST /api/backends/check`).
"""

from __future__ import annotations

import asyncio
import json

import anyio.to_thread
import httpx

from server.errors import BackendError
from server.limits import ModelLimits

CHECK_TIMEOUT_S = ModelLimits.upstream_check_timeout
LIST_TIME_S = ModelLimits.upstream_list_time
MAX_LIST_BYTES = ModelLimits.upstream_list_bytes


class Unreadable(Exception):
    """An answer too big, compressed (a bomb is not inflated), or not JSON."""


async def bounded_json(
    client: httpx.AsyncClient,
    method: str,
    url: str,
    *,
    seconds: float,
    max_bytes: int,
    body: object | None = None,
    headers: dict[str, str] | None = None,
    each_read: float | None = None,
) -> tuple[int, object]:
    """An upstream's answer as (status, parsed JSON) — None for a status other than 200 —
    read within `seconds` in all (not per read: an answer sent a byte at a time ends too;
    `each_read`, if given, bounds the connect and each read) and `max_bytes`, parsed off the
    event loop. It is asked uncompressed (a bomb is never inflated; one sent compressed all
    the same is Unreadable). Raises httpx.HTTPError, TimeoutError or Unreadable."""
    raw = bytearray()
    asked = {**(headers or {}), "Accept-Encoding": "identity"}
    async with asyncio.timeout(seconds):
        async with client.stream(
            method, url, json=body, headers=asked, timeout=each_read or seconds
        ) as response:
            if response.status_code != 200:
                return response.status_code, None
            encoding = response.headers.get("content-encoding", "identity").lower()
            if encoding not in ("", "identity"):
                raise Unreadable(f"a compressed answer ({encoding})")
            declared = response.headers.get("content-length", "")
            known = declared.isascii() and declared.isdigit() and len(declared) <= 18
            if known and int(declared) > max_bytes:
                raise Unreadable(f"an answer over {max_bytes:,} bytes")
            async for piece in response.aiter_raw():
                raw += piece
                if len(raw) > max_bytes:
                    raise Unreadable(f"an answer over {max_bytes:,} bytes")
    try:  # off the loop: a megabyte of JSON takes a while, and a reply may be streaming
        parsed: object = await anyio.to_thread.run_sync(json.loads, bytes(raw))
    except (ValueError, RecursionError) as exc:
        raise Unreadable("an answer that is not JSON") from exc
    return 200, parsed


def upstream_client(
    base_url: str, api_key: str | None, timeout: httpx.Timeout, *, keep_alive: bool = True
) -> httpx.AsyncClient:
    """`keep_alive=False`: a new connection per request (llama.cpp's server closes one after
    a streamed reply, and a pooled client would send the next request into it)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/") + "/",
        headers=headers,
        timeout=timeout,
        limits=httpx.Limits(max_keepalive_connections=None if keep_alive else 0),
        # Predictable on a desktop: a proxy from the environment never sees the chat.
        trust_env=False,
    )


async def list_models(client: httpx.AsyncClient) -> list[str]:
    """The names the upstream lists (empty if it has no list: it may still chat).

    Raises BackendError when it cannot be reached or refuses the key.
    """
    base = str(client.base_url)
    try:
        status, answer = await bounded_json(
            client,
            "GET",
            "models",
            seconds=LIST_TIME_S,
            max_bytes=MAX_LIST_BYTES,
            each_read=CHECK_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        raise BackendError(describe_transport_error(exc, base)) from exc
    except TimeoutError as exc:
        raise BackendError(
            f"the upstream at {base} did not list its models within {LIST_TIME_S:g} s"
        ) from exc
    except Unreadable:
        return []  # it answered: it is there, its list is not one Parley reads
    if status in (401, 403):
        raise BackendError(f"the upstream refused the API key (HTTP {status})")
    data = answer.get("data", []) if isinstance(answer, dict) else []
    if not isinstance(data, list):
        return []
    names = [
        entry["id"]
        for entry in data[: ModelLimits.upstream_models_most]
        if isinstance(entry, dict)
        and isinstance(entry.get("id"), str)
        and 0 < len(entry["id"]) <= ModelLimits.model_name_chars
    ]
    return sorted(set(names))


def describe_transport_error(exc: httpx.HTTPError, base_url: str) -> str:
    if isinstance(exc, httpx.ConnectError):
        return f"cannot reach the upstream at {base_url}: {exc}"
    if isinstance(exc, httpx.TimeoutException):
        return f"the upstream at {base_url} timed out ({type(exc).__name__})"
    return f"the upstream connection broke mid-reply: {exc or type(exc).__name__}"
