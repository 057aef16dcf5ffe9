"""How a run's reply ended, described once by its settle (server/turns/run.py): completed,
stopped (by whom) or failed, with its text, parts, usage and timings.

A mixin of `Run`: these are the run's own methods; what they use of it is declared here.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from server.agent.steps import ReplyParts
from server.models.base import StreamEnd
from server.storage.turn_rows import Ending
from server.types import EndedBy, ToolCallJSON, Usage


class RunEnding:
    parts: list[str]
    reply: ReplyParts
    stop_reason: EndedBy | None
    model_calls: int
    _info: Usage
    _usage_sum: Usage
    _tool_calls: list[ToolCallJSON] | None
    _earlier_pieces: int
    _started_at: float | None
    _first_token_at: float | None

    if TYPE_CHECKING:  # the Run's

        @property
        def text(self) -> str: ...

    def _ending(self, finished: StreamEnd | None, error: str | None) -> Ending:
        now = time.time()
        usage = self._usage()
        parts = self.reply.json(self.parts)
        if error is not None:
            return Ending(
                content=self.text,
                parts=parts,
                status="error",
                ended_by="error",
                error=error,
                usage=usage,
                completed_at=now,
            )
        if finished is not None:
            return Ending(
                content=self.text,
                parts=parts,
                status="completed",
                ended_by=None,
                usage=usage,
                completed_at=now,
                finish_reason=finished.finish_reason,
                tool_calls=self._tool_calls,
            )
        return Ending(
            content=self.text,
            parts=parts,
            status="interrupted",
            ended_by=self.stop_reason,
            usage=usage,
            completed_at=now,
        )

    def _failed_ending(self, error: str) -> Ending:
        return Ending(
            content=self.text,
            parts=self.reply.json(self.parts),
            status="error",
            ended_by="error",
            error=error,
            completed_at=time.time(),
        )

    def _usage(self) -> Usage:
        usage: Usage = {**self._info, **self._usage_sum}
        if self.model_calls > 1:
            usage["model_calls"] = self.model_calls
        if not isinstance(usage.get("completion_tokens"), int):
            usage["completion_tokens"] = len(self.parts) - self._earlier_pieces
            usage["completion_tokens_estimated"] = True
        if self._started_at is not None and self._first_token_at is not None:
            end = time.monotonic()
            usage["ttft_ms"] = round((self._first_token_at - self._started_at) * 1000, 1)
            gen_s = end - self._first_token_at
            if gen_s > 0 and usage["completion_tokens"] > 1:
                usage["tokens_per_s"] = round((usage["completion_tokens"] - 1) / gen_s, 1)
        return usage
