"""How many tokens an OpenAI-compatible upstream serves at once, asked of the upstream.

OpenAI's API does not say it, but most servers say it somewhere. Tried in order, each answer
bounded in time and bytes (`ModelLimits.upstream_context_*`) and its JSON taken as hostile
(types checked; fewer than 256 or more than 10,000,000 tokens refused):

1. `GET {base}/models`, the model's entry: `max_model_len` (vLLM), `context_length`
   (OpenRouter, Together, LM Studio...), `context_window` (Groq), `max_context_length`
   (Mistral). llama-server's `meta.n_ctx_train` is what the model was trained for, not what
   the server gives it: not used.
2. `GET {root}/props` (llama-server): `default_generation_settings.n_ctx`, one slot's context.
3. Ollama: `POST {root}/api/show`: the model's own `num_ctx` parameter if it sets one; else
   `GET {root}/api/ps`'s `context_length` while the model is loaded (what Ollama allocated);
   else Ollama's default, capped by what the model was trained for (`model_info`'s
   `<arch>.context_length`).

`root` is the base URL without its `/v1`. A value set for the backend (`--upstream-context`,
the desktop's Context column) is never asked: it wins.
"""

from __future__ import annotations

import asyncio
import logging
import time

import httpx

from server.limits import ModelLimits
from server.models.upstream_check import Unreadable, bounded_json
from server.settings import UpstreamSettings

log = logging.getLogger(__name__)

MIN_CONTEXT = UpstreamSettings.min_context
MAX_CONTEXT = UpstreamSettings.max_context
# Ollama's context when neither the model nor the request sets one: 2,048 until v0.6.7, then
# 4,096 (ollama/ollama#11189; its v0.6.7 release notes). Since v0.15.5 it depends on the
# GPU's memory: 4,096 under 24 GiB, 32,768 up to 48 GiB, 262,144 above (docs/context-length.mdx
# in ollama/ollama; open-webui/docs#1393), and OLLAMA_CONTEXT_LENGTH overrides it; none of
# that is in the API. 4,096, the smallest, errs on the side of compacting early.
OLLAMA_DEFAULT_CONTEXT = 4096
OLLAMA_GUESS = "Ollama's default"  # the source of a guess, asked again later
MODEL_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length")

JSON = object  # a parsed answer, untrusted until checked


def plausible(value: object) -> int | None:
    """A context length, or None for anything else (a bool, a float, a string, absurd)."""
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and MIN_CONTEXT <= value <= MAX_CONTEXT
    ):
        return value
    return None


def from_models(answer: JSON, model: str) -> int | None:
    """The model's entry in a `GET models` answer: the first field it has of MODEL_FIELDS."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        return None
    for entry in data[: ModelLimits.upstream_context_entries]:
        if isinstance(entry, dict) and entry.get("id") == model:
            for name in MODEL_FIELDS:
                found = plausible(entry.get(name))
                if found is not None:
                    return found
            return None
    return None


def from_props(answer: JSON) -> int | None:
    """llama-server's `/props`: a slot's context (the served one, not the trained one)."""
    settings = answer.get("default_generation_settings") if isinstance(answer, dict) else None
    return plausible(settings.get("n_ctx")) if isinstance(settings, dict) else None


def ollama_num_ctx(answer: JSON) -> int | None:
    """The `num_ctx` the model's Modelfile sets (`/api/show`'s `parameters` text)."""
    text = answer.get("parameters") if isinstance(answer, dict) else None
    if not isinstance(text, str):
        return None
    for line in text[: ModelLimits.ollama_parameters_chars].splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and _digits(parts[1], 9):
            return plausible(int(parts[1]))
    return None


def ollama_trained(answer: JSON) -> int | None:
    """What the model was trained for (`model_info["<arch>.context_length"]`)."""
    info = answer.get("model_info") if isinstance(answer, dict) else None
    if not isinstance(info, dict):
        return None
    arch = info.get("general.architecture")
    if not isinstance(arch, str) or len(arch) > 100:
        return None
    return plausible(info.get(f"{arch}.context_length"))


def from_ollama_ps(answer: JSON, model: str) -> int | None:
    """`/api/ps`: the context Ollama allocated for the model, while it is loaded."""
    models = answer.get("models") if isinstance(answer, dict) else None
    if not isinstance(models, list):
        return None
    names = {model, model if ":" in model else f"{model}:latest"}
    for entry in models[: ModelLimits.upstream_context_entries]:
        if isinstance(entry, dict) and (entry.get("name") in names or entry.get("model") in names):
            return plausible(entry.get("context_length"))
    return None


def _digits(text: str, most: int) -> bool:
    """ASCII digits only (`str.isdigit` takes "²"), at most `most` of them."""
    return 0 < len(text) <= most and text.isascii() and text.isdigit()


class ContextQuestion:
    """One ask of one upstream, through the backend's own client (its key, no proxy)."""

    def __init__(
        self, client: httpx.AsyncClient, base_url: str, model: str, limits: ModelLimits
    ) -> None:
        self._client = client
        self.base = base_url.rstrip("/")
        self.root = self.base.removesuffix("/v1")
        self.model = model
        self._limits = limits

    async def ask(self) -> tuple[int, str] | None:
        """The context and where it was said, or None when no source says it."""
        found = from_models(await self._answer("GET", f"{self.base}/models"), self.model)
        if found is not None:
            return found, "models"
        found = from_props(await self._answer("GET", f"{self.root}/props"))
        if found is not None:
            return found, "props"
        show = await self._answer("POST", f"{self.root}/api/show", {"model": self.model})
        found = ollama_num_ctx(show)
        if found is not None:
            return found, "api/show num_ctx"
        trained = ollama_trained(show)
        if trained is None:
            return None  # not Ollama, or it did not say
        found = from_ollama_ps(await self._answer("GET", f"{self.root}/api/ps"), self.model)
        if found is not None:
            return found, "api/ps"
        return min(trained, OLLAMA_DEFAULT_CONTEXT), OLLAMA_GUESS

    async def _answer(self, method: str, url: str, body: JSON | None = None) -> JSON | None:
        """The JSON answer, or None: refused, not 200, slow, too big, compressed, not JSON."""
        limits = self._limits
        try:
            _, answer = await bounded_json(
                self._client,
                method,
                url,
                seconds=limits.upstream_context_time,
                max_bytes=limits.upstream_context_bytes,
                body=body,
                headers={"Accept": "application/json"},
            )
        except (httpx.HTTPError, TimeoutError, Unreadable):
            return None
        return answer


class ContextAsker:
    """Asks once, in the background; after a failure, again no sooner than
    `upstream_context_retry`. Reading never waits for an answer: not known yet is None."""

    def __init__(self, question: ContextQuestion, retry: float) -> None:
        self._question = question
        self._retry = retry
        self.learned: int | None = None
        self._task: asyncio.Task[None] | None = None
        self._failed_at: float | None = None
        # A guess (Ollama's default, while no model is loaded to say what it allocated): used,
        # and asked again like a failure, until a source says the real figure.
        self._guessed = False

    def known(self) -> int | None:
        """What the upstream said; an ask starts when due (never asked, failed or guessed
        long ago)."""
        if self.learned is None or self._guessed:
            self.start()
        return self.learned

    def start(self) -> None:
        if self.learned is not None and not self._guessed:
            return
        if self._task is not None and not self._task.done():
            return
        if self._failed_at is not None and time.monotonic() - self._failed_at < self._retry:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # read outside the server's loop: asked at its next read there
            return
        self._task = loop.create_task(self._ask())

    async def _ask(self) -> None:
        question = self._question
        try:
            found = await question.ask()
        except Exception:  # a bug must not end as an unretrieved task error: logged, retried
            log.exception("asking %s for %s's context failed", question.base, question.model)
            found = None
        if found is None:
            self._failed_at = time.monotonic()
            log.info("%s does not say %s's context length", question.base, question.model)
            return
        self.learned, source = found
        self._guessed = source == OLLAMA_GUESS
        if self._guessed:
            self._failed_at = time.monotonic()  # asked again after the retry interval
        log.info(
            "%s serves %s with %d tokens of context (%s)",
            question.base,
            question.model,
            self.learned,
            source,
        )

    def cancel(self) -> None:
        if self._task is not None:
            self._task.cancel()
