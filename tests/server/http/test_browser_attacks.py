"""Hostile web pages in a real browser (headless Chromium) against Parley's API.

Any page the user opens can make the browser send requests to a loopback port. These pages
try the ways a page can: read the API cross-origin, a "simple" no-CORS POST, a JSON POST with
a guessed token (needs a preflight), a cross-site form POST, and DNS rebinding (the page's own
origin later answered by Parley, so the browser treats Parley's answers as same-origin and
lets the page read them). Nothing may get through, nothing may change, and the token must
appear in no answer.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import CHROMIUM, AttackSite, Chromium
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="needs Debian's chromium (.ci/run installs it)"),
]


@pytest.fixture
def attack_site() -> Iterator[AttackSite]:
    site = AttackSite().start()
    yield site
    site.stop()


def assert_nothing_changed(parley: Parley, upstream: ScriptedUpstream) -> None:
    assert parley.call("GET", "/api/conversations").json()["conversations"] == []
    assert parley.status()["active_turns"] == 0
    assert upstream.records == []  # no chat request reached the model


def test_a_cross_site_page_cannot_read_or_write(
    parley: Parley,
    upstream: ScriptedUpstream,
    attack_site: AttackSite,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    url = f"{attack_site.url}/cross_site.html?parley={parley.port}&collector={attack_site.url}"
    browser = Chromium(url)
    try:
        report = attack_site.wait_report(lambda r: r.get("page") == "cross_site")
    finally:
        browser.close()
    results = report["results"]
    assert results["read_status"].startswith("blocked"), results  # no CORS: unreadable
    assert results["json_post_with_guessed_token"].startswith("blocked"), results  # preflight
    assert results["simple_post"] == "sent, response opaque"  # sent, refused (Origin), unread
    assert results["form_post"].startswith("submitted")
    assert_nothing_changed(parley, upstream)
    assert parley.token not in caplog.text  # nor in any log line, at any level


def test_dns_rebinding_gets_nothing_even_same_origin(
    data_dir: Path,
    upstream: ScriptedUpstream,
    attack_site: AttackSite,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    decoy = AttackSite().start()  # the attacker's server, at the port Parley will take over
    port = decoy.port
    browser = Chromium(f"http://rebind.test:{port}/rebind.html?collector={attack_site.url}")
    parley = None
    try:
        attack_site.wait_report(lambda r: r.get("stage") == "loaded")
        decoy.stop()  # "the name now resolves to 127.0.0.1": Parley answers on that origin
        parley = Parley(data_dir, upstream.base_url, port=port).start()
        attack_site.go.set()
        report = attack_site.wait_report(lambda r: r.get("stage") == "done")
        results = report["results"]
        assert set(results) == {"healthz", "status", "conversations", "create", "chat"}
        for name, result in results.items():
            assert result["status"] == 403, (name, result)
            assert json.loads(result["body"])["error"]["code"] == "bad_host", (name, result)
            assert parley.token not in result["body"]
        assert_nothing_changed(parley, upstream)
        assert parley.token not in caplog.text
    finally:
        browser.close()
        decoy.stop()
        if parley is not None:
            parley.stop()
