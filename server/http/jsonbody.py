"""Reading a JSON request body once, at the boundary, with every check a client can fail."""

from __future__ import annotations

import json
import math
from pathlib import Path

import anyio
from starlette.requests import ClientDisconnect, Request

from server.errors import (
    BadRequestError,
    PayloadTooLargeError,
    RequestTimeoutError,
    UnsupportedMediaTypeError,
)
from server.settings import Limits

# A JSON object as parsed, before its fields are checked (by the functions below).
JSONObject = dict[str, object]


async def read_object(
    request: Request, limits: Limits, *, optional: bool = False, max_bytes: int | None = None
) -> JSONObject:
    """The body as a JSON object, sent in time and within size (`max_bytes`, else the
    limit for every body). Raises 415, 413, 408, 400. `optional`: no body at all is {}."""
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    no_body = request.headers.get("content-length", "0") == "0"
    if optional and not media_type and no_body and "transfer-encoding" not in request.headers:
        return {}
    return parse_object(await read_bytes(request, limits, max_bytes=max_bytes))


async def read_bytes(request: Request, limits: Limits, *, max_bytes: int | None = None) -> bytes:
    """The body of a JSON request, sent in time and within size. Raises 415, 413, 408."""
    max_bytes, timeout = max_bytes or limits.max_body_bytes, limits.body_timeout
    media_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaTypeError(
            "send the body as JSON with 'Content-Type: application/json'"
        )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        raise PayloadTooLargeError(f"the body is larger than {max_bytes} bytes")
    body = bytearray()
    try:
        with anyio.fail_after(timeout):
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_bytes:
                    raise PayloadTooLargeError(f"the body is larger than {max_bytes} bytes")
    except TimeoutError as exc:
        raise RequestTimeoutError(f"the body was not sent within {timeout:g} s") from exc
    except ClientDisconnect as exc:  # nobody is left to read the answer
        raise BadRequestError("the client went away while sending", code="client_gone") from exc
    return bytes(body)


def parse_object(raw: bytes) -> JSONObject:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequestError(f"the body is not valid UTF-8 (byte {exc.start})") from exc
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except RecursionError as exc:
        raise BadRequestError("the JSON is nested too deeply") from exc
    except ValueError as exc:
        if "int_max_str_digits" in str(exc) or ("digits" in str(exc) and "integer" in str(exc)):
            # Python's own message tells the client to change the server's interpreter.
            raise BadRequestError("the body has a number with too many digits") from exc
        raise BadRequestError(f"the body is not valid JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BadRequestError("the body must be a JSON object")
    return value


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def text_field(
    body: JSONObject,
    key: str,
    *,
    max_chars: int,
    required: bool = False,
    allow_empty: bool = True,
) -> str | None:
    """A string field: no lone surrogates, no NUL, within `max_chars`."""
    if key not in body or body[key] is None:
        if required:
            raise BadRequestError(f"'{key}' is required", code="missing_field")
        return None
    value = body[key]
    if not isinstance(value, str):
        raise BadRequestError(f"'{key}' must be a string", code="invalid_field")
    if len(value) > max_chars:
        raise BadRequestError(
            f"'{key}' is longer than {max_chars} characters", code="invalid_field"
        )
    if not allow_empty and not value.strip():
        raise BadRequestError(f"'{key}' must not be empty", code="invalid_field")
    check_text(value, key)
    return value


def string_list(value: object, key: str, *, most: int, max_chars: int, expected: str) -> list[str]:
    """`value` as a list of at most `most` non-empty strings of at most `max_chars` each, each
    valid text; else BadRequestError saying "'key' must be `expected`"."""
    if (
        not isinstance(value, list)
        or len(value) > most
        or not all(isinstance(item, str) and 0 < len(item) <= max_chars for item in value)
    ):
        raise BadRequestError(f"'{key}' must be {expected}", code="invalid_field")
    for item in value:
        check_text(item, key)
    return value


def check_text(value: str, what: str) -> None:
    if "\x00" in value:
        raise BadRequestError(f"'{what}' contains a NUL character", code="invalid_field")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadRequestError(
            f"'{what}' contains an unpaired surrogate (\\u{ord(value[exc.start]):04x})",
            code="invalid_field",
        ) from exc


def number_field(
    body: JSONObject,
    key: str,
    *,
    low: float,
    high: float,
    integer: bool = False,
    label: str | None = None,
) -> float | None:
    """`body[key]`, a number in [low, high] (None if absent or null). Raises BadRequestError
    naming the field (`label`, e.g. "params.seed", else the key)."""
    if key not in body or body[key] is None:
        return None
    value = body[key]
    name = label or key
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRequestError(f"'{name}' must be a number", code="invalid_field")
    if integer and not isinstance(value, int):
        raise BadRequestError(f"'{name}' must be an integer", code="invalid_field")
    if not math.isfinite(value) or not low <= value <= high:
        raise BadRequestError(f"'{name}' must be between {low} and {high}", code="invalid_field")
    return value


def path_field(body: JSONObject, name: str = "path") -> Path:
    """A required absolute path on this machine (not checked for existence).
    Raises BadRequestError naming the field."""
    text = text_field(body, name, max_chars=Limits.max_path_chars, required=True, allow_empty=False)
    path = Path(text or "")
    if not path.is_absolute():
        raise BadRequestError(f"'{name}' must be an absolute path", code="invalid_field")
    return path
