"""An entry's `oauth` settings (server/tools/config.py): a client registered beforehand, or a
client ID metadata document's URL. The sign-ins they make are tested by the official suite
(tests/conformance: auth/pre-registration, auth/basic-cimd)."""

from __future__ import annotations

from typing import Any

import pytest

from server.tools.config import entry_from

URL = "https://mcp.example.com/mcp"


@pytest.mark.parametrize(
    "oauth",
    [
        {"clientId": "parley-desktop"},
        {"clientId": "parley-desktop", "clientSecret": "s3cret-value"},
        {"clientMetadataUrl": "https://parley.example.org/oauth/client.json"},
    ],
)
def test_valid(oauth: dict[str, Any]) -> None:
    entry = entry_from("remote", {"url": URL, "oauth": oauth})
    assert entry.error is None
    assert entry.oauth == oauth


@pytest.mark.parametrize(
    ("oauth", "why"),
    [
        ("client", "'oauth' must be an object"),
        ({"client_id": "x"}, "'oauth' must be an object of clientId"),
        ({"clientId": ""}, "'oauth.clientId' must be a non-empty string"),
        ({"clientSecret": "s3cret-value"}, "needs the 'oauth.clientId'"),
        ({"clientMetadataUrl": "http://parley.example.org/c.json"}, "https:// address"),
        ({"clientMetadataUrl": "https://parley.example.org"}, "with a path"),
    ],
)
def test_invalid(oauth: object, why: str) -> None:
    entry = entry_from("remote", {"url": URL, "oauth": oauth})
    assert entry.error is not None and why in entry.error
