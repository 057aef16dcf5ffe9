"""Signing in to a remote MCP server with OAuth 2.1 (server/tools/sign_in.py): a 401 is a
sign-in to do, not an error; the API starts the flow and returns the authorization URL; the
browser's redirect comes back to Parley's own loopback route; the server then connects and its
tools work in a turn. Real servers: the SDK's auth pieces (tests/support/oauth_server.py), a
"browser" that is httpx following the redirects, a keyring in the test's temp dir."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx
import keyring
import pytest

from tests.support.oauth_keyring import FileKeyring
from tests.support.oauth_server import AuthServer, ProtectedServer, secrets_of
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


def test_an_expired_access_token_is_refreshed_and_the_tool_still_works(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
) -> None:
    auth.provider.expire_first = True  # the first access token expires at once
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        sign_in(parley)
        wait_state(parley, "ready")
        message = call_echo(parley, upstream, "after refresh")
        assert "echo: after refresh" in json.dumps(message["parts"])
        assert auth.provider.grants == ["authorization_code", "refresh_token"]
        first_access, _, refreshed, _ = auth.provider.issued
        assert remote.bearers[-1] == refreshed
        assert first_access not in auth.provider.access  # rotated out: only the new one works
        assert refreshed in ring.text()  # the keyring holds the refreshed token
    finally:
        assert parley.stop()


def test_sign_out_forgets_the_tokens_and_disconnects(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
) -> None:
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        sign_in(parley)
        wait_state(parley, "ready")
        assert auth.provider.issued[0] in ring.text()
        reply = parley.call("POST", "/api/tools/servers/r/sign-out")
        assert reply.status == 200, reply.body
        found = wait_state(parley, "needs_sign_in")
        assert found["tools"] == []
        assert not any(token in ring.text() for token in secrets_of(auth.provider))
    finally:
        assert parley.stop()


def test_tokens_reach_the_keyring_only_never_the_data_dir_logs_or_mcp_json(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    auth.provider.expire_first = True  # a refresh too: its tokens count as well
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        sign_in(parley)
        wait_state(parley, "ready")
        call_echo(parley, upstream, "x")
        export = parley.call("GET", "/api/export")
        exported = export.body if export.status == 200 else b""
    finally:
        assert parley.stop()
    issued = secrets_of(auth.provider)
    assert len(issued) >= 5  # two pairs of tokens and the client's secret
    assert all(token in ring.text() for token in auth.provider.issued[-2:])
    files = [p for p in data_dir.rglob("*") if p.is_file()]
    assert any(p.name == "mcp.json" for p in files)
    for path in files:
        content = path.read_bytes()
        assert not any(token.encode() in content for token in issued), path
    assert not any(token.encode() in exported for token in issued)
    assert not any(token in caplog.text for token in issued)


@pytest.mark.parametrize("when", ["mid_session", "after_restart"])
def test_a_server_whose_metadata_names_another_issuer_never_gets_the_old_tokens(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
    when: str,
) -> None:
    other = AuthServer()
    other.start()
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        sign_in(parley)
        wait_state(parley, "ready")
        old = secrets_of(auth.provider) | set(auth.provider.clients)
        remote.use(other)  # the resource now trusts another issuer only
        if when == "mid_session":
            message = call_echo(parley, upstream, "x")  # refused: the SDK rediscovers
            assert "Sign in to r to use its tools" in json.dumps(message["parts"])
        else:
            assert parley.stop()
            parley = Parley(data_dir, upstream.base_url).start()
        found = wait_state(parley, "needs_sign_in")
        assert found["sign_in"]["issuer"].rstrip("/") == other.base_url
        url = begin(parley)
        assert url.startswith(other.base_url)
        client_id = parse_qs(urlparse(url).query)["client_id"][0]
        assert client_id not in auth.provider.clients  # registered anew with the new issuer
        assert not any(secret in other.recorded.text() for secret in old)
        page, _ = browse(url)
        assert "Signed in to r" in page.text
        wait_state(parley, "ready")
        assert remote.bearers[-1] in other.provider.access
        assert not any(secret in other.recorded.text() for secret in old)
    finally:
        assert parley.stop()
        other.stop()


def test_a_redirect_with_another_state_or_used_twice_is_refused(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
) -> None:
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        url = begin(parley)
        with httpx.Client(trust_env=False, timeout=30) as browser:
            back = browser.get(url).headers["location"]
            query = parse_qs(urlparse(back).query)
            forged = back.replace(query["state"][0], "forged-state-0123456789")
            refused = browser.get(forged)
            assert refused.status_code == 400 and "not valid" in refused.text
            assert server(parley)["sign_in"]["status"] == "waiting_for_browser"
            assert browser.get(back).status_code == 200  # the flow's own redirect, once
            wait_state(parley, "ready")
            replayed = browser.get(back)
            assert replayed.status_code == 400 and "not valid" in replayed.text
        assert auth.provider.grants == ["authorization_code"]
    finally:
        assert parley.stop()


def test_a_stop_during_a_sign_in_ends_the_wait_and_discards_the_flow(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
) -> None:
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        url = begin(parley)
        redirects = parley.services.tools.redirects
        assert len(redirects) == 1
        assert parley.call("DELETE", "/api/tools/servers/r").status == 204
        parley.wait_for(lambda: len(redirects) == 0, timeout=10)
        page, _ = browse(url)
        assert page.status_code == 400  # the flow is gone: its redirect is refused
        assert auth.provider.grants == []
        url = None
    finally:
        assert parley.stop()


def test_shutdown_during_a_sign_in_is_not_held_by_it(
    data_dir: Path,
    upstream: ScriptedUpstream,
    auth: AuthServer,
    remote: ProtectedServer,
    ring: FileKeyring,
) -> None:
    parley = start(data_dir, upstream, remote)
    wait_state(parley, "needs_sign_in")
    begin(parley)
    redirects = parley.services.tools.redirects
    assert parley.stop()
    assert len(redirects) == 0
