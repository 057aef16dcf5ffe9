"""A save in place whose `open` found the file just before Parley swapped its new file in
(an editor descheduled inside `open`) writes into the file displaced: it is given its place
back, and Parley's change is made again over it, never deleted with the displaced file."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.tools import file_version
from server.tools.file_version import read_steady, replace_version

pytestmark = pytest.mark.skipif(file_version._swapper() is None, reason="no atomic swap here")


def test_a_save_landing_in_the_displaced_file_gets_its_place_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'{"old": 1}')
    version = read_steady(path, 1_000, 3)
    editor = path.open("r+b")  # the editor's open found the file read (not yet swapped)

    def late_save() -> None:  # its truncate and write land only now, after the swap
        editor.seek(0)
        editor.truncate()
        editor.write(b'{"old": 1, "hand": 2}')
        editor.flush()

    monkeypatch.setattr(file_version, "wait_for_late_saves", late_save)
    try:
        written = replace_version(path, version, b'{"old": 1, "parley": 3}')
    finally:
        editor.close()
    assert written is None  # not placed: the caller makes its change again, over the save
    assert path.read_bytes() == b'{"old": 1, "hand": 2}'
    assert [p.name for p in tmp_path.iterdir()] == ["mcp.json"]  # nothing left beside it


def test_with_no_late_save_the_new_file_is_placed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mcp.json"
    path.write_bytes(b'{"old": 1}')
    version = read_steady(path, 1_000, 3)
    waited: list[None] = []
    monkeypatch.setattr(file_version, "wait_for_late_saves", lambda: waited.append(None))
    assert replace_version(path, version, b'{"new": 2}') is not None
    assert path.read_bytes() == b'{"new": 2}' and waited == [None]
    assert [p.name for p in tmp_path.iterdir()] == ["mcp.json"]
