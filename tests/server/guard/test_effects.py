"""What a tool can do: its effect class from its MCP annotations (the spec's careful defaults
for a hint left out), the user's override stored beside its trust and set through the same
API, Parley's own tools classified (search_documents reads here; delegate can do what its
sub-agent's tools can)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types
import pytest

from server.agent import delegate
from server.agent.effects import READS_HERE, UNKNOWN, Effect, from_hints, overridden
from server.agent.toolbox import CombinedToolBox, ToolBox, ToolTarget
from server.library.tool import DocumentsTool, SourceNumbers
from server.tools.tool_effects import effect_of
from tests.support.parley import Parley
from tests.support.tools import tool_server, write_config
from tests.support.upstream import ScriptedUpstream


def tool(**hints: bool) -> mcp_types.Tool:
    annotations = mcp_types.ToolAnnotations(**hints) if hints else None
    return mcp_types.Tool(name="t", input_schema={"type": "object"}, annotations=annotations)


def test_a_tool_without_annotations_is_taken_as_the_spec_says_writing_destructive_and_open() -> (
    None
):
    assert effect_of(tool(), None) == Effect(read_only=False, destructive=True, open_world=True)
    assert not effect_of(tool(), None).harmless


def test_read_only_and_closed_world_annotations_make_a_harmless_tool() -> None:
    found = effect_of(tool(read_only_hint=True, open_world_hint=False), None)
    assert found == READS_HERE and found.harmless
    # Read-only alone stays open-world by default: it may still carry data out.
    assert not effect_of(tool(read_only_hint=True), None).harmless
    assert effect_of(tool(destructive_hint=False), None).destructive is False


def test_the_users_override_wins_hint_by_hint() -> None:
    claimed = tool(read_only_hint=True, open_world_hint=False)
    assert effect_of(claimed, {"readOnly": False}) == Effect(False, True, False)
    assert effect_of(tool(), {"readOnly": True, "openWorld": False}).harmless
    assert overridden(UNKNOWN, None) == UNKNOWN


def test_from_hints_ignores_destructive_for_a_read_only_tool() -> None:
    assert from_hints(True, True, False) == READS_HERE


class Box(CombinedToolBox):
    """Tools of given effects, by name."""

    def __init__(self, effects: dict[str, Effect]) -> None:
        super().__init__([])
        self._effects = effects

    def specs(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": n}} for n in self._effects]

    def target(self, function: str) -> ToolTarget | None:
        found = self._effects.get(function)
        return ToolTarget("s", function, found) if found is not None else None


def test_delegate_can_do_the_widest_of_what_its_sub_agent_may_call() -> None:
    box: ToolBox = Box({"read": READS_HERE, "fetch": Effect(True, False, True), "rm": UNKNOWN})
    assert delegate.target(box, {"task": "x", "tools": ["read"]}).effect.harmless
    fetching = delegate.target(box, {"task": "x", "tools": ["read", "fetch"]}).effect
    assert (fetching.read_only, fetching.open_world) == (True, True)
    assert delegate.target(box, {"task": "x"}).effect == UNKNOWN  # every tool of the parent
    assert delegate.target(box, ValueError("bad")).effect == UNKNOWN


def test_search_documents_reads_the_library_and_reaches_nothing_else() -> None:
    found = DocumentsTool(None, SourceNumbers()).target("search_documents")  # type: ignore[arg-type]
    assert found is not None and found.effect == READS_HERE and found.effect.harmless


# -- through the API -------------------------------------------------------------------------


@pytest.fixture
def served(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Iterator[Parley]:
    write_config(data_dir / "mcp.json", {"t": tool_server(tmp_path / "tools.log", guard=True)})
    server = Parley(data_dir, upstream.base_url).start()
    server.wait_for(lambda: server.status()["tools"]["ready"] == 1, timeout=30)
    yield server
    server.stop()


def tools_of(parley: Parley) -> dict[str, dict[str, Any]]:
    (server,) = parley.call("GET", "/api/tools").json()["servers"]
    return {each["name"]: each for each in server["tools"]}


@pytest.mark.slow
def test_each_tool_lists_its_effect_and_the_users_override_is_set_beside_its_trust(
    served: Parley, data_dir: Path
) -> None:
    listed = tools_of(served)
    assert listed["look"]["effect"] == {"readOnly": True, "destructive": False, "openWorld": True}
    assert listed["danger"]["effect"] == {"readOnly": False, "destructive": True, "openWorld": True}
    assert listed["danger"]["effect_override"] is None
    body = {"trust": "allow", "effect": {"readOnly": True, "openWorld": False}}
    answer = served.call("PUT", "/api/tools/servers/t/tools/danger", json_body=body)
    assert answer.status == 200, answer.body
    danger = tools_of(served)["danger"]
    assert danger["effect_override"] == {"readOnly": True, "openWorld": False}
    assert danger["effect"] == {"readOnly": True, "destructive": False, "openWorld": False}
    assert danger["trust"] == "allow"
    saved = (data_dir / "mcp.json").read_text(encoding="utf-8")
    assert '"toolEffect"' in saved and '"toolTrust"' in saved
    cleared = served.call("PUT", "/api/tools/servers/t/tools/danger", json_body={"effect": None})
    assert cleared.status == 200
    danger = tools_of(served)["danger"]
    assert danger["effect_override"] is None and danger["trust"] == "allow"


@pytest.mark.slow
def test_an_override_that_is_not_three_true_or_false_hints_is_refused(served: Parley) -> None:
    for effect in ({"readOnly": "yes"}, {"writes": True}, ["readOnly"]):
        answer = served.call(
            "PUT", "/api/tools/servers/t/tools/danger", json_body={"effect": effect}
        )
        assert answer.status == 400, effect
    assert tools_of(served)["danger"]["effect_override"] is None


@pytest.mark.slow
def test_the_guard_is_on_unless_a_servers_entry_turns_it_off(served: Parley) -> None:
    (server,) = served.call("GET", "/api/tools").json()["servers"]
    assert server["guard"] is True
    entry = {**server["config"], "guard": False}
    answer = served.call("PUT", "/api/tools/servers/t", json_body=entry)
    assert answer.status == 200 and answer.json()["guard"] is False
    bad = served.call("PUT", "/api/tools/servers/t", json_body={**entry, "guard": "no"})
    assert bad.status == 400
