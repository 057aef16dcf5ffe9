"""Bad input over real sockets: a clear 4xx, no traceback, nothing stored, server still serving."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from server.settings import Limits
from tests.support.client import raw_exchange
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream

LIMIT = 10_000
DEADLINE_S = 1.0


@pytest.fixture
def small(data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Parley]:
    server = Parley(
        data_dir,
        upstream.base_url,
        limits=Limits(max_body_bytes=LIMIT, header_timeout=DEADLINE_S, body_timeout=DEADLINE_S),
    ).start()
    yield server
    server.stop()


def post_raw(
    server: Parley, path: str, body: bytes, content_type: str = "application/json", extra: str = ""
) -> tuple[int, bytes]:
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        f"Authorization: Bearer {server.token}\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n{extra}\r\n"
    )
    return raw_exchange(server.port, head.encode() + body)


def assert_clean_error(status: int, body: bytes, expected: int) -> None:
    import json

    assert status == expected, body
    error = json.loads(body)["error"]
    assert error["code"] and error["message"]
    assert b"Traceback" not in body and b'File "' not in body


def assert_untouched_and_serving(server: Parley, conversation_id: str | None = None) -> None:
    if conversation_id is not None:
        assert server.conversation(conversation_id)["messages"] == []
    assert server.call("GET", "/healthz").status == 200
    assert server.call("GET", "/api/status").json()["active_turns"] == 0


BAD_BODIES = [
    (b"{not json", 400),
    (b'{"content": "x"', 400),
    (b"", 400),
    (b"\xff\xfe{}", 400),
    (b'{"content": "caf\xe9"}', 400),
    (b"[1, 2]", 400),
    (b'"just a string"', 400),
    (b'{"content": NaN}', 400),
    (b'{"content": Infinity}', 400),
    (b'{"content": 12}', 400),
    (b'{"content": null}', 400),
    (b'{"content": ""}', 400),
    (b'{"content": "   "}', 400),
    (b'{"content": "\\ud800 lone"}', 400),
    (b'{"content": "nul \\u0000 inside"}', 400),
    (b'{"content": "ok", "model": 5}', 400),
    (b'{"content": "ok", "model": "no-such-model"}', 404),
    (b"[" * 5000 + b"]" * 5000, 400),
]


@pytest.mark.parametrize(("body", "expected"), BAD_BODIES)
def test_bad_message_bodies(small: Parley, body: bytes, expected: int) -> None:
    conversation_id = small.new_conversation()
    status, reply = post_raw(small, f"/api/conversations/{conversation_id}/messages", body)
    assert_clean_error(status, reply, expected)
    assert_untouched_and_serving(small, conversation_id)


def test_wrong_content_type_is_415(small: Parley) -> None:
    conversation_id = small.new_conversation()
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        status, reply = post_raw(
            small,
            f"/api/conversations/{conversation_id}/messages",
            b'{"content": "hi"}',
            content_type,
        )
        assert_clean_error(status, reply, 415)
    status, reply = post_raw(small, "/api/conversations", b"{}", "text/plain")
    assert_clean_error(status, reply, 415)
    assert_untouched_and_serving(small, conversation_id)


def test_declared_oversized_body_is_413(small: Parley) -> None:
    conversation_id = small.new_conversation()
    body = b'{"content": "' + b"a" * (LIMIT + 10) + b'"}'
    status, reply = post_raw(small, f"/api/conversations/{conversation_id}/messages", body)
    assert_clean_error(status, reply, 413)
    assert_untouched_and_serving(small, conversation_id)


def test_streamed_oversized_body_is_413(small: Parley) -> None:
    conversation_id = small.new_conversation()
    piece = b"a" * 4096
    chunks = b"".join(b"%x\r\n%s\r\n" % (len(piece), piece) for _ in range(5)) + b"0\r\n\r\n"
    head = (
        f"POST /api/conversations/{conversation_id}/messages HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{small.port}\r\nAuthorization: Bearer {small.token}\r\n"
        "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    status, reply = raw_exchange(small.port, head.encode() + chunks)
    assert_clean_error(status, reply, 413)
    assert_untouched_and_serving(small, conversation_id)


def test_unknown_ids_are_404(small: Parley) -> None:
    for method, path, body in [
        ("GET", "/api/conversations/nope", None),
        ("PATCH", "/api/conversations/nope", {"title": "x"}),
        ("DELETE", "/api/conversations/nope", None),
        ("POST", "/api/conversations/nope/messages", {"content": "hi"}),
    ]:
        reply = small.call(method, path, json_body=body)
        assert_clean_error(reply.status, reply.body, 404)
    assert_untouched_and_serving(small)


def test_unknown_route_and_method_are_json_errors(small: Parley) -> None:
    reply = small.call("GET", "/api/nothing-here")
    assert_clean_error(reply.status, reply.body, 404)
    reply = small.call("PUT", "/api/conversations")
    assert_clean_error(reply.status, reply.body, 405)


@pytest.mark.parametrize(
    "body",
    [
        b'{"title": 5}',
        b'{"system": ["x"]}',
        b'{"title": "' + b"t" * 600 + b'"}',
        b'{"title": "\\u0000"}',
    ],
)
def test_bad_conversation_fields_are_400(small: Parley, body: bytes) -> None:
    status, reply = post_raw(small, "/api/conversations", body)
    assert_clean_error(status, reply, 400)
    assert small.call("GET", "/api/conversations").json()["conversations"] == []


def test_rename_needs_a_title(small: Parley) -> None:
    conversation_id = small.new_conversation(title="keep")
    for body in ({}, {"title": None}, {"title": 3}):
        reply = small.call("PATCH", f"/api/conversations/{conversation_id}", json_body=body)
        assert_clean_error(reply.status, reply.body, 400)
    assert small.conversation(conversation_id)["title"] == "keep"


BAD_LIMITS = ["limit=0", "limit=-1", "limit=10001", "limit=x", "limit=", "limit=2&q=word",
              "limit=%C2%B2", "limit=%D9%A3",  # digits to str.isdigit, not ASCII ones
              pytest.param("limit=" + "0" * 4400 + "1", id="4400-digits")]  # fmt: skip


@pytest.mark.parametrize("query", BAD_LIMITS)
def test_a_bad_list_limit_is_400(small: Parley, query: str) -> None:
    response = small.call("GET", f"/api/conversations?{query}")
    assert response.status == 400
    assert response.json()["error"]["code"] == "invalid_field"
    assert "'limit'" in response.json()["error"]["message"]


def test_search_with_nul_or_surrogate_is_400(small: Parley) -> None:
    for query in ("%00", "%ED%A0%80"):
        reply = small.call("GET", f"/api/conversations?q={query}")
        assert reply.status in (200, 400), reply.body
        if reply.status == 400:
            assert_clean_error(reply.status, reply.body, 400)
    assert_untouched_and_serving(small)


def test_content_length_with_transfer_encoding_is_400_and_closes(small: Parley) -> None:
    conversation_id = small.new_conversation()
    body = b'{"content": "hi"}'
    head = (
        f"POST /api/conversations/{conversation_id}/messages HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{small.port}\r\nAuthorization: Bearer {small.token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Transfer-Encoding: chunked\r\n\r\n"  # and no "Connection: close"
    )
    chunked = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
    # raw_exchange reads until the server closes; it times out first (3 s, under uvicorn's
    # 5 s keep-alive) if the server keeps the connection.
    status, reply = raw_exchange(small.port, head.encode() + chunked, timeout=3)
    assert_clean_error(status, reply, 400)
    assert b"conflicting_framing" in reply
    assert_untouched_and_serving(small, conversation_id)


def test_two_different_content_lengths_are_refused(small: Parley) -> None:
    conversation_id = small.new_conversation()
    status, reply = post_raw(
        small,
        f"/api/conversations/{conversation_id}/messages",
        b'{"content": "hi"}',
        extra="Content-Length: 3\r\n",
    )
    assert status == 400, reply  # refused by h11 before the app: a plain-text 400
    assert b"Traceback" not in reply
    assert_untouched_and_serving(small, conversation_id)


@pytest.mark.parametrize("shape", ["one huge header", "many headers"])
def test_oversized_headers_are_refused(small: Parley, shape: str) -> None:
    extra = (
        f"X-Big: {'a' * 100_000}\r\n"
        if shape == "one huge header"
        else "".join(f"X-{i}: value\r\n" for i in range(5000))
    )
    conversation_id = small.new_conversation()
    status, reply = post_raw(
        small, f"/api/conversations/{conversation_id}/messages", b'{"content": "hi"}', extra=extra
    )
    if status == 400:  # the headers arrived in pieces: h11 refused them past its limit
        assert reply == b"Invalid HTTP request received."
    else:  # in one read: Parley's own check
        assert_clean_error(status, reply, 431)
    assert_untouched_and_serving(small, conversation_id)


def _read_all(sock: socket.socket) -> bytes:
    received = b""
    while True:
        try:
            piece = sock.recv(65536)
        except ConnectionResetError:
            return received
        if not piece:
            return received
        received += piece


def test_clients_trickling_headers_are_cut_off_while_others_are_served(small: Parley) -> None:
    head = (
        f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{small.port}\r\n"
        f"Authorization: Bearer {small.token}\r\n"
    ).encode()
    slow = [socket.create_connection(("127.0.0.1", small.port), timeout=30) for _ in range(20)]
    sending = list(slow)
    try:
        # Each sends a byte at a time, never finishing its headers, until it is cut off.
        for position in range(len(head)):
            for sock in list(sending):
                try:
                    sock.sendall(head[position : position + 1])
                except (BrokenPipeError, ConnectionResetError):
                    sending.remove(sock)
            if position % 20 == 0:
                assert small.call("GET", "/api/status").status == 200  # others are served
            time.sleep(DEADLINE_S / 40)
        for sock in slow:
            reply = _read_all(sock)  # ends: the server closed the connection
            assert reply.startswith(b"HTTP/1.1 408 "), reply
            assert b"request_timeout" in reply and small.token.encode() not in reply
    finally:
        for sock in slow:
            sock.close()
    assert_untouched_and_serving(small)


def test_a_client_trickling_its_body_gets_408_then_is_closed(small: Parley) -> None:
    conversation_id = small.new_conversation()
    head = (
        f"POST /api/conversations/{conversation_id}/messages HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{small.port}\r\nAuthorization: Bearer {small.token}\r\n"
        "Content-Type: application/json\r\nContent-Length: 4000\r\n\r\n"
    )
    body = b'{"content": "' + b"a" * 3980
    reply = b""
    closed = False
    with socket.create_connection(("127.0.0.1", small.port), timeout=30) as sock:
        sock.sendall(head.encode())
        sock.settimeout(DEADLINE_S / 20)
        # Keep trickling, before and after the answer: the server must answer, then hang up.
        for position in range(len(body)):
            try:
                sock.sendall(body[position : position + 1])
                piece = sock.recv(65536)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                closed = True
                break
            if not piece:
                closed = True
                break
            reply += piece
    assert closed, "the server kept reading a trickled body after answering it"
    status = int(reply.split(b" ", 2)[1])
    assert_clean_error(status, reply.partition(b"\r\n\r\n")[2], 408)
    assert_untouched_and_serving(small, conversation_id)


def test_a_number_with_thousands_of_digits_gets_a_plain_400(small: Parley) -> None:
    body = b'{"title": "x", "model": ' + b"9" * 5000 + b"}"
    reply = small.call(
        "POST", "/api/conversations", body=body, headers={"Content-Type": "application/json"}
    )
    assert reply.status == 400
    message = reply.json()["error"]["message"]
    assert "too many digits" in message and "sys." not in message


def test_a_conversation_for_a_model_nobody_serves_is_refused(small: Parley) -> None:
    reply = small.call("POST", "/api/conversations", json_body={"model": "no-such-model"})
    assert reply.status == 404 and reply.json()["error"]["code"] == "model_not_found"
    assert small.call("GET", "/api/conversations").json()["conversations"] == []
