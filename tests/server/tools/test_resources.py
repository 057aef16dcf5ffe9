"""A tool server's resources: listed (and listed again when the server says they changed),
read and attached like a file through the attachments' own checks, a result's
`resource_link` kept on its step and opened only through the server that returned it; what
a server sends is hostile input (too big, a blob that is not what it says: refused).

A real MCP server written with the official SDK over stdio (tests/support/mcp_resources.py),
driven through the real HTTP API, the scripted upstream playing the model.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from server.limits import ToolLimits
from server.settings import Limits
from tests.support.image_files import PNG
from tests.support.parley import Parley
from tests.support.resources import call_tool, resources_server, start
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow

ERAS = pytest.mark.parametrize("only_2025", [False, True], ids=["2026-07-28", "2025-11-25"])


@pytest.fixture
def log(tmp_path: Path) -> ToolLog:
    return ToolLog(tmp_path / "resources.log")


@pytest.fixture
def parley(data_dir: Path, upstream: ScriptedUpstream, log: ToolLog) -> Any:
    started = start(data_dir, upstream, {"r": resources_server(log.path)})
    yield started
    started.stop()


def read(parley: Parley, uri: str, server: str = "r") -> Any:
    return parley.call("GET", f"/api/tools/servers/{server}/resources/read?uri={quote(uri)}")


def test_a_servers_resources_and_templates_are_listed(parley: Parley) -> None:
    reply = parley.call("GET", "/api/tools/servers/r/resources")
    assert reply.status == 200, reply.body
    listing = reply.json()
    readme = next(r for r in listing["resources"] if r["uri"] == "docs://readme")
    assert readme == {
        "uri": "docs://readme",
        "name": "readme",
        "title": "Read me",
        "description": "The project's readme.",
        "mime": "text/markdown",
        "size": None,
    }
    assert {r["uri"] for r in listing["resources"]} >= {"img://dot.png", "big://huge"}
    (template,) = listing["templates"]
    assert template["uri_template"] == "notes://{name}"
    assert parley.call("GET", "/api/tools/servers/nope/resources").status == 404


def test_a_text_resource_is_read_as_its_text(parley: Parley, log: ToolLog) -> None:
    reply = read(parley, "docs://readme")
    assert reply.status == 200, reply.body
    (content,) = reply.json()["contents"]
    assert content["kind"] == "text"
    assert content["text"] == "# Readme\n\nHello from the readme. ✓"
    assert content["data"] is None
    log.wait("read", uri="docs://readme")
    (note,) = read(parley, "notes://groceries").json()["contents"]  # from the template
    assert note["text"] == "the note groceries"


def test_an_image_resource_is_read_as_its_checked_bytes(parley: Parley) -> None:
    reply = read(parley, "img://dot.png")
    assert reply.status == 200, reply.body
    (content,) = reply.json()["contents"]
    assert (content["kind"], content["mime"], content["bytes"]) == ("image", "image/png", len(PNG))
    assert base64.b64decode(content["data"]) == PNG


def test_a_texts_nul_becomes_a_replacement_character_and_it_attaches_as_text(
    parley: Parley,
) -> None:
    (content,) = read(parley, "bad://nul-text").json()["contents"]
    assert content["text"] == "before\ufffdafter"
    body = {"uri": "bad://nul-text"}
    reply = parley.call("POST", "/api/tools/servers/r/resources/attach", json_body=body)
    assert reply.status == 201, reply.body
    (attachment,) = reply.json()["attachments"]
    assert attachment["kind"] == "text"


def test_an_unknown_resource_is_a_404(parley: Parley) -> None:
    reply = read(parley, "docs://nothing-here")
    assert reply.status == 404, reply.body
    assert reply.json()["error"]["code"] == "resource_not_found"


def test_a_resource_attached_is_an_upload_the_next_message_carries(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    body = {"uri": "docs://readme", "name": "readme.md"}
    reply = parley.call("POST", "/api/tools/servers/r/resources/attach", json_body=body)
    assert reply.status == 201, reply.body
    (attachment,) = reply.json()["attachments"]
    assert (attachment["name"], attachment["kind"]) == ("readme.md", "text")
    # The same upload as POST /api/attachments makes: its bytes come back, and a message
    # carries it by id to the model.
    stored = parley.call("GET", f"/api/attachments/{attachment['id']}")
    assert stored.body.decode() == "# Readme\n\nHello from the readme. ✓"
    upstream.queue = [Script(texts=["read it"])]
    cid = parley.new_conversation()
    parley.send(cid, "summarise", attachments=[attachment["id"]]).read_all()
    sent = upstream.records[-1].body["messages"][-1]["content"]
    assert "Hello from the readme." in str(sent)


def test_an_image_resource_attached_is_an_image_attachment(parley: Parley) -> None:
    body = {"uri": "img://dot.png"}
    reply = parley.call("POST", "/api/tools/servers/r/resources/attach", json_body=body)
    assert reply.status == 201, reply.body
    (attachment,) = reply.json()["attachments"]
    assert attachment["kind"] == "image" and attachment["mime"] == "image/png"
    assert attachment["name"] == "dot.png"  # from its URI, when no name is given
    assert parley.call("GET", f"/api/attachments/{attachment['id']}").body == PNG


def test_an_oversized_resource_is_refused_with_a_clear_error(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog
) -> None:
    limits = Limits(tools=ToolLimits(resource_bytes=1_000_000))
    parley = start(
        data_dir, upstream, {"r": resources_server(log.path, "--huge-bytes", "1500000")}, limits
    )
    try:
        for reply in (
            read(parley, "big://huge"),
            parley.call(
                "POST", "/api/tools/servers/r/resources/attach", json_body={"uri": "big://huge"}
            ),
        ):
            assert reply.status == 413, reply.body
            error = reply.json()["error"]
            assert error["code"] == "resource_too_large"
            assert error["message"] == (
                "big://huge from r is larger than the 1,000,000 bytes a resource may be"
            )
        # Nothing was attached, and the server still answers.
        assert read(parley, "docs://readme").status == 200
    finally:
        parley.stop()


@pytest.mark.parametrize(
    ("uri", "said"),
    [("bad://not-a-png", "none of them"), ("bad://png-says-jpeg", "says it is image/jpeg")],
    ids=["binary-said-png", "png-said-jpeg"],
)
def test_a_blob_that_is_not_what_its_type_says_is_refused(
    parley: Parley, uri: str, said: str
) -> None:
    for reply in (
        read(parley, uri),
        parley.call("POST", "/api/tools/servers/r/resources/attach", json_body={"uri": uri}),
    ):
        assert reply.status == 400, reply.body
        error = reply.json()["error"]
        assert error["code"] == "resource_unsupported"
        assert said in error["message"], error["message"]


def test_a_resource_link_in_a_result_is_kept_on_its_step_and_opens(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    cid, reply = call_tool(parley, upstream, "r", "link", uri="docs://readme")
    (step,) = [part for part in reply["parts"] if part["type"] == "tool"]
    (link,) = step["links"]
    assert (link["uri"], link["name"], link["mime"]) == ("docs://readme", "linked", "text/markdown")
    path = f"/api/conversations/{cid}/messages/{reply['id']}/links"
    opened = parley.call("GET", f"{path}?step={quote(step['id'])}&uri={quote(link['uri'])}")
    assert opened.status == 200, opened.body
    (content,) = opened.json()["contents"]
    assert content["text"] == "# Readme\n\nHello from the readme. ✓"


def test_a_resource_link_opens_only_through_the_server_that_returned_it(
    data_dir: Path, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    """Server "a" links to a URI only server "b" serves: opening it asks "a" (which knows no
    such resource), never "b"; a URI the step's result did not give is refused unasked."""
    a_log, b_log = ToolLog(tmp_path / "a.log"), ToolLog(tmp_path / "b.log")
    servers = {"a": resources_server(a_log.path), "b": resources_server(b_log.path, "--private")}
    parley = start(data_dir, upstream, servers)
    try:
        assert read(parley, "private://secret", server="b").status == 200  # "b" serves it
        b_reads = len(b_log.events())
        cid, message = call_tool(parley, upstream, "a", "link", uri="private://secret")
        (step,) = [part for part in message["parts"] if part["type"] == "tool"]
        assert step["server"] == "a" and step["links"][0]["uri"] == "private://secret"
        path = f"/api/conversations/{cid}/messages/{message['id']}/links?step={step['id']}"
        opened = parley.call("GET", f"{path}&uri={quote('private://secret')}")
        assert opened.status == 404, opened.body
        assert opened.json()["error"]["code"] == "resource_not_found"
        assert "a could not read private://secret" in opened.json()["error"]["message"]
        # A URI the result did not link to: refused before any server is asked.
        a_reads = len(a_log.events())
        other = parley.call("GET", f"{path}&uri={quote('docs://readme')}")
        assert other.status == 404, other.body
        assert other.json()["error"]["code"] == "link_not_found"
        unknown_step = parley.call("GET", f"{path}x&uri={quote('private://secret')}")
        assert unknown_step.status == 404, unknown_step.body
        assert len(a_log.events()) == a_reads
        assert len(b_log.events()) == b_reads  # "b" was never asked
    finally:
        parley.stop()


@ERAS
def test_the_resource_list_is_listed_again_when_the_server_says_it_changed(
    data_dir: Path, upstream: ScriptedUpstream, log: ToolLog, only_2025: bool
) -> None:
    parley = start(data_dir, upstream, {"r": resources_server(log.path, only_2025=only_2025)})

    def uris() -> set[str]:
        reply = parley.call("GET", "/api/tools/servers/r/resources")
        assert reply.status == 200, reply.body
        return {resource["uri"] for resource in reply.json()["resources"]}

    try:
        assert "added://fresh" not in uris()  # listed, and held until the server says
        call_tool(parley, upstream, "r", "add_resource", name="fresh")
        parley.wait_for(lambda: "added://fresh" in uris(), timeout=10)
    finally:
        parley.stop()
