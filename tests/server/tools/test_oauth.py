"""Signing in to a remote MCP server with OAuth 2.1 (server/tools/sign_in.py): a 401 is a
sign-in to do, not an error; the API starts the flow and returns the authorization URL; the
browser's redirect comes back to Parley's own loopback route; the server then connects and its
tools work in a turn. Real servers: the SDK's auth pieces (tests/support/oauth_server.py), a
"browser" that is httpx following the redirects, a keyring in the test's temp dir."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import keyring
import pytest

from tests.support.oauth_keyring import FileKeyring
from tests.support.oauth_server import AuthServer, ProtectedServer
from tests.support.parley import Parley
from tests.support.tools import write_config
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def ring(tmp_path: Path) -> Iterator[FileKeyring]:
    previous = keyring.get_keyring()
    found = FileKeyring(tmp_path / "keyring.json")
    keyring.set_keyring(found)
    yield found
    keyring.set_keyring(previous)


@pytest.fixture
def auth() -> Iterator[AuthServer]:
    served = AuthServer()
    served.start()
    yield served
    served.stop()


@pytest.fixture
def remote(auth: AuthServer) -> Iterator[ProtectedServer]:
    served = ProtectedServer(auth)
    served.start()
    yield served
    served.stop()


def start(data_dir: Path, upstream: ScriptedUpstream, remote: ProtectedServer) -> Parley:
    write_config(data_dir / "mcp.json", {"r": {"url": remote.url, "trust": "allow"}})
    return Parley(data_dir, upstream.base_url).start()


def server(parley: Parley) -> dict[str, Any]:
    (found,) = parley.call("GET", "/api/tools").json()["servers"]
    return dict(found)


def wait_state(parley: Parley, state: str, timeout: float = 30) -> dict[str, Any]:
    def reached() -> dict[str, Any] | None:
        found = server(parley)
        return found if found["state"] == state else None

    found: dict[str, Any] = parley.wait_for(reached, timeout=timeout)
    return found


def begin(parley: Parley) -> str:
    """POST sign-in: the authorization URL the client would open in the browser."""
    reply = parley.call("POST", "/api/tools/servers/r/sign-in")
    assert reply.status == 202, reply.body
    url: str = reply.json()["sign_in"]["authorization_url"]
    assert url
    return url


def browse(url: str) -> tuple[httpx.Response, str]:
    """The test's browser at the authorization server: approved at once, redirected back.
    Returns Parley's page and the redirect URL it followed."""
    with httpx.Client(trust_env=False, timeout=30) as browser:
        approved = browser.get(url)
        assert approved.status_code in (302, 307), approved.text
        back = approved.headers["location"]
        return browser.get(back), back


def sign_in(parley: Parley) -> httpx.Response:
    page, _ = browse(begin(parley))
    return page


def call_echo(parley: Parley, upstream: ScriptedUpstream, text: str) -> dict[str, Any]:
    """A turn through the HTTP API in which the scripted model calls the remote `echo`."""
    called = {"name": "r__echo", "arguments": json.dumps({"text": text})}
    upstream.queue = [Script(tokens=0, tool_calls=[called]), Script(texts=["done"])]
    cid = parley.new_conversation(tools=True)
    stream = parley.send(cid, "go")
    stream.read_all()
    return parley.wait_settled(cid, stream.first["message_id"])


def test_a_server_that_answers_401_needs_a_sign_in_and_a_turn_says_so(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
) -> None:
    parley = start(data_dir, upstream, remote)
    try:
        found = wait_state(parley, "needs_sign_in")
        assert found["error"] is None
        assert found["sign_in"]["status"] == "needs_sign_in"
        assert found["sign_in"]["issuer"].rstrip("/") == auth.base_url
        assert found["sign_in"]["resource"] == remote.url
        upstream.queue = [
            Script(tokens=0, tool_calls=[{"name": "r__sign_in_needed", "arguments": "{}"}]),
            Script(texts=["You need to sign in."]),
        ]
        cid = parley.new_conversation(tools=True)
        stream = parley.send(cid, "use r")
        stream.read_all()
        message = parley.wait_settled(cid, stream.first["message_id"])
        (step,) = [p for p in message["parts"] if p["type"] == "tool"]
        assert step["status"] == "error"
        assert "Sign in to r to use its tools" in json.dumps(step)
    finally:
        assert parley.stop()


def test_sign_in_connects_the_server_and_its_tool_works_in_a_turn(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
) -> None:
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        page = sign_in(parley)
        assert page.status_code == 200 and "Signed in to r" in page.text, page.text
        found = wait_state(parley, "ready")
        assert found["sign_in"]["status"] == "signed_in"
        assert found["sign_in"]["authorization_url"] is None
        assert [tool["name"] for tool in found["tools"]] == ["echo"]
        message = call_echo(parley, upstream, "hi there")
        (step,) = [p for p in message["parts"] if p["type"] == "tool"]
        assert step["status"] == "completed", step
        assert "echo: hi there" in json.dumps(step)
        assert remote.bearers[-1] in auth.provider.access  # a token of its issuer
    finally:
        assert parley.stop()
