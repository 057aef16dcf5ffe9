from __future__ import annotations

import pytest

from tests.server.models.discovery.layouts import Home

CLEARED = ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME", "APPDATA")


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Home:
    """A home of its own, with OLLAMA_MODELS and HF_HOME inside it, set before any server
    starts (the places are read from the environment at each scan)."""
    made = Home(tmp_path_factory.mktemp("home"))
    for name in CLEARED:
        monkeypatch.delenv(name, raising=False)
    for name, value in made.environ().items():
        monkeypatch.setenv(name, value)
    return made
