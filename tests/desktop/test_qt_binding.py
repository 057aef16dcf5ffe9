"""Guards against a Qt binding that corrupts the interpreter (PySide6 6.12.0 did).

PySide6 6.12.0 drops one reference to None each time Qt calls back into Python (a timer
event, a slot): on Python 3.11, where None is not immortal, a long session then dies with
"Fatal Python error: none_dealloc". qasync runs every asyncio callback that way.
"""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtCore import QObject, QTimerEvent

CALLBACKS = 2000


class _Ticker(QObject):
    def __init__(self) -> None:
        super().__init__()
        self.count = 0

    def timerEvent(self, event: QTimerEvent) -> None:
        self.count += 1
        self.killTimer(event.timerId())
        if self.count < CALLBACKS:
            self.startTimer(0)


def test_qt_callbacks_do_not_leak_references_to_none(qapp: Any, qtbot: Any) -> None:
    ticker = _Ticker()
    before = sys.getrefcount(None)
    ticker.startTimer(0)
    qtbot.waitUntil(lambda: ticker.count >= CALLBACKS, timeout=20_000)
    lost = before - sys.getrefcount(None)
    assert lost < CALLBACKS // 10, f"{lost} references to None lost in {CALLBACKS} callbacks"
