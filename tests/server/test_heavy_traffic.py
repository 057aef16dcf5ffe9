"""Heavy replies and clients that read slowly or not at all, on real sockets (issue 19)."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

from server.settings import Limits
from tests.support.parley import TOKEN, Parley
from tests.support.upstream import Script, ScriptedUpstream

WORD = "x" * 999 + " "  # a 1,000-character token


def test_a_reply_over_the_size_limit_is_cut_there_and_ends_saying_so(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    # 60 MB on offer: more than loopback's socket buffers hold (tcp_rmem's ceiling is 32 MB
    # here), so an upstream that finished writing could only have been read to its end.
    upstream.script = Script(texts=[WORD] * 60_000)
    parley = Parley(data_dir, upstream.base_url, limits=Limits(max_reply_chars=50_000)).start()
    try:
        conversation_id = parley.new_conversation()
        stream = parley.send(conversation_id)
        stream.read_all()
        outcome = stream.final["parley"]
        assert outcome["status"] == "error"
        assert "limit of 50,000 characters" in outcome["error"]
        assert len(stream.delivered) == 50_000
        message = parley.wait_settled(conversation_id, stream.first["message_id"])
        assert message["status"] == "error" and message["content"] == stream.delivered
        # The upstream's stream was closed, not read to its end.
        upstream.wait_hung_up()
        assert not upstream.records[0].finished
    finally:
        parley.stop()


def send_and_never_read(port: int, conversation_id: str) -> socket.socket:
    """POST a message from a socket with a tiny receive buffer, and never read from it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    body = json.dumps({"content": "hello"}).encode()
    sock.sendall(
        f"POST /api/conversations/{conversation_id}/messages HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    return sock


def test_a_client_that_reads_nothing_is_dropped_and_its_reply_saved(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(texts=[WORD] * 60_000)  # 60 MB: far more than any buffer holds
    limits = Limits(send_timeout=0.5, max_reply_chars=100_000_000)
    parley = Parley(data_dir, upstream.base_url, limits=limits).start()
    sock: socket.socket | None = None
    try:
        conversation_id = parley.new_conversation()
        sock = send_and_never_read(parley.port, conversation_id)
        started = time.monotonic()
        messages = parley.wait_for(
            lambda: len(found := parley.conversation(conversation_id)["messages"]) == 2 and found
        )
        # Without the send deadline the reply streams on into a socket nobody reads.
        reply = parley.settled(conversation_id, messages[1]["id"], timeout=30).json()
        elapsed = time.monotonic() - started
        assert (reply["status"], reply["ended_by"]) == ("interrupted", "client_hangup")
        assert 0 < len(reply["content"]) < 60_000_000
        upstream.wait_hung_up()
        # The connection was closed by the server: reading finds its end (or a reset).
        sock.settimeout(10)
        try:
            while sock.recv(1 << 20):
                pass
        except ConnectionResetError:
            pass
        assert elapsed < 25
    finally:
        if sock is not None:
            sock.close()
        parley.stop()


def test_a_slow_reader_is_not_dropped(data_dir: Path, upstream: ScriptedUpstream) -> None:
    # 800 KB read at ~200 KB/s: the server's buffers fill, and each time the send deadline
    # (0.3 s) passes the client has read something, though not enough to resume writing.
    upstream.script = Script(texts=[WORD] * 800)
    parley = Parley(data_dir, upstream.base_url, limits=Limits(send_timeout=0.3)).start()
    try:
        conversation_id = parley.new_conversation()
        sock = send_and_never_read(parley.port, conversation_id)
        sock.settimeout(10)
        received = bytearray()
        while b"data: [DONE]" not in received[-64:]:
            time.sleep(0.1)
            budget = 20_000
            while budget > 0 and b"data: [DONE]" not in received[-64:]:
                piece = sock.recv(min(budget, 4096))
                assert piece, "the server closed the connection of a reader that reads"
                received += piece
                budget -= len(piece)
        sock.close()
        reply = parley.wait_settled(
            conversation_id, parley.conversation(conversation_id)["messages"][1]["id"]
        )
        assert reply["status"] == "completed"
        assert len(reply["content"]) == 800_000
    finally:
        parley.stop()


def test_a_finished_answer_left_unread_does_not_hold_its_connection(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    # A ~400 KB conversation fetched by a client that never reads: the answer is complete,
    # part of it still in the server's buffer; closing waits for that buffer to drain, so the
    # send deadline must end it (it aborts: the client then gets less than the whole answer).
    upstream.script = Script(texts=[WORD] * 400)
    parley = Parley(data_dir, upstream.base_url, limits=Limits(send_timeout=0.3)).start()
    try:
        conversation_id = parley.new_conversation()
        parley.send(conversation_id).read_all()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(("127.0.0.1", parley.port))
        sock.sendall(
            f"GET /api/conversations/{conversation_id} HTTP/1.1\r\nHost: 127.0.0.1:{parley.port}"
            f"\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n".encode()
        )
        time.sleep(1.5)  # reads nothing meanwhile
        sock.settimeout(10)
        received = b""
        try:
            while piece := sock.recv(1 << 16):
                received += piece
        except ConnectionResetError:
            pass
        sock.close()
        head, _, body = received.partition(b"\r\n\r\n")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        assert len(body) < length  # cut off: the server let go of the connection
    finally:
        parley.stop()
