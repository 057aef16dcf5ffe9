"""What an imported tool step says of its consent — why the injection guard asked (`guard`)
and who let the call run (`allowed`) — read as hostile input: the window shows these words
("Allowed by you", "Parley asked because …") as Parley's own, so a file may not put
anything there that Parley would not have written. Absent is fine (older files, calls never
run); present, each must have the shape and the values the server writes."""

from __future__ import annotations

from typing import Any, get_args, get_type_hints

from server.errors import BadImport
from server.limits import TransferLimits
from server.transfer.text import checked_text
from server.types import AllowedJSON, SourceKind

ALLOWED_BY: tuple[str, ...] = get_args(get_type_hints(AllowedJSON)["by"])
ALLOWED_SCOPES: tuple[str, ...] = get_args(get_type_hints(AllowedJSON)["scope"])
SOURCE_KINDS: tuple[str, ...] = get_args(SourceKind)
SOURCE_TEXTS = ("label", "excerpt", "server", "tool", "call_id", "path", "message_id")


def check_consent(part: dict[str, Any], where: str, max_chars: int) -> None:
    """Raise BadImport unless the step's `allowed` and `guard` are absent or as Parley
    writes them."""
    allowed = part.get("allowed")
    if allowed is not None:
        _allowed(allowed, f"{where}.allowed", max_chars)
    guard = part.get("guard")
    if guard is not None:
        _guard(guard, f"{where}.guard", max_chars)


def _allowed(value: object, where: str, max_chars: int) -> None:
    if not isinstance(value, dict):
        raise BadImport(where, "must be an object")
    if value.get("by") not in ALLOWED_BY:
        raise BadImport(f"{where}.by", f"must be one of {', '.join(ALLOWED_BY)}")
    if value.get("scope") not in ALLOWED_SCOPES:
        raise BadImport(f"{where}.scope", f"must be one of {', '.join(ALLOWED_SCOPES)}")
    for key in ("argument", "under"):
        _optional_text(value, key, where, max_chars)


def _guard(value: object, where: str, max_chars: int) -> None:
    if not isinstance(value, dict):
        raise BadImport(where, "must be an object")
    if not isinstance(value.get("reason"), str):
        raise BadImport(f"{where}.reason", "must be a string")
    _optional_text(value, "reason", where, max_chars)
    sources = value.get("sources")
    if not isinstance(sources, list) or len(sources) > TransferLimits.step_sources:
        raise BadImport(
            f"{where}.sources", f"must be a list of at most {TransferLimits.step_sources}"
        )
    for index, source in enumerate(sources):
        at = f"{where}.sources[{index}]"
        if not isinstance(source, dict) or source.get("kind") not in SOURCE_KINDS:
            raise BadImport(at, f"must be an object of kind {', '.join(SOURCE_KINDS)}")
        for key in SOURCE_TEXTS:
            _optional_text(source, key, at, max_chars)


def _optional_text(item: dict[str, Any], key: str, where: str, max_chars: int) -> None:
    value = item.get(key)
    if value is None:
        return
    if not isinstance(value, str):
        raise BadImport(f"{where}.{key}", "must be a string")
    checked_text(value, f"{where}.{key}", max_chars)
