"""Files Parley writes whole: to a temporary file beside the target, then renamed over it,
so a crash leaves the old content or the new one, never half of either.

A file the user made a symlink stays one: the link's target is written. The file
keeps its mode; a new one is the user's alone (0600: it may hold an API key or a header)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path


def write_json_atomically(path: Path, payload: object) -> None:
    """Raises OSError; the old file is then untouched."""
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mode = None
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}-")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            if mode is not None and hasattr(os, "fchmod"):
                os.fchmod(file.fileno(), mode)
            json.dump(payload, file, indent=2, ensure_ascii=False)
            file.write("\n")
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
