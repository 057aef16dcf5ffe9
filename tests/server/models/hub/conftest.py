from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hub import LocalHub


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalHub]:
    """A local hub, and HF_ENDPOINT naming it for the servers the test starts."""
    local = LocalHub().start()
    monkeypatch.setenv("HF_ENDPOINT", local.url)
    monkeypatch.setenv("HF_TOKEN", "")  # never a user's token, even to the local hub
    yield local
    local.stop()


@pytest.fixture
def gguf_dir(tmp_path: Path) -> Path:
    found = tmp_path / "hub-files"
    found.mkdir()
    return found
