"""Is an OpenAI-compatible upstream there, does it take the key, which models does it serve?

One bounded `GET models`, used to check a configured upstream at start and by the Settings
dialog's "Test connection" (through `POST /api/backends/check`).
"""

from __future__ import annotations

import httpx

from server.errors import BackendError
from server.limits import ModelLimits

CHECK_TIMEOUT_S = ModelLimits.upstream_check_timeout
MAX_MODELS = 1000
MAX_NAME_CHARS = 200


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
    try:
        response = await client.get("models", timeout=CHECK_TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise BackendError(describe_transport_error(exc, str(client.base_url))) from exc
    if response.status_code in (401, 403):
        raise BackendError(f"the upstream refused the API key (HTTP {response.status_code})")
    if response.status_code != 200:
        return []
    try:
        data = response.json().get("data", [])
    except (ValueError, AttributeError):
        return []
    if not isinstance(data, list):
        return []
    names = [
        entry["id"]
        for entry in data[:MAX_MODELS]
        if isinstance(entry, dict)
        and isinstance(entry.get("id"), str)
        and 0 < len(entry["id"]) <= MAX_NAME_CHARS
    ]
    return sorted(set(names))


def describe_transport_error(exc: httpx.HTTPError, base_url: str) -> str:
    if isinstance(exc, httpx.ConnectError):
        return f"cannot reach the upstream at {base_url}: {exc}"
    if isinstance(exc, httpx.TimeoutException):
        return f"the upstream at {base_url} timed out ({type(exc).__name__})"
    return f"the upstream connection broke mid-reply: {exc or type(exc).__name__}"
