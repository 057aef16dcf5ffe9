"""Kill `parley-server` with SIGKILL mid-reply, restart it, and check what survived.

One `CrashRun` keeps one data dir across many kills. Each round: start the server, send a
message (into the same conversation for a few rounds, then a new one), read the reply with the
arrival time of every chunk, SIGKILL at a random moment, check the files as the crash left them
(`PRAGMA integrity_check`), restart, and check through the API that every acknowledged user
message is there, that the interrupted reply is marked `crash`, that its text is a prefix of
what the upstream sent, and how much delivered text was lost (as ms of the stream).
Used by tests/server/test_crash_safety.py (a few rounds) and bench/crash.py (the big run).
"""

from __future__ import annotations

import http.client
import json
import random
import sqlite3
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.client import request
from tests.support.process import ServerProcess

ROUNDS_PER_CONVERSATION = 4


@dataclass
class Round:
    kill_after_s: float
    acknowledged: bool = False
    delivered: str = ""
    stored: str = ""
    lost_ms: float = 0.0  # from the first delivered character not stored to the kill
    violations: list[str] = field(default_factory=list)


@dataclass
class CrashRun:
    data_dir: Path
    upstream_url: str | None  # None: the bundled local model
    expected_text: str | None  # what the upstream streams, to check stored text against
    seed: int = 0
    max_kill_after_s: float = 1.5
    # False: the kill moment counts from sending (it may land before the acknowledgement);
    # True: from the acknowledgement, so every round has an acknowledged message.
    from_ack: bool = False
    rounds: list[Round] = field(default_factory=list)
    acknowledged: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (conv, text)
    _conversation: str | None = None

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)

    @property
    def db_path(self) -> Path:
        return self.data_dir / "parley.sqlite3"

    def round(self) -> Round:
        number = len(self.rounds)
        current = Round(kill_after_s=self._random.uniform(0.0, self.max_kill_after_s))
        self.rounds.append(current)
        process = ServerProcess(self.data_dir, self.upstream_url).start()
        try:
            if self._conversation is None or number % ROUNDS_PER_CONVERSATION == 0:
                self._conversation = process.new_conversation()
            content = f"message {number}: {'x' * self._random.randrange(0, 200)}"
            arrivals, message_id, killed_at = self._stream_then_kill(process, content, current)
        finally:
            process.ensure_stopped()
        self._check_files(current)
        restarted = ServerProcess(self.data_dir, self.upstream_url).start()
        try:
            self._check_after_restart(restarted, current, message_id, arrivals, killed_at)
        finally:
            restarted.kill()  # the next round starts on what a crash left, again
        return current

    def _stream_then_kill(
        self, process: ServerProcess, content: str, current: Round
    ) -> tuple[list[tuple[float, str]], str | None, float]:
        assert self._conversation is not None
        conn = http.client.HTTPConnection("127.0.0.1", process.port, timeout=10)
        started = time.monotonic()
        deadline = started + current.kill_after_s
        arrivals: list[tuple[float, str]] = []
        message_id = None
        try:
            conn.request(
                "POST",
                f"/api/conversations/{self._conversation}/messages",
                body=json.dumps({"content": content}).encode(),
                headers={
                    "Host": f"127.0.0.1:{process.port}",
                    "Authorization": f"Bearer {process.token}",
                    "Content-Type": "application/json",
                },
            )
            # Tokens come every 10 ms: a blocking read overshoots the deadline by about that.
            if self.from_ack:
                deadline = float("inf")  # until the acknowledgement, then the drawn delay
            response = conn.getresponse() if time.monotonic() < deadline else None
            while response is not None and time.monotonic() < deadline:
                line = response.readline()
                if not line:
                    break
                now = time.monotonic()
                event = _event(line)
                if event is None:
                    continue
                if "user_message_id" in event and not current.acknowledged:
                    current.acknowledged = True
                    if self.from_ack:
                        deadline = now + current.kill_after_s
                    message_id = event["message_id"]
                    self.acknowledged[event["user_message_id"]] = (self._conversation, content)
                for choice in event.get("choices") or []:
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        arrivals.append((now, text))
            killed_at = time.monotonic()
            process.kill()
        finally:
            conn.close()
        current.delivered = "".join(text for _, text in arrivals)
        return arrivals, message_id, killed_at

    def _check_files(self, current: Round) -> None:
        conn = sqlite3.connect(self.db_path)
        try:
            result = conn.execute("PRAGMA integrity_check").fetchone()[0]
        finally:
            conn.close()
        if result != "ok":
            current.violations.append(f"integrity_check after the kill: {result}")

    def _check_after_restart(
        self,
        process: ServerProcess,
        current: Round,
        message_id: str | None,
        arrivals: list[tuple[float, str]],
        killed_at: float,
    ) -> None:
        by_id: dict[str, dict[str, Any]] = {}
        for conversation_id in {conv for conv, _ in self.acknowledged.values()}:
            reply = request(
                process.port, "GET", f"/api/conversations/{conversation_id}", token=process.token
            )
            if reply.status != 200:
                current.violations.append(f"conversation {conversation_id}: HTTP {reply.status}")
                continue
            by_id.update({m["id"]: m for m in reply.json()["messages"]})
        for user_id, (_, content) in self.acknowledged.items():
            if by_id.get(user_id, {}).get("content") != content:
                current.violations.append(f"acknowledged user message {user_id} missing")
        if message_id is None:
            return  # killed before the reply began: nothing was promised
        message = by_id.get(message_id)
        if message is None:
            current.violations.append("the interrupted reply's row is gone")
            return
        current.stored = message["content"]
        ending = (message["status"], message["ended_by"])
        if ending != ("interrupted", "crash") and message["status"] != "completed":
            current.violations.append(f"reply ended as {ending}, not interrupted/crash")
        if self.expected_text is not None and not self.expected_text.startswith(current.stored):
            current.violations.append("stored text is not a prefix of what the upstream sent")
        current.lost_ms = _lost_ms(arrivals, len(current.stored), killed_at)


def _event(line: bytes) -> dict[str, Any] | None:
    if not line.startswith(b"data: ") or line.startswith(b"data: [DONE]"):
        return None
    event: dict[str, Any] = json.loads(line[6:])
    return event


def _lost_ms(arrivals: list[tuple[float, str]], stored_chars: int, killed_at: float) -> float:
    """How long before the kill the first delivered-but-unsaved character arrived."""
    offset = 0
    for arrived, text in arrivals:
        if offset + len(text) > stored_chars:
            return (killed_at - arrived) * 1000
        offset += len(text)
    return 0.0
