"""What a line of the engine's log (llama.cpp's, on the engine process's stderr) is worth in
Parley's log: its level there, or nothing.

llama.cpp marks each line with its own level ("0.00.004.120 E llama_model_load: error
loading model: …"). Its errors are Parley's errors and its warnings Parley's warnings,
except the warnings its server gives in normal use, which are detail: a user who stops a
reply, or goes back to a conversation the engine has cached whole, has done nothing that
deserves a line on the terminal. Unmarked lines (the continuation of a multi-line record)
are detail too.
"""

from __future__ import annotations

import logging
import re

# "0.00.004.120 E llama_model_load: error loading model: …"
LOG_LINE = re.compile(r"^[\d.]+ ([EWID]) (.*)$")

# Warnings llama.cpp's server gives in normal use, each for a reason that is not a fault:
ROUTINE_WARNINGS = (
    # a client hung up (Stop, a closed window, a cancelled request): its task is cancelled
    "stop: cancel task",
    # a prompt cached whole: the last token is evaluated again to sample from it
    "need to evaluate at least 1 token",
    "n_past was set to",
)

LEVELS = {"E": logging.ERROR, "W": logging.WARNING, "I": logging.DEBUG, "D": logging.DEBUG}


def classify(raw: bytes) -> tuple[int, str] | None:
    """The level and text of one line of the engine's stderr in Parley's log; None for a
    blank line."""
    line = raw.decode("utf-8", "replace").rstrip()
    match = LOG_LINE.match(line)
    mark, text = match.groups() if match else ("D", line)
    if not text.strip():
        return None
    level = LEVELS[mark]
    if level == logging.WARNING and any(routine in text for routine in ROUTINE_WARNINGS):
        level = logging.DEBUG
    return level, text
