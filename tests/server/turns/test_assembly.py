"""A conversation's turn assembled (server/turns/assembly.py) on the app's real parts (SQLite in
a temp dir, the scripted upstream): what it refuses, it refuses before anything is written."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import anyio
import pytest

from server.app import create_app
from server.errors import BadRequestError, NotFoundError, PromptTooLongError
from server.models.base import ChatRequest
from server.models.openai_compat import OpenAICompatBackend
from server.routes.services import Services
from server.settings import Limits, Settings, UpstreamSettings
from server.storage.store import TurnStart
from server.turns.assembly import TurnRequest
from tests.support.image_files import GIF
from tests.support.upstream import Script, ScriptedUpstream

T = TypeVar("T")
MODEL = "scripted"


class GatedBackend(OpenAICompatBackend):
    """The scripted upstream, with an admission that records what it is asked and refuses it
    when told to (as the local engine refuses a prompt its context cannot hold)."""

    refusal: str | None = None

    def __init__(self, base_url: str) -> None:
        super().__init__(UpstreamSettings(base_url, MODEL), Limits())
        self.admitted: list[ChatRequest] = []

    async def admit(self, request: ChatRequest) -> None:
        self.admitted.append(request)
        if self.refusal is not None:
            raise PromptTooLongError(self.refusal)


@pytest.fixture
def backend(upstream: ScriptedUpstream) -> GatedBackend:
    return GatedBackend(upstream.base_url)


def with_app(data_dir: Path, backend: GatedBackend, body: Callable[[Services], Awaitable[T]]) -> T:
    """`body` run on the app's parts, its lifespan running (the runs' task group open)."""

    async def main() -> T:
        app = create_app(Settings(data_dir=data_dir, token="t" * 32), [backend])
        async with app.router.lifespan_context(app):
            services: Services = app.state.services
            return await body(services)

    return anyio.run(main)


async def messages(svc: Services, cid: str) -> list[dict[str, object]]:
    encoded = await svc.store.conversation_bytes(cid)
    assert encoded is not None
    found: list[dict[str, object]] = json.loads(encoded)["messages"]
    return found


def test_a_turn_opens_with_the_chats_system_prompt_admitted_and_both_messages_written(
    data_dir: Path, backend: GatedBackend, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(texts=["Hi", " there."])

    async def body(svc: Services) -> None:
        conversation = await svc.store.create_conversation("", None, "Be brief.", None)
        cid = conversation["id"]
        asked = TurnRequest(cid, TurnStart("send", "Hello?"), max_tokens=7)
        run, turn = await svc.turns.start(asked)
        # Open: both rows exist before any generation is waited for.
        assert [m["id"] for m in await messages(svc, cid)] == [
            turn.user_message_id,
            turn.message_id,
        ]
        assert run.model.name == MODEL
        (admitted,) = backend.admitted
        assert admitted.max_tokens == 7
        assert [(m["role"], m["content"]) for m in admitted.messages] == [
            ("system", "Be brief."),
            ("user", "Hello?"),
        ]
        await run.wait_done()
        assert (await messages(svc, cid))[-1]["content"] == "Hi there."

    with_app(data_dir, backend, body)


def test_an_unknown_model_is_refused_before_anything_is_written(
    data_dir: Path, backend: GatedBackend
) -> None:
    async def body(svc: Services) -> None:
        cid = (await svc.store.create_conversation("", None, None, None))["id"]
        asked = TurnRequest(cid, TurnStart("send", "Hello?"), model="no-such-model")
        with pytest.raises(NotFoundError) as refused:
            await svc.turns.start(asked)
        assert refused.value.code == "model_not_found"
        assert await messages(svc, cid) == []
        assert backend.admitted == []
        assert svc.runs.active_count == 0

    with_app(data_dir, backend, body)


def test_an_unknown_conversation_is_refused(data_dir: Path, backend: GatedBackend) -> None:
    async def body(svc: Services) -> None:
        with pytest.raises(NotFoundError):
            await svc.turns.start(TurnRequest("no-such-chat", TurnStart("send", "Hello?")))
        assert svc.runs.active_count == 0

    with_app(data_dir, backend, body)


def test_images_for_a_model_that_takes_none_are_refused_before_anything_is_written(
    data_dir: Path, backend: GatedBackend
) -> None:
    backend.images_unsupported = "this model takes no images"

    async def body(svc: Services) -> None:
        cid = (await svc.store.create_conversation("", None, None, None))["id"]
        image = await svc.attachments.upload("dot.gif", GIF)
        start = TurnStart("send", "What is this?", attachments=(image["id"],))
        with pytest.raises(BadRequestError) as refused:
            await svc.turns.start(TurnRequest(cid, start))
        assert refused.value.code == "images_not_supported"
        assert "dot.gif" in str(refused.value)
        assert await messages(svc, cid) == []
        # Refused before admission: a local engine is not started for it.
        assert backend.admitted == []
        assert svc.runs.active_count == 0

    with_app(data_dir, backend, body)


def test_a_prompt_admission_refuses_is_refused_before_anything_is_written(
    data_dir: Path, backend: GatedBackend, upstream: ScriptedUpstream
) -> None:
    backend.refusal = "the prompt does not fit the model's context"

    async def body(svc: Services) -> None:
        cid = (await svc.store.create_conversation("", None, None, None))["id"]
        with pytest.raises(PromptTooLongError):
            await svc.turns.start(TurnRequest(cid, TurnStart("send", "Hello?")))
        assert await messages(svc, cid) == []
        assert svc.runs.active_count == 0
        assert upstream.records == []  # the model was never asked

    with_app(data_dir, backend, body)
