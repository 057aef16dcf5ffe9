"""mcp.json edited by hand while Settings writes it: a save by hand that lands between
Settings' read of the file and its write is never replaced by a copy that lacks it. The editor
is another process, as editors are, and saves both ways editors do: a new file renamed over
the old one, and the old one rewritten in place (truncated, then written)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from server.errors import ConfigChangingError, ConfigEntryError
from server.limits import ToolLimits
from server.tools.config import McpConfigFile
from tests.support.tools import write_config

TRIALS = 10
HAND_EDITS = 20  # per trial

# Each save adds one server, to the file as read again just before (an editor reloading a
# file changed on disk). It saves every 50 ms: twice as fast as the person of the finding
# (Settings writes without pause meanwhile, so nearly every save lands inside one of its
# writes), while an editor that reloads within microseconds of its own save is not one
# (file_version.py says what such a one could still see).
EDITOR = """
import json, os, sys, time
path, edits = sys.argv[1], int(sys.argv[2])
for i in range(edits):
    with open(path, encoding="utf-8") as file:
        document = json.load(file)
    document["mcpServers"][f"hand{i}"] = {"command": "true", "disabled": True}
    text = json.dumps(document, indent=4)
    if i % 2:
        with open(path, "w", encoding="utf-8") as file:  # in place: truncated, then written
            file.write(text)
    else:
        with open(path + ".editor", "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(path + ".editor", path)
    time.sleep(0.05)
"""


def race_once(path: Path) -> tuple[set[str], int, int]:
    """One trial: the hand entries missing at the end, Settings' writes and its refusals."""
    write_config(path, {"t": {"command": "true", "disabled": True}})
    config = McpConfigFile(path)
    written = refused = 0
    trusts = ("allow", "ask")
    editor = subprocess.Popen([sys.executable, "-c", EDITOR, str(path), str(HAND_EDITS)])
    try:
        while editor.poll() is None:
            try:
                config.set_tool_trust("t", "tool", trusts[written % 2])
                written += 1
            except ConfigEntryError:
                refused += 1  # a save caught half-way (the file empty): refused, not guessed
    finally:
        assert editor.wait(timeout=30) == 0
    on_disk = json.loads(path.read_text(encoding="utf-8"))["mcpServers"]
    return {f"hand{i}" for i in range(HAND_EDITS)} - set(on_disk), written, refused


@pytest.mark.slow
def test_hand_edits_made_while_settings_writes_are_never_lost(tmp_path: Path) -> None:
    lost: list[set[str]] = []
    writes = 0
    for trial in range(TRIALS):
        missing, written, _refused = race_once(tmp_path / f"trial{trial}" / "mcp.json")
        lost.append(missing)
        writes += written
    assert writes > TRIALS * 10, "Settings hardly wrote: the race was not run"
    assert all(not missing for missing in lost), f"hand entries lost per trial: {lost}"


@pytest.mark.parametrize("text", ["{}", "", "  \n", '{"servers": {}}'])
def test_a_file_without_mcp_servers_is_a_config_error_never_written_over(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(text, encoding="utf-8")
    config = McpConfigFile(path)
    assert config.error is not None and "mcpServers" in config.error
    with pytest.raises(ConfigEntryError, match="as it is on disk now"):
        config.put("x", {"command": "true"})
    assert path.read_text(encoding="utf-8") == text


def test_no_file_is_no_servers_and_the_first_change_creates_it(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    config = McpConfigFile(path)
    assert config.error is None and config.entries() == []
    config.put("x", {"command": "true"})
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "mcpServers": {"x": {"command": "true"}}
    }


def save_by_hand(path: Path, name: str) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    document["mcpServers"][name] = {"command": "true", "disabled": True}
    path.write_text(json.dumps(document), encoding="utf-8")


def test_a_save_between_the_read_and_the_write_makes_the_change_again(tmp_path: Path) -> None:
    path = write_config(tmp_path / "mcp.json", {})
    config = McpConfigFile(path)
    edits: list[int] = []

    def edit(servers: dict[str, Any]) -> bool:
        if not edits:
            save_by_hand(path, "by-hand")  # lands after Parley read the file
        edits.append(len(edits))
        servers["settings"] = {"command": "true"}
        return True

    assert config._change(edit)
    assert edits == [0, 1]
    assert set(json.loads(path.read_text())["mcpServers"]) == {"by-hand", "settings"}


def test_a_file_saved_again_at_every_attempt_is_refused_with_nothing_lost(tmp_path: Path) -> None:
    path = write_config(tmp_path / "mcp.json", {})
    config = McpConfigFile(path)
    saves: list[str] = []

    def edit(servers: dict[str, Any]) -> bool:
        saves.append(f"hand{len(saves)}")
        save_by_hand(path, saves[-1])
        servers["settings"] = {"command": "true"}
        return True

    with pytest.raises(ConfigChangingError, match="nothing in it was lost"):
        config._change(edit)
    assert len(saves) == ToolLimits.config_attempts
    assert set(json.loads(path.read_text())["mcpServers"]) == set(saves)
