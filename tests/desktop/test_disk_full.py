"""The window while the disk is full mid-reply: it says the reply cannot be saved now (and
that quitting would lose it), takes the words back once space returns, and the reply Stop
then saves is everything that was shown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.desktop.conftest import GuiApp, run
from tests.support.small_disk import SmallDisk, mounted_small_disk
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    yield from mounted_small_disk(tmp_path)


@pytest.fixture
def data_dir(small_disk: SmallDisk) -> Path:
    return small_disk.root / "data"


def test_the_window_says_while_the_reply_cannot_be_saved(
    gui: GuiApp, small_disk: SmallDisk, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    upstream.script = Script(tokens=300, token_chars=100, rate=100, stall_after=150)
    gui.send("Tell me a long story")
    qtbot.waitUntil(lambda: "t9 " in gui.transcript_text(), timeout=10_000)
    small_disk.fill()

    banner = gui.window.banner
    qtbot.waitUntil(lambda: "cannot be saved now" in banner.text(), timeout=10_000)
    assert banner.isVisible() and "disk is full" in banner.text()
    assert "keep Parley open" in banner.text()
    qtbot.waitUntil(lambda: "t149 " in gui.transcript_text(), timeout=20_000)

    small_disk.free()
    qtbot.waitUntil(lambda: not banner.isVisible(), timeout=10_000)
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000) as finished:
        gui.window.composer.button.click()  # Stop
    client = gui.window.client
    assert client is not None
    conversation = run(qtbot, client.conversation(gui.window.current_id or ""))
    saved = next(m for m in conversation["messages"] if m["id"] == finished.args[0])
    assert saved["status"] == "interrupted"
    assert saved["content"] == upstream.script.text(150)
