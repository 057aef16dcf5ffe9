"""A conversation's own sampling parameters, used by every later turn of it.

`PATCH /api/conversations/{id}` with `"params": {"temperature", "top_p", "max_tokens",
"seed"}`: a value sets one, null clears it, a key left out keeps it; `"params": null` clears
them all. Bad values are a 400 naming the field ("params.top_p")."""

from __future__ import annotations

import json

from server.errors import BadRequestError
from server.http.jsonbody import JSONObject, number_field
from server.types import ChatParams

SEED_RANGE = 2**63 - 1


def updated_params(current: ChatParams, value: object, max_reply_tokens: int) -> ChatParams:
    """`current` with the change a PATCH body's `params` asks for."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise BadRequestError("'params' must be an object or null", code="invalid_field")
    unknown = sorted(set(value) - set(ChatParams.__annotations__))
    if unknown:
        raise BadRequestError(
            f"'params.{unknown[0]}' is not a parameter "
            "(known: temperature, top_p, max_tokens, seed)",
            code="invalid_field",
        )
    found = _checked(value, max_reply_tokens)
    merged: dict[str, float | int] = {
        k: v for k, v in current.items() if isinstance(v, int | float)
    }
    for key in value:
        if value[key] is None:
            merged.pop(key, None)
        else:
            merged[key] = found[key]
    return _typed(merged)


def _checked(value: JSONObject, max_reply_tokens: int) -> dict[str, float | int]:
    ranges: dict[str, tuple[float, float, bool]] = {
        "temperature": (0, 2, False),
        "top_p": (0, 1, False),
        "max_tokens": (1, max_reply_tokens, True),
        "seed": (-SEED_RANGE, SEED_RANGE, True),
    }
    found: dict[str, float | int] = {}
    for key, (low, high, integer) in ranges.items():
        number = number_field(
            value, key, low=low, high=high, integer=integer, label=f"params.{key}"
        )
        if number is not None:
            found[key] = number
    return found


def _typed(values: dict[str, float | int]) -> ChatParams:
    params: ChatParams = {}
    if "temperature" in values:
        params["temperature"] = float(values["temperature"])
    if "top_p" in values:
        params["top_p"] = float(values["top_p"])
    if "max_tokens" in values:
        params["max_tokens"] = int(values["max_tokens"])
    if "seed" in values:
        params["seed"] = int(values["seed"])
    return params


def encode(params: ChatParams) -> str | None:
    return json.dumps(params) if params else None


def decode(stored: str | None) -> ChatParams:
    """A stored value; what is not a known parameter of the right kind is left out."""
    try:
        loaded = json.loads(stored) if stored else {}
    except ValueError:
        return {}
    if not isinstance(loaded, dict):
        return {}
    values = {
        key: value
        for key, value in loaded.items()
        if key in ChatParams.__annotations__
        and isinstance(value, int | float)
        and not isinstance(value, bool)
    }
    return _typed(values)
