"""A sign-in across a restart and a sign-in given up (server/tools/sign_in.py,
server/tools/tokens.py): tokens that expired while Parley was closed are refreshed when
they can be and otherwise ask for a new sign-in (never an error, never the old tokens
sent for nothing); Cancel ends a sign-in waiting for the browser. Real servers, as in
test_oauth.py."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.tools.test_oauth import begin, browse, server, sign_in, start, wait_state
from tests.support.oauth_keyring import FileKeyring
from tests.support.oauth_parts import OAuthParts, oauth_parts
from tests.support.oauth_server import AuthServer
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[OAuthParts]:
    with oauth_parts(tmp_path) as found:
        yield found


def age_tokens(ring: FileKeyring, auth: AuthServer, refreshable: bool = True) -> None:
    """What a night with Parley closed does: the access tokens the keyring holds have
    expired (the authorization server refuses them; their record says when they did).
    `refreshable` False: they came without a refresh token."""
    items = json.loads(ring.text())
    for key, value in items.items():
        record = json.loads(value)
        if isinstance(record, dict) and "tokens" in record:
            record["expires_at"] = time.time() - 60
            if not refreshable:
                record["tokens"].pop("refresh_token", None)
            items[key] = json.dumps(record)
    ring.path.write_text(json.dumps(items), encoding="utf-8")
    auth.provider.expire_all_access()


def test_a_restart_with_an_expired_token_refreshes_it_without_the_browser(
    data_dir: Path,
    upstream: ScriptedUpstream,
    parts: OAuthParts,
) -> None:
    auth, remote, ring = parts.auth, parts.remote, parts.ring
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        sign_in(parley)
        wait_state(parley, "ready")
        assert parley.stop()
        age_tokens(ring, auth)
        parley = Parley(data_dir, upstream.base_url).start()
        found = wait_state(parley, "ready")
        assert found["sign_in"]["status"] == "signed_in"
        assert auth.provider.grants == ["authorization_code", "refresh_token"]
        assert remote.bearers[-1] == auth.provider.issued[-2]  # the refreshed access token
    finally:
        assert parley.stop()


def test_a_restart_with_an_expired_token_that_cannot_be_refreshed_asks_for_a_sign_in(
    data_dir: Path,
    upstream: ScriptedUpstream,
    parts: OAuthParts,
) -> None:
    auth, remote, ring = parts.auth, parts.remote, parts.ring
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        sign_in(parley)
        wait_state(parley, "ready")
        assert parley.stop()
        age_tokens(ring, auth)
        auth.provider.refresh.clear()  # the refresh token expired as well
        parley = Parley(data_dir, upstream.base_url).start()
        found = wait_state(parley, "needs_sign_in")
        assert found["error"] is None
        assert found["sign_in"]["status"] == "needs_sign_in"
        page = sign_in(parley)
        assert "Signed in to r" in page.text
        assert wait_state(parley, "ready")["sign_in"]["status"] == "signed_in"
    finally:
        assert parley.stop()


def test_a_restart_with_an_expired_token_and_no_refresh_asks_for_a_sign_in_without_sending_it(
    data_dir: Path,
    upstream: ScriptedUpstream,
    parts: OAuthParts,
) -> None:
    auth, remote, ring = parts.auth, parts.remote, parts.ring
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        sign_in(parley)
        wait_state(parley, "ready")
        assert parley.stop()
        age_tokens(ring, auth, refreshable=False)
        expired = auth.provider.issued[0]
        sent = len(remote.bearers)
        parley = Parley(data_dir, upstream.base_url).start()
        found = wait_state(parley, "needs_sign_in")
        assert found["sign_in"]["status"] == "needs_sign_in"
        assert expired not in remote.bearers[sent:]  # known expired: not sent for nothing
        assert "Signed in to r" in sign_in(parley).text
        wait_state(parley, "ready")
    finally:
        assert parley.stop()


def test_cancel_ends_a_sign_in_waiting_for_the_browser(
    data_dir: Path,
    upstream: ScriptedUpstream,
    parts: OAuthParts,
) -> None:
    auth, remote = parts.auth, parts.remote
    parley = start(data_dir, upstream, remote)
    try:
        wait_state(parley, "needs_sign_in")
        url = begin(parley)
        redirects = parley.services.tools.redirects
        reply = parley.call("DELETE", "/api/tools/servers/r/sign-in")
        assert reply.status == 200, reply.body
        assert len(redirects) == 0
        found = wait_state(parley, "needs_sign_in")
        assert found["sign_in"]["status"] == "needs_sign_in"
        assert found["sign_in"]["authorization_url"] is None
        page, _ = browse(url)
        assert page.status_code == 400  # the flow is gone: its redirect is refused
        assert auth.provider.grants == []
        assert "Signed in to r" in sign_in(parley).text  # and a new one works
        wait_state(parley, "ready")
    finally:
        assert parley.stop()


def test_cancel_with_no_sign_in_under_way_changes_nothing(
    data_dir: Path,
    upstream: ScriptedUpstream,
    parts: OAuthParts,
) -> None:
    parley = start(data_dir, upstream, parts.remote)
    try:
        wait_state(parley, "needs_sign_in")
        reply = parley.call("DELETE", "/api/tools/servers/r/sign-in")
        assert reply.status == 200, reply.body
        assert server(parley)["state"] == "needs_sign_in"
        assert parley.call("DELETE", "/api/tools/servers/nope/sign-in").status == 404
    finally:
        assert parley.stop()
