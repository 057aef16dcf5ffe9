"""The plain fields of a server's entry (server/tools/config.py), checked: strings, lists and
maps of strings, and text that can be written back to the file."""

from __future__ import annotations

import math
from typing import Any

from server.errors import ConfigEntryError


def check_text(value: object, where: str) -> None:
    """Every string is text that can be written (no lone surrogates); no NaN or Infinity."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ConfigEntryError(f"{where} holds text that is not valid Unicode") from exc
    elif isinstance(value, float) and not math.isfinite(value):
        raise ConfigEntryError(f"{where} holds a number that is not finite")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, where)
            check_text(item, f"'{key}'")
    elif isinstance(value, list):
        for item in value:
            check_text(item, where)


def string(entry: dict[str, Any], key: str, *, required: bool = False) -> str:
    value = entry.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip() or "\x00" in value:
        raise ConfigEntryError(f"'{key}' must be a non-empty string")
    return value


def strings(entry: dict[str, Any], key: str) -> None:
    value = entry.get(key, [])
    if not (isinstance(value, list) and all(isinstance(v, str) and "\x00" not in v for v in value)):
        raise ConfigEntryError(f"'{key}' must be a list of strings")


def string_map(entry: dict[str, Any], key: str) -> None:
    value = entry.get(key, {})
    if not (
        isinstance(value, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())
        and not any("\x00" in k + v for k, v in value.items())
    ):
        raise ConfigEntryError(f"'{key}' must be an object of strings")
