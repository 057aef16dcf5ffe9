"""What a loop's model calls reported, for its reply's usage."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.types import Usage

# Token counts summed over a turn's model calls; other usage fields are the last call's.
SUMMED_USAGE = ("prompt_tokens", "completion_tokens", "total_tokens")


@dataclass
class CallStats:
    model_calls: int = 0
    started_at: float | None = None  # the first call's start (monotonic)
    # The start of the call that gave the reply's first token: "first token" counts from it,
    # so a wait for the user's approval (or a tool) before it is not the model's.
    first_token_call: float | None = None
    info: Usage = field(default_factory=dict)  # a stream's own figures (the last call's)
    summed: Usage = field(default_factory=dict)  # token counts summed over the calls

    def add(self, reported: Usage | None) -> None:
        for key, value in (reported or {}).items():
            if key in SUMMED_USAGE:
                self.summed[key] = self.summed.get(key, 0) + value
            else:
                self.summed[key] = value
