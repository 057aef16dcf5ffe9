"""A memory file saved by hand, again and again, while Parley adds lines to it: no save is
lost. The editor is another process, as editors are, and saves both ways editors do (a new file
renamed over the old one; the old one truncated and written in place). And Parley's own
changes at once (two chats remembering together) all land."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from server.errors import MemoryChangingError
from server.limits import MemoryLimits
from server.memory import format
from server.memory.files import MemoryFile

pytestmark = pytest.mark.slow

HAND_EDITS = 30
# Each save reads the file as it is on disk and adds a line of its own (an editor reloading a
# file changed on disk), every 20 ms.
EDITOR = """
import os, sys, time
path, edits = sys.argv[1], int(sys.argv[2])
for i in range(edits):
    with open(path, encoding="utf-8") as file:
        text = file.read()
    text += f"- hand {i}\\n"
    if i % 2:
        with open(path, "w", encoding="utf-8") as file:
            file.write(text)
    else:
        with open(path + ".editor", "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(path + ".editor", path)
    time.sleep(0.02)
"""


def test_saves_by_hand_while_parley_adds_lines_are_all_kept(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, MemoryLimits())
    memory.path.parent.mkdir(parents=True)
    memory.path.write_text("# Mine\n")
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(memory.path), str(HAND_EDITS)])
    added = refused = 0

    async def add_while_the_editor_saves() -> None:
        nonlocal added, refused
        while editor.poll() is None:
            line = format.entry(f"parley {added}", "c" * 32, 500)
            try:
                await memory.change(lambda text, line=line: format.with_line(text, line))  # type: ignore[misc]
                added += 1
            except MemoryChangingError:
                refused += 1

    try:
        anyio.run(add_while_the_editor_saves)
    finally:
        editor.wait(timeout=30)
    assert editor.returncode == 0
    text = memory.path.read_text()
    missing = [i for i in range(HAND_EDITS) if f"- hand {i}\n" not in text]
    assert missing == [], f"hand saves lost: {missing}"
    assert added > 0


def test_changes_made_at_once_all_land(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, "p1", MemoryLimits())

    async def main() -> None:
        async with anyio.create_task_group() as group:
            for n in range(12):
                line = format.entry(f"fact {n}", "c" * 32, 500)
                group.start_soon(
                    memory.change, lambda text, line=line: format.with_line(text, line)
                )

    anyio.run(main)
    said = {line.text for line in format.lines(memory.path.read_text())}
    assert said == {f"fact {n}" for n in range(12)}
