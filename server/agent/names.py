"""The names the model calls tools by: `server__tool`, within OpenAI's function-name rules
(`^[A-Za-z0-9_-]{1,64}$`), so two servers' tools of the same name never collide."""

from __future__ import annotations

import hashlib
import re

MAX_FUNCTION_CHARS = 64
SEPARATOR = "__"


def function_name(server: str, tool: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_-]", "_", f"{server}{SEPARATOR}{tool}")
    if len(name) <= MAX_FUNCTION_CHARS:
        return name
    digest = hashlib.blake2b(name.encode(), digest_size=4).hexdigest()
    return f"{name[: MAX_FUNCTION_CHARS - 9]}_{digest}"
