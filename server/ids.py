"""New ids for rows (conversations, messages, library folders): random, 32 hex digits."""

from __future__ import annotations

import uuid


def new_id() -> str:
    return uuid.uuid4().hex
