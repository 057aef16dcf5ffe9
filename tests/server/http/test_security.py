"""The front door, over real sockets: Host, Origin, token; no CORS."""

from __future__ import annotations

import pytest

from tests.support.client import raw_exchange, request
from tests.support.parley import Parley


def test_healthz_needs_no_token(parley: Parley) -> None:
    reply = request(parley.port, "GET", "/healthz")
    assert reply.status == 200 and reply.json() == {"ok": True}


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "Bearer wrong-token",
        "Bearer ",
        "Basic dGVzdDp0ZXN0",
        "test-token-0123456789",
        "Bearer test-token-012345678",
        "Bearer test-token-0123456789x",
    ],
)
def test_every_api_route_needs_the_token(parley: Parley, authorization: str | None) -> None:
    headers = {"Authorization": authorization} if authorization is not None else {}
    for method, path in [
        ("GET", "/api/status"),
        ("GET", "/api/conversations"),
        ("POST", "/api/conversations"),
        ("GET", "/api/conversations/x"),
        ("DELETE", "/api/conversations/x"),
        ("POST", "/api/conversations/x/messages"),
        ("GET", "/no/such/route"),
    ]:
        reply = request(parley.port, method, path, headers=headers, json_body={})
        assert reply.status == 401, (method, path)
        assert reply.json()["error"]["code"] == "bad_token"
        assert reply.headers.get("www-authenticate") == "Bearer"
        assert parley.token.encode() not in reply.body
        credential = (authorization or "").removeprefix("Bearer ").removeprefix("Basic ")
        if credential:
            assert credential.encode() not in reply.body


@pytest.mark.parametrize(
    "host",
    ["evil.example:{port}", "127.0.0.1:1", "localhost", "127.0.0.1", "attacker.localhost:{port}",
     "127.0.0.2:{port}", "0.0.0.0:{port}"],
)  # fmt: skip
def test_foreign_host_is_refused_before_auth(parley: Parley, host: str) -> None:
    for path in ("/healthz", "/api/status"):
        reply = request(
            parley.port,
            "GET",
            path,
            token=parley.token,
            headers={"Host": host.format(port=parley.port)},
        )
        assert reply.status == 403, path
        assert reply.json()["error"]["code"] == "bad_host"


@pytest.mark.parametrize("name", ["127.0.0.1", "localhost", "LOCALHOST", "[::1]"])
def test_loopback_host_names_are_accepted(parley: Parley, name: str) -> None:
    reply = parley.call("GET", "/api/status", headers={"Host": f"{name}:{parley.port}"})
    assert reply.status == 200


def test_missing_or_duplicate_host_is_refused(parley: Parley) -> None:
    status, _ = raw_exchange(parley.port, b"GET /healthz HTTP/1.0\r\n\r\n")
    assert status == 403
    twice = (
        f"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:{parley.port}\r\n"
        "Host: evil:1\r\nConnection: close\r\n\r\n"
    )
    status, _ = raw_exchange(parley.port, twice.encode())
    assert status in (400, 403)


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:{port}",
     "http://localhost.evil.example:{port}", "file://"],
)  # fmt: skip
def test_foreign_origin_is_refused(parley: Parley, origin: str) -> None:
    reply = parley.call(
        "POST",
        "/api/conversations",
        json_body={},
        headers={"Origin": origin.format(port=parley.port)},
    )
    assert reply.status == 403
    assert reply.json()["error"]["code"] == "bad_origin"
    assert parley.call("GET", "/api/conversations").json()["conversations"] == []


def test_own_origin_is_accepted(parley: Parley) -> None:
    reply = parley.call("GET", "/api/status", headers={"Origin": f"http://127.0.0.1:{parley.port}"})
    assert reply.status == 200


def test_no_cors_headers_even_on_preflight(parley: Parley) -> None:
    reply = parley.call(
        "OPTIONS",
        "/api/conversations",
        headers={
            "Origin": "http://evil.example",
            "Access-Control-Request-Method": "POST",
        },
    )
    assert reply.status == 403
    assert not any(name.startswith("access-control-") for name in reply.headers)
    ok = parley.call("GET", "/api/status")
    assert not any(name.startswith("access-control-") for name in ok.headers)
