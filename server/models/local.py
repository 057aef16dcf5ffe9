"""A GGUF model run in-process by llama.cpp (llama-cpp-python), generating in a worker thread.

Stopping is real, not an asyncio wrapper: the worker checks the run's stop flag after every
token and stops pulling tokens, and while the prompt is being evaluated (prefill, seconds on
a long history) llama.cpp's abort callback reads the same flag and aborts `llama_decode`
within milliseconds. The worker confirms the stop only once it has returned, and the run
keeps the model leased until then (one `Llama` is not thread-safe).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from server.errors import BackendError, BundledModelMissingError, PromptTooLongError
from server.models import native_log
from server.models.base import (
    ChatRequest,
    ModelState,
    StopSignal,
    StreamEnd,
    StreamEvent,
    StreamInfo,
    TextDelta,
)
from server.models.bundled import BUNDLED_MODEL_NAME, bundled_gguf
from server.models.context import MESSAGE_OVERHEAD, fit_to_context
from server.settings import LocalSettings
from server.types import ChatMessage, FinishReason, Usage

log = logging.getLogger(__name__)

# Room kept for the reply when fitting the history, unless max_tokens asks for less.
DEFAULT_REPLY_RESERVE = 512
SAFETY_MARGIN = 32
_LOAD_LOCK = threading.Lock()


@dataclass
class GenerationStats:
    """What one generation did, in the worker's own clock (time.perf_counter)."""

    started: float
    prefill_started: float | None = None
    token_times: list[float] = field(default_factory=list)
    stop_requested_at: float | None = None
    prefill_aborted: bool = False
    returned_at: float | None = None


class _Done:
    pass


_DONE = _Done()


class LocalBackend:
    kind = "local"

    def __init__(self, settings: LocalSettings) -> None:
        self.settings = settings
        self.path, self.name, self._error = _model_file(settings)
        self._llm: Any = None
        self._state: ModelState = "unloaded" if self.path is not None else "error"
        self._current: StopSignal | None = None
        self._abort_cb: Any = None
        self._no_abort_cb: Any = None
        self.generations: deque[GenerationStats] = deque(maxlen=64)

    @property
    def state(self) -> ModelState:
        return self._state

    @property
    def state_error(self) -> str | None:
        return self._error

    # -- loading --------------------------------------------------------------------------

    def warm_up(self) -> None:
        if self._state == "unloaded":
            threading.Thread(target=self._load_quietly, name="parley-load", daemon=True).start()

    def _load_quietly(self) -> None:
        with contextlib.suppress(BackendError):
            self._load()

    def _load(self) -> None:
        """Load the weights (idempotent, thread-safe). Raises BackendError."""
        with _LOAD_LOCK:
            if self._llm is not None:
                return
            if self.path is None:
                raise BackendError(self._error or "no model file")
            self._state = "loading"
            try:
                self._llm = _open_llama(self.path, self.settings)
                self._install_abort_callback()
            except Exception as exc:
                self._state = "error"
                self._error = f"cannot load {self.path.name}: {exc}"
                log.error("%s", self._error)
                raise BackendError(self._error) from exc
            self._state = "ready"
            self._error = None

    def _install_abort_callback(self) -> None:
        import llama_cpp

        def should_abort(_data: object) -> bool:
            current = self._current
            return current is not None and current.requested

        # Keep references: llama.cpp holds only the raw function pointer.
        self._abort_cb = llama_cpp.ggml_abort_callback(should_abort)
        self._no_abort_cb = llama_cpp.ggml_abort_callback(0)

    def _set_abort_callback(self, enabled: bool) -> None:
        import llama_cpp

        callback = self._abort_cb if enabled else self._no_abort_cb
        # `_ctx` is private to llama-cpp-python; the version is pinned and a test covers it.
        llama_cpp.llama_set_abort_callback(self._llm._ctx.ctx, callback, ctypes.c_void_p(0))

    # -- generation -----------------------------------------------------------------------

    async def admit(self, request: ChatRequest) -> None:
        """Raises PromptTooLongError if the prompt cannot fit even with the history dropped.

        Loads the model first if needed (the reply would wait for it anyway); a model that
        cannot load is left to `stream`, whose error becomes the reply's ending."""
        if self._llm is None:
            try:
                await asyncio.to_thread(self._load)
            except BackendError:
                return
        kept = request.messages[-1:]
        if len(request.messages) > 1 and request.messages[0]["role"] == "system":
            kept = [request.messages[0], *kept]
        most = sum(len(m["content"].encode()) + MESSAGE_OVERHEAD for m in kept)
        if most <= self._budget(request):
            return  # a token is at least a byte: it fits without counting (most messages)
        # Tokenizing reads only the vocabulary: safe beside a running generation.
        await asyncio.to_thread(self._fit, request)

    async def stream(
        self, request: ChatRequest, signal: StopSignal
    ) -> AsyncGenerator[StreamEvent, None]:
        worker: threading.Thread | None = None
        try:
            if self._llm is None:
                await asyncio.to_thread(self._load)
            loop = asyncio.get_running_loop()
            queue: asyncio.Queue[StreamEvent | BaseException | _Done] = asyncio.Queue()

            def put(item: StreamEvent | BaseException | _Done) -> None:
                with contextlib.suppress(RuntimeError):  # loop closed: nobody listens
                    loop.call_soon_threadsafe(queue.put_nowait, item)

            worker = threading.Thread(
                target=self._generate, args=(request, signal, put), name="parley-generate"
            )
            worker.start()
            while True:
                item = await queue.get()
                if isinstance(item, _Done):
                    return
                if isinstance(item, BaseException):
                    raise BackendError(str(item)) from item
                yield item
        finally:
            # Cancelled, closed or finished: the worker must stop; it confirms when it returns.
            signal.request()
            if worker is None:
                signal.confirm_stopped()

    def _generate(
        self, request: ChatRequest, signal: StopSignal, put: Callable[[Any], None]
    ) -> None:
        """The worker thread: one generation, checking the stop flag at every token."""
        stats = GenerationStats(started=time.perf_counter())
        self.generations.append(stats)
        self._current = signal
        chunks: Iterator[Any] | None = None
        try:
            messages, dropped, prompt_tokens = self._fit(request)
            info: dict[str, Any] = {"prompt_tokens": prompt_tokens}
            if dropped:
                info["context_dropped_messages"] = dropped
            put(StreamInfo(info))
            max_tokens = self.settings.n_ctx - prompt_tokens
            if request.max_tokens is not None:
                max_tokens = min(max_tokens, request.max_tokens)
            options: dict[str, Any] = {"stop": request.stop or None}
            if request.temperature is not None:
                options["temperature"] = request.temperature
            self._set_abort_callback(True)  # prefill can be aborted mid-way
            chunks = iter(
                self._llm.create_chat_completion(
                    messages=messages, stream=True, max_tokens=max(1, max_tokens), **options
                )
            )
            completion_tokens = 0
            finish: FinishReason | None = None
            first = True
            stats.prefill_started = time.perf_counter()
            for chunk in chunks:
                if first:
                    # Prefill is over: per-token checks from here; the callback would cost
                    # a Python call per graph node (~600 per token).
                    self._set_abort_callback(False)
                    first = False
                if signal.requested:
                    stats.stop_requested_at = time.perf_counter()
                    return
                choice = chunk["choices"][0]
                text = choice["delta"].get("content")
                if text:
                    stats.token_times.append(time.perf_counter())
                    completion_tokens += 1
                    put(TextDelta(text))
                if choice.get("finish_reason"):
                    finish = "length" if choice["finish_reason"] == "length" else "stop"
            if signal.requested:
                return
            usage: Usage = {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            }
            put(StreamEnd(finish or "stop", usage))
        except PromptTooLongError as exc:  # the client's error, told in the reply: no traceback
            log.warning("local generation refused: %s", exc)
            put(exc)
        except Exception as exc:
            if signal.requested:
                # llama_decode aborted by our callback, or a failure while stopping.
                stats.prefill_aborted = not stats.token_times
                stats.stop_requested_at = stats.stop_requested_at or time.perf_counter()
            else:
                log.exception("local generation failed")
                put(exc)
        finally:
            if chunks is not None and hasattr(chunks, "close"):
                with contextlib.suppress(Exception):
                    chunks.close()
            with contextlib.suppress(Exception):
                self._set_abort_callback(False)
            self._current = None
            stats.returned_at = time.perf_counter()
            put(_DONE)
            signal.confirm_stopped()

    def _fit(self, request: ChatRequest) -> tuple[list[ChatMessage], int, int]:
        return fit_to_context(request.messages, self._count_tokens, self._budget(request))

    def _budget(self, request: ChatRequest) -> int:
        """The prompt's room in the context, with room kept for the reply."""
        reserve = DEFAULT_REPLY_RESERVE
        if request.max_tokens is not None:
            reserve = min(reserve, request.max_tokens)
        return self.settings.n_ctx - reserve - SAFETY_MARGIN

    def _count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    async def aclose(self) -> None:
        # The weights are freed with the process; a running worker ends through its run.
        pass


def _model_file(settings: LocalSettings) -> tuple[Path | None, str, str | None]:
    """The GGUF to load, the model's name, and why there is none (a missing bundled model
    is reported by the model's state, not raised: the server still serves its upstreams).
    A `--gguf` path was checked where the flags became settings (server/arguments.py)."""
    if settings.gguf is not None:
        return settings.gguf, settings.gguf.stem, None
    try:
        return bundled_gguf(), BUNDLED_MODEL_NAME, None
    except BundledModelMissingError as exc:
        return None, BUNDLED_MODEL_NAME, str(exc)


def _open_llama(path: Path, settings: LocalSettings) -> Any:
    import llama_cpp
    import llama_cpp.llama_cpp as low_level

    # llama.cpp's "extra buffer types" (AMX / weight repacking) crash batched prompt
    # evaluation on these x86 VMs (segfault in llama_decode with more than one token);
    # llama-cpp-python has no flag for it, so its default model params are adjusted
    # while this model loads.
    defaults = low_level.llama_model_default_params

    def params_without_extra_buffers() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    low_level.llama_model_default_params = params_without_extra_buffers
    native_log.route_to_log(low_level, llama_cpp.llama)
    try:
        # verbose=False would make llama-cpp-python dup2 /dev/null over file descriptors 1
        # and 2 of the whole process while it loads: every thread's output (the GUI's, the
        # server's logs) silently vanishes meanwhile. llama.cpp's output goes to the log
        # instead (native_log), and the Python side's per-generation prints are turned off
        # once the model is loaded.
        llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            n_threads_batch=settings.n_threads_batch,
            verbose=True,
        )
        llama.verbose = False
        return llama
    finally:
        low_level.llama_model_default_params = defaults
