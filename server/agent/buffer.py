"""The reply as it is made: its text pieces, the parts they and the tool steps make, the
sources it was given and cites, and the feed its followers read — held once, for the run
(server/turns/run.py) and its agent loop (server/agent/loop.py) alike.

Text is kept as the pieces it came in (their join is the reply's `content`); the feed holds the
same str objects beside the steps' events, so a follower far behind never costs a copy. Every
change wakes the followers and asks for a checkpoint (`on_change`: the run's).

A checkpoint writes what `stored()` gives: the content and the parts' JSON, kept between
checkpoints and encoded again only where they changed (a step whose `changes` moved, the text
part that grew, the sources listed), so a long reply does not cost the event loop its whole
size per checkpoint; it decodes to exactly what `json()` gives.

Its sources are listed once each, by number (the order the model was first given them, so a
number means one source for the whole reply), after its text and steps: each one it cites as
[n]; and the passages "Use my documents" put in its prompt that it has not cited, marked
`cited: false`, so that what the model was given is shown, also once the chat is reopened.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import re
import time
from collections.abc import Callable
from json.encoder import encode_basestring

from server.agent.feed import Cited, FeedItem, StepChanged
from server.agent.steps import ReplyParts, ToolStep
from server.storage.turn_rows import Earlier
from server.types import CitationPartJSON, PartJSON

# "[n]": the reply cites source n (a passage a tool gave); the lookback finds a marker cut
# between two deltas.
CITATION = re.compile(r"\[(\d{1,4})\]")
CITE_LOOKBACK = 6


class ReplyBuffer:
    def __init__(
        self,
        max_chars: int,
        on_change: Callable[[], None],
        forward: Callable[[FeedItem], None] | None = None,
    ) -> None:
        """`on_change`: every change (a checkpoint is due); `forward`: a sub-agent's buffer
        has no followers of its own, its feed items go there (its parent's step)."""
        self.pieces: list[str] = []  # the reply's text, in pieces as they came
        self.parts = ReplyParts()  # which pieces and tool steps make up the reply, in order
        # What followers read, in order: text pieces (the same str objects) and FeedItems.
        self.feed: list[str | FeedItem] = []
        # A plain asyncio.Event, set per change and cleared by a follower before it waits:
        # creating an anyio.Event per delta cost a quarter of the relay's CPU.
        self.changed = asyncio.Event()
        # Sources the model was given (by the tools, in the prompt), by number; the reply
        # cites one by writing "[n]".
        self.sources: dict[int, CitationPartJSON] = {}
        self.earlier_pieces = 0  # a continued reply's pieces from before this run
        self.over_limit: str | None = None  # why the reply was cut at the size limit
        self.first_token_at: float | None = None
        self._cited: set[int] = set()
        self._tail = ""  # the reply's last few characters: a marker can span several deltas
        self._chars = 0  # text and tool-call arguments, against `max_chars`
        self._max_chars = max_chars
        self._on_change = on_change
        self._forward = forward
        self._stored = _Stored()

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def json(self) -> list[PartJSON] | None:
        """The reply's parts as stored (None: text alone, its content)."""
        return self.parts.json(self.pieces)

    def all_json(self) -> list[PartJSON]:
        """The parts, text alone included (a sub-agent's, inside its step)."""
        return self.parts.all_json(self.pieces)

    def stored(self) -> tuple[str, str | None]:
        """The reply as a checkpoint writes it: its content, and its parts as JSON text (None:
        text alone), decoding to `json()`. Only what changed since the last call is encoded."""
        return self._stored.update(self.pieces, self.parts)

    def resume(self, earlier: Earlier) -> None:
        """A continued reply starts from what it said: its text, steps and citations stay,
        and new text follows them. Followers are sent only the new text (they have the rest)."""
        for part in earlier.parts:
            if part["type"] == "text":
                if part["text"]:
                    self.parts.text_added(len(self.pieces))
                    self.pieces.append(part["text"])
            elif part["type"] == "tool":
                self.parts.earlier_step(part)
            else:
                source = _source(part)
                self.sources[source["n"]] = source
                if part.get("cited", True):
                    self._cited.add(source["n"])
                self._list(part)
        self.earlier_pieces = len(self.pieces)
        self._chars = sum(map(len, self.pieces))
        self._tail = self.text[-CITE_LOOKBACK:]

    def append(self, text: str) -> bool:
        """Add text to the reply. False once the reply is at its size limit (the text is cut
        there, and the run must end)."""
        if not text:
            return True
        if self.parts.after_step and self.pieces:
            # Text after a tool step starts a new paragraph (in `content` too).
            text = _paragraph_break(self.pieces[-1]) + text
        room = self._max_chars - self._chars
        if len(text) > room:
            self.over_limit = (
                f"the reply reached Parley's limit of {self._max_chars:,} characters and was "
                "cut there (--max-reply-chars)"
            )
            text = text[:room]
            if not text:
                return False
        self._chars += len(text)
        if self.first_token_at is None:
            self.first_token_at = time.monotonic()
        self.parts.text_added(len(self.pieces))
        self.pieces.append(text)
        if self._forward is None:
            self.feed.append(text)
        if self.sources:
            window = self._tail + text
            self._find_citations(window)
            self._tail = window[-CITE_LOOKBACK:]
        if self._forward is None:
            self.changed.set()
        self._on_change()
        return self.over_limit is None

    def add_call_chars(self, count: int) -> bool:
        """A tool call's arguments count with the text against the size limit. False once
        over: the run must end, the call not run."""
        self._chars += count
        if self._chars <= self._max_chars:
            return True
        self.over_limit = (
            f"the model's tool call reached Parley's limit of {self._max_chars:,} "
            "characters and was not run (--max-reply-chars)"
        )
        return False

    def publish(self, item: FeedItem) -> None:
        if self._forward is not None:
            self._forward(item)
            return
        self.feed.append(item)
        self.changed.set()

    def given(self, sources: tuple[CitationPartJSON, ...]) -> None:
        """Passages put in the prompt itself ("Use my documents"): listed with the reply as
        given (`cited: false`) until it cites one, and sent to its followers at once."""
        for source in sources:
            number = source["n"]
            self.sources[number] = source
            if number not in self._cited:
                part: CitationPartJSON = {**source, "cited": False}
                self._list(part)
                self.publish(Cited(part))
        if sources:
            self._on_change()

    def touched(self) -> None:
        """Something inside a part changed (a sub-agent's text): a checkpoint is due; the
        followers are told with the part, when it is sent."""
        self._stored.agents_changed = True
        self._on_change()

    def step_added(self, step: ToolStep) -> None:
        self.parts.step_added(step)

    def step_changed(self, step: ToolStep) -> None:
        step.changed()  # it may have changed in place (a question answered)
        self.publish(StepChanged(step.json()))
        self._on_change()

    def _find_citations(self, text: str) -> None:
        """Cite each source named "[n]" in `text` for the first time (`text` starts with the
        reply's last few characters before it, so a marker cut across deltas is found)."""
        for match in CITATION.finditer(text):
            number = int(match.group(1))
            source = self.sources.get(number)
            if source is not None and number not in self._cited:
                self._cited.add(number)
                self._list(source)
                self.publish(Cited(source))

    def _list(self, part: CitationPartJSON) -> None:
        """List a source under the reply: once (cited, it takes the place it had as given),
        in the order of the numbers."""
        listed = self.parts.citations
        numbers = [cited["n"] for cited in listed]
        at = bisect.bisect_left(numbers, part["n"])
        if at < len(listed) and numbers[at] == part["n"]:
            listed[at] = part
        else:
            listed.insert(at, part)
        self._stored.citations = None


# A text part's JSON around its text (as json.dumps writes it: the stored bytes do not change).
TEXT_OPEN = '{"type": "text", "text": "'
TEXT_CLOSE = '"}'


class _Stored:
    """The reply's content and parts' JSON as last written, with what each was made from.

    Parts are only ever added (ReplyParts) and pieces only appended, so each part keeps its
    encoding at its index: a text part grows by its new pieces escaped (JSON escapes each
    character alone, so the escaped join is the join of the escaped), a step is encoded again
    when its `changes` moved (holding a sub-agent: its own and its sub-agent's steps', or after
    `touched`), a step of an earlier run never. What is left per checkpoint is a look at each
    part and one join of them all, a copy at memory speed.
    """

    def __init__(self) -> None:
        self.content = ""
        self.pieces = 0  # how many pieces `content` joins
        # Per part, its JSON and what it was made from: a text part's end piece, a step's
        # `changes` (an earlier run's step: -1, encoded once).
        self.encoded: list[str] = []
        self.marks: list[int] = []
        self.earlier = False  # a part is an earlier run's step
        self.citations: str | None = None  # the sources listed, encoded (None: to encode)
        self.agents_changed = False  # a sub-agent's step changed inside (`touched`)

    def update(self, pieces: list[str], parts: ReplyParts) -> tuple[str, str | None]:
        if self.pieces < len(pieces):
            self.content += "".join(pieces[self.pieces :])
            self.pieces = len(pieces)
        items, encoded, marks = parts.items, self.encoded, self.marks
        while len(marks) < len(items):
            item = items[len(marks)]
            if isinstance(item, list):
                encoded.append(TEXT_OPEN + TEXT_CLOSE)
                marks.append(item[0])
            elif isinstance(item, ToolStep):
                encoded.append("")
                marks.append(item.all_changes() - 1)
            else:
                encoded.append(_dumps(item))
                marks.append(-1)
                self.earlier = True
        agents_changed, self.agents_changed = self.agents_changed, False
        for at, item in enumerate(items):
            if isinstance(item, ToolStep):
                changes = item.all_changes()
                if marks[at] != changes or (agents_changed and item.agent is not None):
                    encoded[at] = _dumps(item.json())
                    marks[at] = changes
            elif isinstance(item, list) and marks[at] < item[1]:
                more = encode_basestring("".join(pieces[marks[at] : item[1]]))[1:-1]
                encoded[at] = encoded[at][: -len(TEXT_CLOSE)] + more + TEXT_CLOSE
                marks[at] = item[1]
        if not parts.steps and not parts.citations and not self.earlier:
            return self.content, None  # text alone: its parts are its content
        out = encoded.copy()
        if parts.citations:
            if self.citations is None:
                self.citations = ", ".join(map(_dumps, parts.citations))
            out.append(self.citations)
        # The brackets go on the end pieces: the parts are copied once, by the one join.
        out[0] = "[" + out[0]
        out[-1] += "]"
        return self.content, ", ".join(out)


def _dumps(part: object) -> str:
    return json.dumps(part, ensure_ascii=False)


def _source(part: CitationPartJSON) -> CitationPartJSON:
    """A listed source as the model was given it (without its `cited` mark)."""
    source: CitationPartJSON = {
        "type": "citation",
        "n": part["n"],
        "path": part["path"],
        "page": part["page"],
        "lines": part["lines"],
        "quote": part["quote"],
    }
    return source


def _paragraph_break(tail: str) -> str:
    """What starts a new paragraph after text ending with `tail`."""
    if tail.endswith("\n\n"):
        return ""
    return "\n" if tail.endswith("\n") else "\n\n"
