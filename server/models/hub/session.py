"""The HTTP client huggingface_hub uses in this process, bounded.

huggingface_hub's own client has no timeout at all (`timeout=None`) and reads any answer
whole; the hub is hostile input. Its client factory is process-wide: here it is replaced
once with one that has timeouts and, for API answers, a size and a wall-clock bound. Only
this package uses huggingface_hub in the server's process."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx2
from huggingface_hub import set_client_factory
from huggingface_hub.utils._http import hf_request_event_hook

from server.limits import HubLimits


class AnswerTooBigError(httpx2.TransportError):
    """The hub's answer passed HubLimits.max_answer_bytes, or took longer than
    HubLimits.answer_deadline: it is dropped, never parsed."""


class _BoundedStream(httpx2.SyncByteStream):
    def __init__(self, inner: httpx2.SyncByteStream, limits: HubLimits) -> None:
        self._inner = inner
        self._limits = limits

    def __iter__(self) -> Iterator[bytes]:
        deadline = time.monotonic() + self._limits.answer_deadline
        read = 0
        for chunk in self._inner:
            read += len(chunk)
            if read > self._limits.max_answer_bytes:
                raise AnswerTooBigError(
                    f"the hub's answer is over {self._limits.max_answer_bytes:,} bytes"
                )
            if time.monotonic() > deadline:
                raise AnswerTooBigError(
                    f"the hub's answer took over {self._limits.answer_deadline:.0f} s"
                )
            yield chunk

    def close(self) -> None:
        self._inner.close()


class _BoundedTransport(httpx2.BaseTransport):
    def __init__(self, limits: HubLimits) -> None:
        self._inner = httpx2.HTTPTransport()
        self._limits = limits

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        response = self._inner.handle_request(request)
        stream = response.stream
        if not isinstance(stream, httpx2.SyncByteStream):
            return response
        return httpx2.Response(
            status_code=response.status_code,
            headers=response.headers,
            stream=_BoundedStream(stream, self._limits),
            extensions=response.extensions,
            request=request,
        )

    def close(self) -> None:
        self._inner.close()


def _timeout(limits: HubLimits) -> httpx2.Timeout:
    return httpx2.Timeout(limits.read_timeout, connect=limits.connect_timeout)


_lock = threading.Lock()
_installed = False


def use_bounded_session(limits: HubLimits) -> None:
    """API calls (the server's process): timeouts, and answers bounded in size and time."""
    global _installed
    with _lock:
        if _installed:
            return
        set_client_factory(
            lambda: httpx2.Client(
                transport=_BoundedTransport(limits),
                event_hooks={"request": [hf_request_event_hook]},
                follow_redirects=True,
                timeout=_timeout(limits),
            )
        )
        _installed = True


def use_download_session(limits: HubLimits) -> None:
    """A download child: timeouts only (its bytes are bounded by the parent, on disk)."""
    set_client_factory(
        lambda: httpx2.Client(
            event_hooks={"request": [hf_request_event_hook]},
            follow_redirects=True,
            timeout=_timeout(limits),
        )
    )
