"""How a run's reply ended, described once by its settle (server/turns/run.py): completed,
stopped (by whom) or failed, with its text, parts, usage and timings."""

from __future__ import annotations

import time

from server.agent.buffer import ReplyBuffer
from server.agent.loop import AgentLoop
from server.models.base import StreamEnd
from server.storage.turn_rows import Ending
from server.turns.length_cut import context_full
from server.types import EndedBy, Usage
from server.types.chunks import CONTEXT_FULL


def ending_of(
    buffer: ReplyBuffer,
    agent: AgentLoop,
    stop_reason: EndedBy | None,
    finished: StreamEnd | None,
    error: str | None,
) -> Ending:
    """The reply's ending: an error, a completion (the last model call finished), or else an
    interruption by `stop_reason`."""
    now = time.time()
    usage = usage_of(buffer, agent)
    text, parts = buffer.text, buffer.json()
    if error is not None:
        return Ending(
            content=text,
            parts=parts,
            status="error",
            ended_by="error",
            error=error,
            usage=usage,
            completed_at=now,
        )
    if finished is not None:
        if context_full(finished, agent.stats.info, agent.model.backend.context_length):
            usage[CONTEXT_FULL] = 1  # cut at "length" by the context, not by max_tokens
        return Ending(
            content=text,
            parts=parts,
            status="completed",
            ended_by=None,
            usage=usage,
            completed_at=now,
            finish_reason=finished.finish_reason,
            tool_calls=agent.tool_calls,
        )
    return Ending(
        content=text,
        parts=parts,
        status="interrupted",
        ended_by=stop_reason,
        usage=usage,
        completed_at=now,
    )


def failed_ending(buffer: ReplyBuffer, error: str) -> Ending:
    """The ending when describing it failed: the text and parts, with the error."""
    return Ending(
        content=buffer.text,
        parts=buffer.json(),
        status="error",
        ended_by="error",
        error=error,
        completed_at=time.time(),
    )


def usage_of(buffer: ReplyBuffer, agent: AgentLoop) -> Usage:
    stats = agent.stats
    usage: Usage = {**stats.info, **stats.summed}
    if stats.model_calls > 1:
        usage["model_calls"] = stats.model_calls
    if not isinstance(usage.get("completion_tokens"), int):
        usage["completion_tokens"] = len(buffer.pieces) - buffer.earlier_pieces
        usage["completion_tokens_estimated"] = True
    began = stats.first_token_call or stats.started_at
    if began is not None and buffer.first_token_at is not None:
        end = time.monotonic()
        usage["ttft_ms"] = round((buffer.first_token_at - began) * 1000, 1)
        gen_s = end - buffer.first_token_at
        if gen_s > 0 and usage["completion_tokens"] > 1:
            usage["tokens_per_s"] = round((usage["completion_tokens"] - 1) / gen_s, 1)
    return usage
