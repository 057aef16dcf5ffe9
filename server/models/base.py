"""The protocol every chat backend implements, and the signal that stops its real work."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from server.types import ChatMessage, Continued, FinishReason, SourceJSON, Usage

ModelState = Literal["unloaded", "loading", "ready", "error"]


@dataclass(frozen=True)
class ChatRequest:
    messages: list[ChatMessage]
    max_tokens: int | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed: int | None = None
    stop: list[str] = field(default_factory=list)
    # OpenAI `tools` (function definitions) and `tool_choice`, passed to the backend as given.
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | dict[str, Any] | None = None
    # Offered by Parley itself (a conversation's tools), not asked for by a client: a model
    # that refuses tools is asked again without them, and remembered as unable.
    tools_optional: bool = False
    # The last message is the start of a reply the model must go on with, mid-sentence (a
    # stopped reply being continued), not a finished message.
    continue_final: bool = False
    # Text in `messages` the user did not write, and where it came from (the stored chat's
    # attachments and imported messages, passages put in the prompt): the injection guard's
    # (server/agent/provenance.py). Earlier tool results are read from the messages' parts.
    sources: tuple[SourceJSON, ...] = ()


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """A piece of a tool call the model is writing (OpenAI's `delta.tool_calls[i]`): the
    call at `index` gets its id and name once, and its arguments' JSON text piece by piece."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True)
class StreamInfo:
    """Facts about the reply known before its end (prompt size, dropped history): kept in usage."""

    usage: Usage


@dataclass(frozen=True)
class StreamEnd:
    """The backend finished the reply on its own (not interrupted, not failed)."""

    finish_reason: FinishReason
    usage: Usage | None = None


StreamEvent = TextDelta | ToolCallDelta | StreamInfo | StreamEnd


class StopSignal:
    """Asks a backend's real work (a thread, an upstream socket) to stop, and learns when it has.

    `request()` may be called from any thread. The backend calls `confirm_stopped()` once its
    work has really ended (the generation thread returned, the upstream socket is closed);
    that may also happen on any thread.
    """

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._requested = threading.Event()
        self._stopped = asyncio.Event()
        self._callbacks: list[Callable[[], None]] = []

    def request(self) -> None:
        self._requested.set()

    @property
    def requested(self) -> bool:
        return self._requested.is_set()

    @property
    def stopped(self) -> bool:
        return self._stopped.is_set()

    def confirm_stopped(self) -> None:
        # RuntimeError: the loop is closed, so nobody is waiting any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(self._mark_stopped)

    def when_stopped(self, callback: Callable[[], None]) -> None:
        """Run `callback` on the loop once the work has stopped (at once if it has)."""
        if self.stopped:
            callback()
        else:
            self._callbacks.append(callback)

    async def wait_stopped(self) -> None:
        await self._stopped.wait()

    def _mark_stopped(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()


class ChatBackend(Protocol):
    """A streaming chat model.

    `stream()` is an async generator of events. Its contract:
    - it yields `TextDelta`s, then one `StreamEnd` if (and only if) the backend finished;
    - it raises `BackendError` when the backend fails, after yielding what it produced;
    - every bit of its work happens inside a `try` whose `finally` calls
      `signal.confirm_stopped()` once the real work has ended (for a thread: when the thread
      returns, which may be after the generator itself has exited);
    - when `signal` is requested, or the consuming task is cancelled, or the generator is
      closed, the real work stops promptly and no `StreamEnd` follows.
    """

    name: str
    kind: str
    slots: int  # replies it serves at once; more wait in the model's queue

    # How this backend continues a stopped reply: "prefix" (it goes on from the partial
    # reply given as the last, assistant message) or "fallback" (it cannot: it is asked to).
    continuation: Continued

    @property
    def tools_unsupported(self) -> str | None:
        """Why this model cannot call tools (its chat template has no tool calling), or
        None when it can or may (an upstream says so itself when it cannot)."""
        ...

    @property
    def images_unsupported(self) -> str | None:
        """Why this model cannot be given images, or None when it can or may (an upstream
        that cannot says so itself when asked)."""
        ...

    @property
    def state(self) -> ModelState: ...

    @property
    def state_error(self) -> str | None: ...

    def stream(
        self, request: ChatRequest, signal: StopSignal
    ) -> AsyncGenerator[StreamEvent, None]: ...

    def warm_up(self) -> None:
        """Start getting ready (e.g. load weights) in the background; returns at once."""

    async def admit(self, request: ChatRequest) -> None:
        """Refuse, before anything is written, a request this backend can never serve.

        Raises PromptTooLongError (400) for a prompt that cannot fit its context; other
        failures are left to `stream`, where they become the reply's ending."""

    @property
    def context_length(self) -> int | None:
        """The most tokens the model sees at once, prompt and reply (None: not known)."""
        ...

    async def count_tokens(self, texts: list[str]) -> tuple[list[int], bool]:
        """Each text's tokens, and whether they are estimated (no tokenizer at hand)."""
        ...

    async def aclose(self) -> None: ...
