"""llama.cpp's output goes to Parley's log, not to the terminal.

Two sources print while a model loads and generates: llama.cpp itself (its C log: model
details, per-generation timings) and llama-cpp-python's Python side (`print(..., file=
sys.stderr)`: the model's metadata, its chat template, cache notes). Left alone they fill the
terminal of `parley` at every launch. Here the C log goes to the `llama.cpp` logger at its
own level (warnings and errors show; the rest is debug), and the Python side's prints to
the same logger at debug level.
"""

from __future__ import annotations

import ctypes
import logging
from types import ModuleType
from typing import Any

log = logging.getLogger("llama.cpp")

# ggml_log_level: NONE, DEBUG, INFO, WARN, ERROR, CONT (continues the previous message).
_LEVELS = {0: logging.DEBUG, 1: logging.DEBUG, 2: logging.DEBUG, 3: logging.WARNING,
           4: logging.ERROR}  # fmt: skip
_CONT = 5

_callback: Any = None  # C holds a pointer to it: it must live as long as the process


def route_to_log(low_level: ModuleType, python_side: ModuleType) -> None:
    """Install both routes, once per process. `low_level` is `llama_cpp.llama_cpp`,
    `python_side` is `llama_cpp.llama` (whose module-level `print` is replaced)."""
    global _callback
    if _callback is not None:
        return
    last_level = [logging.DEBUG]

    def on_native(level: int, text: bytes, _data: object) -> None:
        py_level = last_level[0] if level == _CONT else _LEVELS.get(level, logging.DEBUG)
        last_level[0] = py_level
        if log.isEnabledFor(py_level):
            message = text.decode("utf-8", "replace").rstrip()
            if message:
                log.log(py_level, "%s", message)

    _callback = low_level.llama_log_callback(on_native)
    low_level.llama_log_set(_callback, ctypes.c_void_p(0))
    python_side.print = _print_to_log  # type: ignore[attr-defined]


def _print_to_log(*values: object, **_options: object) -> None:
    if log.isEnabledFor(logging.DEBUG):
        log.debug("%s", " ".join(str(v) for v in values).rstrip())
