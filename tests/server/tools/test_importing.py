"""Importing the MCP servers other apps are set up with (issue 43): their known files read as
hostile input, below a temporary HOME, listed with their secrets masked, and added by file
and name through the API (read again then, checked as any entry)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from server.limits import ToolLimits
from server.tools.importing import MASK, find_all, suggested_name
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream

CLAUDE = ".config/Claude/claude_desktop_config.json"
CURSOR = ".cursor/mcp.json"
CODE_MCP = ".config/Code/User/mcp.json"
CODE_SETTINGS = ".config/Code/User/settings.json"
WINDSURF = ".codeium/windsurf/mcp_config.json"
LIMITS = ToolLimits()


def write(home: Path, relative: str, content: str | bytes) -> Path:
    path = home / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def apps(home: Path) -> dict[str, dict[str, Any]]:
    found = find_all(home, LIMITS)
    return {Path(app["path"]).relative_to(home).as_posix(): dict(app) for app in found["apps"]}


def test_each_apps_servers_are_listed_in_parleys_form_with_secrets_masked(tmp_path: Path) -> None:
    claude = {
        "mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-files", "/tmp"],
                      "env": {"API_KEY": "sk-secret-1"}},
            "My notes": {"command": "notes-mcp", "someOtherKey": 1},
        },
        "globalShortcut": "Ctrl+Space",
    }  # fmt: skip
    write(tmp_path, CLAUDE, json.dumps(claude))
    web = {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer sk-secret-2"}}
    write(tmp_path, CURSOR, json.dumps({"mcpServers": {"web": web}}))
    write(
        tmp_path, CODE_MCP, json.dumps({"servers": {"gh": {"type": "stdio", "command": "gh-mcp"}}})
    )
    settings = (
        '{\n  // my settings\n  "editor.fontSize": 14,\n  /* a block */ "mcp": {'
        '"servers": {"db": {"type": "http", "url": "http://localhost:9000/mcp",},},},\n}'
    )
    write(tmp_path, CODE_SETTINGS, settings)
    write(
        tmp_path, WINDSURF, json.dumps({"mcpServers": {"remote": {"serverUrl": "https://w.io/m"}}})
    )

    found = apps(tmp_path)
    assert set(found) == {CLAUDE, CURSOR, CODE_MCP, CODE_SETTINGS, WINDSURF}
    assert found[CLAUDE]["app"] == "Claude Desktop" and found[CLAUDE]["error"] is None
    files, notes = found[CLAUDE]["servers"]
    assert files["config"] == {"command": "npx", "args": ["-y", "server-files", "/tmp"],
                               "env": {"API_KEY": MASK}}  # fmt: skip
    assert notes["name"] == "My notes" and notes["suggested_name"] == "My-notes"
    assert notes["config"] == {"command": "notes-mcp"}  # only the keys Parley runs by
    assert found[CURSOR]["servers"][0]["config"]["headers"] == {"Authorization": MASK}
    assert found[CODE_MCP]["servers"][0]["config"] == {"command": "gh-mcp"}
    assert found[CODE_SETTINGS]["servers"][0]["config"] == {"url": "http://localhost:9000/mcp"}
    assert found[WINDSURF]["servers"][0]["config"] == {"url": "https://w.io/m"}
    assert "sk-secret" not in json.dumps(find_all(tmp_path, LIMITS))


def test_nothing_installed_lists_nothing_but_where_it_looked(tmp_path: Path) -> None:
    found = find_all(tmp_path, LIMITS)
    assert found["apps"] == []
    assert str(tmp_path / CLAUDE) in found["looked_in"]


def test_a_bad_file_is_reported_and_the_others_still_listed(tmp_path: Path) -> None:
    write(tmp_path, CLAUDE, '{"mcpServers": {"x": ')
    write(tmp_path, CURSOR, b"\xff\xfe not utf-8")
    write(tmp_path, WINDSURF, "[" * 100_000 + "]" * 100_000)  # deep: RecursionError
    write(tmp_path, CODE_MCP, json.dumps({"servers": {"ok": {"command": "ok-mcp"}}}))
    found = apps(tmp_path)
    assert "not valid JSON" in found[CLAUDE]["error"]
    assert "not UTF-8" in found[CURSOR]["error"]
    assert found[WINDSURF]["error"] is not None and found[WINDSURF]["servers"] == []
    assert found[CODE_MCP]["servers"][0]["name"] == "ok"


def test_an_entry_parley_cannot_run_is_listed_with_why(tmp_path: Path) -> None:
    write(tmp_path, CURSOR, json.dumps({"mcpServers": {
        "no-command": {"args": ["x"]},
        "vars": {"command": "x", "env": {"TOKEN": "${input:token}"}},
        "list": ["not", "an", "object"],
        "nul": {"command": "a\u0000b"},
    }}))  # fmt: skip
    servers = {s["name"]: s for s in apps(tmp_path)[CURSOR]["servers"]}
    assert "'command'" in (servers["no-command"]["error"] or "")
    assert "variables" in (servers["vars"]["error"] or "")
    assert servers["vars"]["config"]["env"] == {"TOKEN": MASK}  # masked even when invalid
    assert servers["list"]["error"] == "an entry must be an object"
    assert servers["nul"]["error"] is not None


def test_links_fifos_and_big_files_are_refused_without_reading_them(tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"mcpServers": {"leak": {"command": "cat"}}}))
    (tmp_path / ".cursor").mkdir()
    (tmp_path / ".cursor" / "mcp.json").symlink_to(secret)  # the file a link
    (tmp_path / "elsewhere" / "Claude").mkdir(parents=True)
    (tmp_path / "elsewhere" / "Claude" / "claude_desktop_config.json").write_text(
        secret.read_text()
    )
    (tmp_path / ".config").mkdir()
    (tmp_path / ".config" / "Claude").symlink_to(tmp_path / "elsewhere" / "Claude")  # a folder
    os.mkfifo(tmp_path / ".config" / "fifo-target")
    (tmp_path / ".codeium" / "windsurf").mkdir(parents=True)
    os.mkfifo(tmp_path / ".codeium" / "windsurf" / "mcp_config.json")  # never blocks
    write(tmp_path, CODE_MCP, b" " * (LIMITS.import_file_bytes + 1))
    found = apps(tmp_path)
    assert "link" in found[CURSOR]["error"] and found[CURSOR]["servers"] == []
    assert "link" in found[CLAUDE]["error"]
    assert "not a regular file" in found[WINDSURF]["error"]
    assert "larger than" in found[CODE_MCP]["error"]


@pytest.mark.parametrize(
    ("name", "suggested"), [("files", "files"), ("My files!", "My-files"), ("…", "server")]
)
def test_a_name_parley_takes_is_suggested(name: str, suggested: str) -> None:
    assert suggested_name(name) == suggested


@pytest.mark.slow
def test_the_api_lists_and_adds_an_entry_read_again_from_its_file(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    claude = write(home, CLAUDE, json.dumps({"mcpServers": {"My files": {
        "command": "true", "env": {"API_KEY": "sk-secret"}, "disabled": True}}}))  # fmt: skip
    monkeypatch.setenv("HOME", str(home))
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        listed = parley.call("GET", "/api/tools/found")
        assert listed.status == 200, listed.body
        app = listed.json()["apps"][0]
        assert app["path"] == str(claude) and "sk-secret" not in listed.body.decode()
        body = {"path": str(claude), "name": "My files", "as": "files"}
        added = parley.call("POST", "/api/tools/found", json_body=body)
        assert added.status == 200, added.body
        assert added.json()["name"] == "files" and added.json()["state"] == "disabled"
        saved = json.loads((data_dir / "mcp.json").read_text())["mcpServers"]["files"]
        assert saved == {"command": "true", "env": {"API_KEY": "sk-secret"}, "disabled": True}

        other = tmp_path / "other.json"  # never a file of its own choosing
        other.write_text(claude.read_text())
        refused = parley.call("POST", "/api/tools/found", json_body={**body, "path": str(other)})
        assert refused.status == 404
        missing = parley.call("POST", "/api/tools/found", json_body={**body, "name": "nope"})
        assert missing.status == 404
        bad_name = parley.call("POST", "/api/tools/found", json_body={**body, "as": "a b"})
        assert bad_name.status == 400
        assert parley.call("POST", "/api/tools/found", json_body={"path": 1}).status == 400
    finally:
        parley.stop()
