"""What the local engine did for one reply, in this process's clock (time.perf_counter):
kept by the local backend (its last replies) for tests and benchmarks to read."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class GenerationStats:
    """One reply given the model (a slot), in this process's clock (time.perf_counter)."""

    started: float
    asked: str = ""  # the start of the last message (which request this was, for diagnosis)
    opening: str = ""  # the start of the first (the system prompt, a summary in force)
    prefill_started: float | None = None  # the request went to the engine
    token_times: list[float] = field(default_factory=list)
    stop_requested_at: float | None = None
    returned_at: float | None = None  # the stream from the engine is closed
