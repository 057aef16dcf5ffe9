"""The Qt Quick transcript (desktop/transcript/): opening a long chat, scrolling it, a reply
streaming into it, and its memory. Offscreen, software renderer, this process alone.

    python -m bench.quick_transcript [MESSAGES] [TOKENS]

1. open: `TranscriptRows.show` of MESSAGES messages (default 100,000; Markdown replies of a
   few paragraphs, a code block in every fifth) and the first frame drawn. Goal <= 300 ms.
2. scroll: 400 frames of 150 px from the top, then 100 jumps to random messages; the time
   each frame takes (model, layout of new rows, render). Goal p95 <= 16 ms.
3. stream: a reply of TOKENS tokens (default 2,000) grown a token at a time, each update
   drawn: its cost early (first 10 %) and late (last 10 %). Goal: flat, <= 16 ms. Then one
   endless paragraph of TOKENS words, its finished lines cut off as it grows, and the same
   never cut (what it cost before), to compare.
4. memory: the process's resident memory before the chat was opened and after all of it.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_QUICK_BACKEND", "software")

from PySide6.QtWidgets import QApplication

from desktop.transcript.rows import Row
from desktop.transcript.view import QuickTranscript

PARAGRAPH = (
    "A reply of the usual kind, with **bold** words, `inline code` and a [link](https://e.org). "
    "It goes on for a few lines, as answers do, so that its row wraps at the column's width."
)
CODE = "```python\nfor line in open('notes.txt'):\n    print(line.rstrip())\n```"


def message(i: int) -> dict[str, Any]:
    user = i % 2 == 0
    body = f"Question {i}: how do I do this?" if user else f"{PARAGRAPH}\n\n{PARAGRAPH}"
    if not user and i % 5 == 1:
        body += "\n\n" + CODE
    return {
        "id": f"m{i}", "conversation_id": "c", "role": "user" if user else "assistant",
        "content": body, "parts": [], "status": "completed", "ended_by": None, "error": None,
        "model": None if user else "SmolLM2-135M-Instruct", "created_at": 0.0,
        "completed_at": 0.0, "usage": None, "parent_id": None, "continued": None,
        "finish_reason": None,
    }  # fmt: skip


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def frame(app: QApplication, view: QuickTranscript) -> float:
    """Seconds to bring the view up to date and draw it."""
    began = time.perf_counter()
    app.processEvents()
    view.grabFramebuffer()
    return time.perf_counter() - began


def summary(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[int(len(ms) * 0.95) - 1]
    print(
        f"{label}: p50 {statistics.median(ms):.1f} ms, p95 {p95:.1f} ms, "
        f"max {ms[-1]:.1f} ms ({len(ms)} frames)"
    )


def main(messages: int, tokens: int) -> None:
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    view = QuickTranscript()
    view.resize(1000, 800)
    view.show()
    frame(app, view)
    before = rss_mb()
    stored = [message(i) for i in range(messages)]

    began = time.perf_counter()
    view.rows.show(stored)
    view.list.positionViewAtBeginning()  # type: ignore[attr-defined]
    frame(app, view)
    opened = time.perf_counter() - began
    print(f"open {messages:,} messages: {opened * 1000:.0f} ms to the first frame (goal 300)")

    scrolled = []
    for _ in range(400):
        view.list.setProperty("contentY", float(view.list.property("contentY")) + 150)
        scrolled.append(frame(app, view))
    summary("scroll 150 px a frame", scrolled)
    rng = random.Random(1)
    jumps = []
    for _ in range(100):
        view.list.positionViewAtIndex(rng.randrange(messages), 0)  # type: ignore[attr-defined]
        jumps.append(frame(app, view))
    summary("jump to a random message", jumps)
    view.follow()
    frame(app, view)
    print(f"memory: {before:.0f} MB before the chat, {rss_mb():.0f} MB after it all")

    view.rows.append(Row(id="live", role="assistant", text="", header="m", streaming=True))
    text = ""
    costs = []
    for i in range(tokens):
        text += f"word{i} " if i % 40 else f"\n\nParagraph {i // 40}. "
        began = time.perf_counter()
        view.rows.grow("live", [text])
        frame(app, view)
        costs.append(time.perf_counter() - began)
    tenth = max(1, tokens // 10)
    summary(f"stream, first {tenth} tokens", costs[:tenth])
    summary(f"stream, last {tenth} tokens ({len(text):,} characters)", costs[-tenth:])
    # One endless paragraph (no blank line: a small model's habit), its finished lines cut
    # off as it grows (transcript/sealing.py); then the same with no cut, to compare.
    for label, cut in (("one paragraph", True), ("one paragraph, never cut", False)):
        row_id = f"endless-{cut}"
        view.rows.append(Row(id=row_id, role="assistant", text="", header="m", streaming=True))
        view.follow()
        frame(app, view)
        width = view.rows.sealer.width
        if not cut:
            view.rows.sealer.width = 0.0  # (no measure: nothing is cut)
        text, costs = "", []
        for i in range(tokens):
            text += f"word{i} "
            began = time.perf_counter()
            view.rows.grow(row_id, [text])
            frame(app, view)
            costs.append(time.perf_counter() - began)
        view.rows.sealer.width = width
        summary(f"{label}, first {tenth} tokens", costs[:tenth])
        summary(f"{label}, last {tenth} tokens ({len(text):,} characters)", costs[-tenth:])


if __name__ == "__main__":
    main(
        int(sys.argv[1]) if len(sys.argv) > 1 else 100_000,
        int(sys.argv[2]) if len(sys.argv) > 2 else 2_000,
    )
