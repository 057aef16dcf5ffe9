"""The one event-stream splitter: events whole however the bytes are cut, lines ended as the
SSE spec ends them and no other way."""

from __future__ import annotations

import pytest

from server.types.sse import EventSplitter

STREAM = (
    b": a comment\r\n"
    b'event: chunk\r\ndata: {"a": 1}\r\n\r\n'
    b"data:no space\n\n"
    b"data: two\ndata: lines\n\n"
    b"data:\n\n"  # empty data: no event
    b"id: 7\rdata: \xe2\x80\xa8 inside\r\r"
    b"data: [DONE]\n\n"
)
EVENTS = [b'{"a": 1}', b"no space", b"two\nlines", b"\xe2\x80\xa8 inside", b"[DONE]"]


def split(pieces: list[bytes]) -> list[bytes]:
    splitter = EventSplitter()
    found = [data for piece in pieces for data in splitter.feed(piece)]
    return found + splitter.end()


def test_a_stream_in_one_piece_gives_each_events_data() -> None:
    assert split([STREAM]) == EVENTS


@pytest.mark.parametrize("size", [1, 2, 3, 7, 64])
def test_a_stream_cut_anywhere_gives_the_same_events(size: int) -> None:
    pieces = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]
    assert split(pieces) == EVENTS


def test_a_cr_at_a_pieces_end_waits_for_a_possible_lf() -> None:
    splitter = EventSplitter()
    assert splitter.feed(b"data: x\r\n\r") == []
    assert splitter.feed(b"\ndata: y\n\n") == [b"x", b"y"]


def test_the_last_event_counts_without_its_blank_line() -> None:
    splitter = EventSplitter()
    assert splitter.feed(b"data: 1\n\ndata: 2\r") == [b"1"]
    assert splitter.pending == b"data: 2\r"
    assert splitter.end() == [b"2"]
    assert splitter.pending == b""
