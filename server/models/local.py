"""A GGUF model run by llama.cpp's server engine, in a process of its own (server/models/engine.py).

The engine comes from prebuilt wheels (xllamacpp): installing Parley compiles nothing. It has
`n_parallel` slots (conversations streaming at once, continuous batching) and keeps a prompt
cache per slot and in RAM, so going back to a conversation does not evaluate its history again.

Replies are relayed from the engine's OpenAI-compatible API on loopback by the same code as
any upstream (server/models/openai_compat.py). Stopping is real: closing the stream makes the
engine cancel the task at its next write, which is the next token while generating; during
a prefill the engine is asked to report progress after every batch (`return_progress`), so a
stopped prefill ends at the next batch boundary (batches are small: `LocalSettings.n_batch`).
The history is fitted to the context here, with token counts from the engine's tokenizer.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import threading
import time
from collections import deque
from collections.abc import AsyncGenerator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol

import httpx

from server.errors import BackendError, BundledModelMissingError, ModelWontFitError
from server.limits import ModelLimits
from server.models.base import (
    ChatRequest,
    ModelState,
    StopSignal,
    StreamEvent,
    StreamInfo,
    TextDelta,
)
from server.models.bundled import BUNDLED_MODEL_NAME, bundled_gguf
from server.models.context import (
    MESSAGE_OVERHEAD,
    estimate_tokens,
    fit_to_context,
    prompt_budget,
)
from server.models.engine import Engine, EngineConfig
from server.models.generation_stats import GenerationStats
from server.models.openai_compat import OpenAICompatBackend
from server.models.tokens import TokenCounts
from server.settings import Limits, LocalSettings, UpstreamSettings
from server.types import ChatMessage, Continued

log = logging.getLogger(__name__)

# Room kept for the reply when fitting the history, unless max_tokens asks for less.
CONTROL_TIMEOUT_S = ModelLimits.engine_control_timeout


class LoadGate(Protocol):
    """What a load passes through first (server/models/residency.py): room is made for the
    engine, or the load is refused with ModelWontFitError; held until the load has ended."""

    def loading(self, backend: LocalBackend) -> AbstractAsyncContextManager[None]: ...


class LocalBackend:
    kind = "local"

    def __init__(
        self, settings: LocalSettings, limits: Limits | None = None, name: str | None = None
    ) -> None:
        """`name`: the model's, if not its file's stem (a file found in Ollama's store is
        named as Ollama names it)."""
        self.settings = settings
        self.slots = settings.n_parallel
        self.path, self.name, self._error = _model_file(settings)
        if name:
            self.name = name
        self._limits = limits or Limits()
        self._state: ModelState = "unloaded" if self.path is not None else "error"
        self.engine: Engine | None = None
        self._relay: OpenAICompatBackend | None = None
        self._control: httpx.AsyncClient | None = None
        self._loading: asyncio.Future[None] | None = None
        self._counts = TokenCounts()  # by the engine's tokenizer, remembered
        # Bumped when the engine is dropped: a load started before then is stale. The engine
        # being started, so that dropping it stops a load in flight; closed: removed or shut
        # down, never to start an engine again.
        self._lock = threading.Lock()
        self._generation = 0
        self._starting: Engine | None = None
        self._closed = False
        self.generations: deque[GenerationStats] = deque(maxlen=64)
        # From the engine once it runs: can the model's chat template call tools?
        self._template_tools: bool | None = None
        self.gate: LoadGate | None = None  # set by the registry that holds this model
        self._load_tasks: set[asyncio.Task[None]] = set()

    # The engine (llama-server) goes on from a final assistant message: a true continuation.
    continuation: Continued = "prefix"

    @property
    def template_tools(self) -> bool | None:
        """The engine's word on whether the chat template takes tools (None: not loaded)."""
        return self._template_tools

    @property
    def tools_unsupported(self) -> str | None:
        if self._template_tools is False:
            return (
                f"the model {self.name!r} cannot call tools: its chat template has no tool "
                "calling (a model made for tools, e.g. Qwen or Llama 3.1+, can)"
            )
        return None

    @property
    def images_unsupported(self) -> str:
        return (
            f"the local model {self.name!r} cannot see images: Parley's local engine runs it "
            "without a vision projector. Choose a model that takes images (e.g. a vision "
            "model on an OpenAI-compatible backend), or remove the image"
        )

    @property
    def state(self) -> ModelState:
        return self._state

    def configure(self, **changes: int) -> None:
        """Change LocalSettings fields before the engine starts (startup)."""
        self.settings = dataclasses.replace(self.settings, **changes)  # type: ignore[arg-type]
        self.slots = self.settings.n_parallel

    async def reconfigure(self, **changes: int) -> None:
        """Change LocalSettings fields: the engine stops, and starts with them on next use
        (a keep-alive alone is used as it is: the engine's own settings did not change)."""
        if set(changes) - {"keep_alive"}:
            await self._drop_engine()
        self.configure(**changes)

    @property
    def state_error(self) -> str | None:
        return self._error

    # -- loading --------------------------------------------------------------------------

    def warm_up(self) -> None:
        if self._state == "unloaded":
            self._start_loading()

    async def load(self) -> None:
        """Load the engine now, if it is not loaded. Raises BackendError (ModelWontFitError
        when there is no room for it)."""
        await self._ready()

    async def unload(self) -> None:
        """Stop the engine, the clean way (its process exits, its memory is given back);
        it loads again on next use. A load in flight is stopped too."""
        if self._state in ("ready", "loading"):
            await self._drop_engine()

    def _start_loading(self) -> asyncio.Future[None]:
        """Load the engine through the gate, then in a worker thread (a load takes a while);
        a future on this loop, done when the load has ended (a failure is in the model's
        state; a refusal for lack of memory is the future's exception too)."""
        if self._loading is not None and not self._loading.done():
            return self._loading
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        # A refusal nobody awaits (a warm-up, a request gone) is said by the model's state.
        future.add_done_callback(_retrieved)
        self._loading = future
        self._state = "loading"
        with self._lock:
            generation = self._generation
        task = loop.create_task(self._load(future, generation))
        self._load_tasks.add(task)
        task.add_done_callback(self._load_tasks.discard)
        return future

    async def _load(self, future: asyncio.Future[None], generation: int) -> None:
        gate = self.gate.loading(self) if self.gate is not None else contextlib.nullcontext()
        try:
            async with gate:
                if generation == self._generation and not self._closed:
                    await self._run_load(generation)
        except ModelWontFitError as exc:
            if generation == self._generation:
                self._state, self._error = "unloaded", str(exc)
                self._loading = None
            if not future.done():
                future.set_exception(exc)
        finally:
            if generation == self._generation and self._state == "loading":
                self._state = "unloaded"  # cancelled (the server stops): nothing was loaded
                self._loading = None
            if not future.done():
                future.set_result(None)

    def _run_load(self, generation: int) -> asyncio.Future[None]:
        """Start the engine in a worker thread: a future done when it has loaded or failed."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        config = self._engine_config()

        def load() -> None:
            starting = Engine(config)
            engine: Engine | None = starting
            error: str | None = None
            with self._lock:
                self._starting = starting
            try:
                starting.start()
            except BackendError as exc:
                engine, error = None, str(exc)
            except Exception as exc:
                engine, error = None, f"the engine could not start: {exc!r}"
            with self._lock:
                if self._starting is starting:
                    self._starting = None
                stale = generation != self._generation  # dropped or closed meanwhile
            if stale and engine is not None:
                engine.stop()  # never left running: nobody would stop it
                engine = None
            try:
                loop.call_soon_threadsafe(self._loaded, future, engine, error, generation)
            except RuntimeError:  # the loop is closed: nobody waits, and nobody stops it
                if engine is not None:
                    engine.stop()

        threading.Thread(target=load, name="parley-engine-load", daemon=True).start()
        return future

    def _engine_config(self) -> EngineConfig:
        assert self.path is not None
        return EngineConfig(
            model=str(self.path),
            alias=self.name,
            n_ctx=self.settings.n_ctx,
            n_parallel=self.settings.n_parallel,
            n_batch=self.settings.n_batch,
            n_threads=self.settings.n_threads,
            n_threads_batch=self.settings.n_threads_batch,
            n_gpu_layers=self.settings.n_gpu_layers,
        )

    def _loaded(
        self,
        future: asyncio.Future[None],
        engine: Engine | None,
        error: str | None,
        generation: int,
    ) -> None:
        # Checked again here, on the loop: the engine may have been dropped since the thread
        # looked.
        if generation != self._generation or self._closed:
            if engine is not None:
                threading.Thread(target=engine.stop, name="parley-engine-stop").start()
        elif engine is not None:
            self._install(engine)
        else:
            self._state, self._error = "error", error or "the engine failed"
            log.error("%s", self._error)
        if not future.done():
            future.set_result(None)

    def _install(self, engine: Engine) -> None:
        self.engine = engine
        self._template_tools = engine.tool_calls
        upstream = UpstreamSettings(f"{engine.url}/v1", self.name, engine.key)
        self._relay = OpenAICompatBackend(
            upstream, self._limits, extra_body={"return_progress": True}, keep_alive=False
        )
        self._control = httpx.AsyncClient(
            base_url=engine.url,
            headers={"Authorization": f"Bearer {engine.key}", "Connection": "close"},
            timeout=CONTROL_TIMEOUT_S,
            trust_env=False,
        )
        self._state, self._error = "ready", None

    async def _ready(self) -> OpenAICompatBackend:
        """The relay to a running engine: started (or restarted) if needed. Raises BackendError."""
        for _ in range(3):  # a load made stale by new settings is started again
            if self._closed:
                raise BackendError(f"the model {self.name!r} was removed")
            if self._relay is not None and self.engine is not None and not self.engine.running():
                log.error("the engine stopped unexpectedly; starting it again")
                await self._drop_engine()
            if self._relay is not None:
                return self._relay
            if self.path is None:
                raise BackendError(self._error or "no model file")
            # Shielded: a request that goes away must not cancel a load others wait for.
            # ModelWontFitError: no room for it (raised, the reason in its message).
            await asyncio.shield(self._start_loading())
            if self._state == "error":
                raise BackendError(self._error or "the engine failed")
        raise BackendError("the local engine could not be started")

    async def _drop_engine(self) -> None:
        """Stop the engine (and make any load in flight stale: it stops what it started)."""
        with self._lock:
            self._generation += 1
            starting, self._starting = self._starting, None
        relay, control, engine = self._relay, self._control, self.engine
        self._relay = self._control = self.engine = None
        self._loading = None
        self._state = "unloaded"
        self._template_tools = None
        if relay is not None:
            await relay.aclose()
        if control is not None:
            await control.aclose()
        for stopping in (engine, starting):
            if stopping is not None:
                await asyncio.to_thread(stopping.stop)

    # -- generation -----------------------------------------------------------------------

    async def admit(self, request: ChatRequest) -> None:
        """Raises PromptTooLongError if the prompt cannot fit even with the history dropped.

        Starts the engine first if needed (the reply would wait for it anyway); an engine
        that cannot start is left to `stream`, whose error becomes the reply's ending."""
        try:
            await self._ready()
        except BackendError:
            return
        kept = request.messages[-1:]
        if len(request.messages) > 1 and request.messages[0]["role"] == "system":
            kept = [request.messages[0], *kept]
        most = sum(len(m["content"].encode()) + MESSAGE_OVERHEAD for m in kept)
        if most <= self._budget(request):
            return  # a token is at least a byte: it fits without counting (most messages)
        with contextlib.suppress(BackendError):  # the engine failed: `stream` will say
            await self._fit(request)

    async def stream(
        self, request: ChatRequest, signal: StopSignal
    ) -> AsyncGenerator[StreamEvent, None]:
        # Recorded before the first await: the order of `generations` is the order the slots
        # were granted in.
        first = request.messages[0]["content"] if request.messages else ""
        last = request.messages[-1]["content"] if request.messages else ""
        stats = GenerationStats(started=time.perf_counter(), asked=last[:80], opening=first[:600])
        self.generations.append(stats)
        relayed = False
        try:
            relay = await self._ready()
            messages, dropped, prompt_tokens = await self._fit(request)
            info: dict[str, int | float] = {"prompt_tokens": prompt_tokens}
            if dropped:
                info["context_dropped_messages"] = dropped
            yield StreamInfo(info)
            room = max(1, self.settings.n_ctx - prompt_tokens)
            fitted = dataclasses.replace(
                request, messages=messages, max_tokens=min(request.max_tokens or room, room)
            )
            if signal.requested:
                return
            stats.prefill_started = time.perf_counter()
            relayed = True  # from here the relay confirms the stop when its stream is closed
            events = relay.stream(fitted, signal)
            async with contextlib.aclosing(events):
                async for event in events:
                    if isinstance(event, TextDelta):
                        stats.token_times.append(time.perf_counter())
                    yield event
        except BackendError as exc:
            raise BackendError(str(exc).replace("the upstream", "the local engine")) from exc
        except RuntimeError as exc:  # its client closed under the reply: restarted or removed
            raise BackendError(f"the local engine stopped mid-reply ({exc})") from exc
        finally:
            if signal.requested:
                stats.stop_requested_at = time.perf_counter()
            stats.returned_at = time.perf_counter()
            if not relayed:
                signal.confirm_stopped()

    def _budget(self, request: ChatRequest) -> int:
        """The prompt's room in the context, with room kept for the reply."""
        return prompt_budget(self.settings.n_ctx, request.max_tokens)

    @property
    def context_length(self) -> int | None:
        return self.settings.n_ctx

    async def count_tokens(self, texts: list[str]) -> tuple[list[int], bool]:
        """By the engine's tokenizer once it runs (it is started for a reply anyway);
        estimated before, or when it fails."""
        if self._control is not None:
            with contextlib.suppress(BackendError):
                counts = await self._count_tokens(texts)
                return [counts[text] for text in texts], False
        return [estimate_tokens(text) for text in texts], True

    async def _fit(self, request: ChatRequest) -> tuple[list[ChatMessage], int, int]:
        counts = await self._count_tokens([m["content"] for m in request.messages])
        return fit_to_context(request.messages, counts.__getitem__, self._budget(request))

    async def _count_tokens(self, texts: list[str]) -> dict[str, int]:
        if self._control is None:
            raise BackendError("the local engine is not running")
        return await self._counts.count(self._control, texts)

    async def busy_slots(self) -> int:
        """How many of the engine's slots are working now (its own account)."""
        if self._control is None:
            return 0
        response = await self._control.get("/slots")
        return sum(1 for slot in response.json() if slot.get("is_processing"))

    async def aclose(self) -> None:
        self._closed = True
        await self._drop_engine()


def _retrieved(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()  # marked as seen: asyncio need not log it at collection


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
