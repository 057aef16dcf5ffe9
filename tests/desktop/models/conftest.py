"""The models page's tests: a local Hugging Face hub (tests/support/hub.py) the embedded
server reaches through HF_ENDPOINT; nothing reaches the internet."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.hub import LocalHub


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    local = LocalHub().start()
    monkeypatch.setenv("HF_ENDPOINT", local.url)
    monkeypatch.setenv("HF_TOKEN", "")
    yield local
    local.stop()
