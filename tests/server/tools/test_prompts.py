"""A tool server's prompts, the composer's slash commands: listed with their arguments
(and listed again when the server says they changed), filled in by the server with the
user's values as text for the composer and images as attachments; arguments checked before
the server is asked.

A real MCP server written with the official SDK over stdio (tests/support/mcp_resources.py),
driven through the real HTTP API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.image_files import PNG
from tests.support.parley import Parley
from tests.support.resources import call_tool, resources_server, start
from tests.support.tools import ToolLog
from tests.support.upstream import ScriptedUpstream

pytestmark = pytest.mark.slow

ERAS = pytest.mark.parametrize("only_2025", [False, True], ids=["2026-07-28", "2025-11-25"])


@pytest.fixture
def parley(data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path) -> Any:
    started = start(data_dir, upstream, {"r": resources_server(tmp_path / "log")})
    yield started
    started.stop()


def fill(parley: Parley, prompt: str, **arguments: str) -> Any:
    body = {"arguments": arguments}
    return parley.call("POST", f"/api/tools/servers/r/prompts/{prompt}", json_body=body)


def test_prompts_are_listed_with_their_arguments(parley: Parley) -> None:
    reply = parley.call("GET", "/api/tools/servers/r/prompts")
    assert reply.status == 200, reply.body
    prompts = {prompt["name"]: prompt for prompt in reply.json()["prompts"]}
    assert set(prompts) == {"review", "picture"}
    review = prompts["review"]
    assert (review["title"], review["description"]) == (
        "Review code",
        "Asks for a review of some code.",
    )
    arguments = {a["name"]: a["required"] for a in review["arguments"]}
    assert arguments == {"code": True, "language": False}
    assert parley.call("GET", "/api/tools/servers/nope/prompts").status == 404


def test_a_prompt_is_filled_in_with_the_users_values(parley: Parley) -> None:
    reply = fill(parley, "review", code="print(1)", language="Python 3")
    assert reply.status == 200, reply.body
    filled = reply.json()
    assert filled["messages"] == [
        {"role": "user", "text": "Please review this Python 3 code:\n\nprint(1)"}
    ]
    assert filled["attachments"] == [] and filled["note"] is None


def test_a_prompts_image_becomes_an_attachment(parley: Parley) -> None:
    reply = fill(parley, "picture")
    assert reply.status == 200, reply.body
    filled = reply.json()
    assert filled["messages"] == [{"role": "user", "text": "What is in this picture?"}]
    (image,) = filled["attachments"]
    assert (image["kind"], image["mime"]) == ("image", "image/png")
    assert parley.call("GET", f"/api/attachments/{image['id']}").body == PNG


@pytest.mark.parametrize(
    ("arguments", "code", "said"),
    [
        ({"language": "C"}, "missing_field", "the prompt 'review' needs 'code'"),
        ({"code": "x", "colour": "red"}, "invalid_field", "takes no argument 'colour'"),
    ],
    ids=["missing", "unknown"],
)
def test_arguments_are_checked_before_the_server_is_asked(
    parley: Parley, arguments: dict[str, str], code: str, said: str
) -> None:
    reply = fill(parley, "review", **arguments)
    assert reply.status == 400, reply.body
    error = reply.json()["error"]
    assert error["code"] == code and said in error["message"], error


def test_a_value_that_is_not_a_string_is_refused(parley: Parley) -> None:
    body = {"arguments": {"code": 42}}
    reply = parley.call("POST", "/api/tools/servers/r/prompts/review", json_body=body)
    assert reply.status == 400, reply.body
    assert reply.json()["error"]["code"] == "invalid_field"


def test_an_unknown_prompt_is_a_404(parley: Parley) -> None:
    assert fill(parley, "nothing").status == 404


@ERAS
def test_the_prompt_list_is_listed_again_when_the_server_says_it_changed(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path, only_2025: bool
) -> None:
    log = ToolLog(tmp_path / "log")
    parley = start(data_dir, upstream, {"r": resources_server(log.path, only_2025=only_2025)})

    def names() -> set[str]:
        reply = parley.call("GET", "/api/tools/servers/r/prompts")
        assert reply.status == 200, reply.body
        return {prompt["name"] for prompt in reply.json()["prompts"]}

    try:
        assert "fresh" not in names()  # listed, and held until the server says
        call_tool(parley, upstream, "r", "add_prompt", name="fresh")
        parley.wait_for(lambda: "fresh" in names(), timeout=10)
        assert fill(parley, "fresh").json()["messages"] == [
            {"role": "user", "text": "the prompt fresh"}
        ]
    finally:
        parley.stop()
