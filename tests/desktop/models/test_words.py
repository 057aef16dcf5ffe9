"""What the models page says of a model's state and a download's progress, in words."""

from __future__ import annotations

from typing import Any

from desktop.models import words
from server.types import ModelJSON
from server.types.getting_models import DownloadJSON


def model(**changes: Any) -> ModelJSON:
    found: dict[str, Any] = {"name": "m", "kind": "local", "state": "unloaded", "error": None,
        "in_use": False, "slots": 1, "slots_busy": 0, "queue_length": 0, "default": False,
        "removable": True, "lifecycle": "not_loaded", "memory_bytes": None}  # fmt: skip
    found.update(changes)
    return found  # type: ignore[return-value]


def download(**changes: Any) -> DownloadJSON:
    found: dict[str, Any] = {"id": "d", "repo": "o/r", "file": "f.gguf", "revision": "c",
        "state": "downloading", "size_bytes": 98_000_000, "bytes_done": 45_000_000,
        "rate_bytes_per_s": 3_200_000.0, "seconds_left": 17.0, "error_code": None,
        "error": None, "resumable": True, "model": None, "path": "/m/f.gguf"}  # fmt: skip
    found.update(changes)
    return found  # type: ignore[return-value]


def test_a_local_models_states_in_words() -> None:
    assert words.state_words(model()) == "Not loaded"
    assert words.state_words(model(lifecycle="loading", state="loading")) == "Loading…"
    loaded = model(lifecycle="loaded", state="ready", memory_bytes=420_000_000)
    assert words.state_words(loaded) == "Loaded · 420 MB"
    busy = model(lifecycle="busy", state="ready", slots_busy=1, memory_bytes=420_000_000)
    assert words.state_words(busy) == "In use by 1 reply · 420 MB"
    two = model(lifecycle="busy", state="ready", slots=2, slots_busy=2, queue_length=1)
    assert words.state_words(two) == "In use by 2 replies · 1 waiting"
    # Between its model calls (a reply's tools, a sub-agent): busy with no slot taken.
    assert words.state_words(model(lifecycle="busy", state="ready")) == "In use by 1 reply"
    failed = model(state="error", error="the engine did not start")
    assert words.state_words(failed) == "Failed to load: the engine did not start"
    assert words.state_tone(failed) == "danger" and words.state_tone(loaded) == "success"


def test_an_upstreams_states_in_words() -> None:
    upstream = model(kind="openai_compat", lifecycle=None, removable=False)
    del upstream["lifecycle"]
    assert words.state_words({**upstream, "state": "ready"}) == "Reached"  # type: ignore[typeddict-item]
    assert words.state_words({**upstream, "state": "error", "error": "refused"}) == (  # type: ignore[typeddict-item]
        "Not reached: refused"
    )


def test_a_downloads_progress_in_words() -> None:
    assert words.progress_words(download()) == "45 MB of 98 MB · 3.2 MB/s · 17 s left"
    assert words.progress_words(download(seconds_left=3725.0)).endswith("1 h 02 min left")
    assert words.progress_words(download(state="paused")) == "45 MB of 98 MB"
    assert words.percent(download()) == 46
    done = download(state="completed", model="f")
    assert words.download_state_words(done) == "Ready: the model f"
