"""An event stream read as it arrives: the data of each whole event, per the SSE spec.

Lines end at LF, CRLF or CR only (never at U+2028 and the other ends `str.splitlines` knows,
which a model's words or a tool's result may carry inside a chunk's JSON); an event's `data:`
lines are joined with LF and it is dispatched at the blank line that ends it (an event with
empty data is none); other fields and comments are ignored.

One splitter for every reader: the server's relay of an upstream (its hot path: split by
hand on bytes, since decoding to text first cost more per token than the rest of the relay
together), the desktop's client and the tests' client. Pure: it imports nothing; it is the
wire's framing, which both ends read, so it sits with the wire's types."""

from __future__ import annotations


class EventSplitter:
    """Feed it the stream's bytes as they come; it gives back the data of each event they
    complete. `pending` holds the bytes that wait for the rest of their event (a reader bounds
    its length); `end()` gives the last event when the stream ends without its blank line."""

    __slots__ = ("pending",)

    def __init__(self) -> None:
        self.pending = b""

    def feed(self, received: bytes) -> list[bytes]:
        """The data of each event `received` completes, in order (often none)."""
        pending = self.pending + received
        if b"\r" in pending:
            # A CR at the very end may be the first half of a CRLF still on its way.
            held = b"\r" if pending.endswith(b"\r") else b""
            pending = pending[: len(pending) - len(held)]
            pending = pending.replace(b"\r\n", b"\n").replace(b"\r", b"\n") + held
        # Whole events only: each ends with a blank line.
        *events, self.pending = pending.split(b"\n\n")
        found = []
        for block in events:
            if block.startswith(b"data:") and b"\n" not in block:  # one line: the usual case
                data = (block[6:] if block[5:6] == b" " else block[5:]).strip()
            else:
                data = _event_data(block)
            if data:  # an event whose data is empty is none (the spec)
                found.append(data)
        return found

    def end(self) -> list[bytes]:
        """The event the stream ended in without its blank line, if any (still an event)."""
        data = _event_data(self.pending.rstrip(b"\r\n"))
        self.pending = b""
        return [data] if data else []


def _event_data(block: bytes) -> bytes:
    """The data of one event (its lines without the blank line that ended it)."""
    if b"\n" not in block:  # one line: the usual case
        if not block.startswith(b"data:"):
            return b""
        return (block[6:] if block[5:6] == b" " else block[5:]).strip()
    values = [
        line[6:] if line[5:6] == b" " else line[5:]
        for line in block.split(b"\n")
        if line.startswith(b"data:")
    ]
    return b"\n".join(values).strip()
