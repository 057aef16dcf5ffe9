"""The hub's bounds and timeouts, in one place (they belong in server.settings.Limits once
that file is open to this package)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HubLimits:
    # An API answer (search, a repository's files) larger than this is refused, not parsed.
    max_answer_bytes: int = 8 * 1024 * 1024
    # Seconds: to connect, and between two reads of an answer or a download.
    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    # Seconds for a whole API answer, however slowly it drips.
    answer_deadline: float = 60.0
    search_results: int = 50
    # How often a download's bytes on disk are read (progress, and the size bound).
    poll_interval: float = 0.2
    # The window the rate (and so the time left) is measured over.
    rate_window: float = 3.0
    # Free space a download leaves on its disk (a full disk stops everything else too).
    disk_reserve: int = 256 * 1024 * 1024
    # What a download child writes to disk at a time (huggingface_hub's default is 10 MiB):
    # the step of the progress, and at most what a kill loses.
    chunk_bytes: int = 1024 * 1024
    # The child's own last words (a JSON line, and its stderr tail) are read up to this.
    child_output_bytes: int = 64 * 1024
