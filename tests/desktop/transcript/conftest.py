"""The transcript's surface on screen (offscreen), for its tests: a module that needs more (a
taller window, a chat shown) asks for `surface` in its own fixture of that name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from desktop.transcript.surface import TranscriptSurface


@pytest.fixture
def surface(qtbot: Any) -> Iterator[TranscriptSurface]:
    shown = TranscriptSurface()
    qtbot.addWidget(shown)
    shown.resize(900, 600)
    shown.show()
    yield shown
