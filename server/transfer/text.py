"""The one rule for text read from an imported file: within its bound, no NUL, valid Unicode
(an unpaired surrogate could not be stored or sent)."""

from __future__ import annotations

from server.errors import BadImport


def checked_text(value: str, where: str, max_chars: int) -> str:
    if len(value) > max_chars:
        raise BadImport(where, f"is longer than {max_chars:,} characters")
    if "\x00" in value:
        raise BadImport(where, "contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadImport(where, "contains an unpaired surrogate") from exc
    return value
