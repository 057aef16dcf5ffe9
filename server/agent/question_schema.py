"""An answer to a server's form checked against the schema it asked with.

MCP's elicitation schema is a restricted JSON Schema: a flat object whose properties are
strings (length, `format` email/uri/date/date-time, `enum` or `oneOf` of `const`s), numbers,
integers (`minimum`/`maximum`), booleans, or arrays of strings chosen from a list (`items`
with `enum` or `anyOf` of `const`s; `minItems`/`maxItems`). An answer that does not fit is
refused with a message naming the field, before the server sees anything: the question stays
asked and can be answered again.
"""

from __future__ import annotations

import datetime
import re
from typing import TypeGuard

from server.errors import BadRequestError

EMAIL = re.compile(r"[^@\s]+@[^@\s]+")
URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:\S+")


def check_answer(schema: dict[str, object], content: object) -> dict[str, object]:
    """The accepted content, as the server is sent it (a null value is left out, as an
    absent one). Raises BadRequestError (code `invalid_answer`) saying what does not fit."""
    if content is None:
        content = {}
    if not isinstance(content, dict):
        raise _invalid("'content' must be an object of the form's fields")
    properties = schema.get("properties")
    fields = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    needed = [n for n in required if isinstance(n, str)] if isinstance(required, list) else []
    answer: dict[str, object] = {}
    for name, value in content.items():
        if name not in fields:
            raise _invalid(f"the form has no field {name!r}")
        if value is None:
            continue
        field = fields[name]
        _check(name, field if isinstance(field, dict) else {}, value)
        answer[name] = value
    missing = [name for name in needed if name not in answer]
    if missing:
        raise _invalid(f"the field {missing[0]!r} is required")
    return answer


def _check(name: str, field: dict[str, object], value: object) -> None:
    kind = field.get("type")
    if kind == "string":
        _check_string(name, field, value)
    elif kind in ("number", "integer"):
        _check_number(name, field, value, whole=kind == "integer")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise _invalid(f"{name!r} must be true or false")
    elif kind == "array":
        _check_choices(name, field, value)
    elif not isinstance(value, (str, int, float, bool)) and not _strings(value):
        # a kind MCP does not define: any value an answer can carry
        raise _invalid(f"{name!r} must be a string, a number, true/false or a list of strings")


def _check_string(name: str, field: dict[str, object], value: object) -> None:
    if not isinstance(value, str):
        raise _invalid(f"{name!r} must be a string")
    allowed = _consts(field)
    if allowed is not None and value not in allowed:
        raise _invalid(f"{name!r} must be one of {', '.join(map(repr, allowed))}")
    least, most = field.get("minLength"), field.get("maxLength")
    if isinstance(least, int) and len(value) < least:
        raise _invalid(f"{name!r} must be at least {least} characters long")
    if isinstance(most, int) and len(value) > most:
        raise _invalid(f"{name!r} must be at most {most} characters long")
    form = field.get("format")
    if form == "email" and not EMAIL.fullmatch(value):
        raise _invalid(f"{name!r} must be an email address")
    if form == "uri" and not URI.fullmatch(value):
        raise _invalid(f"{name!r} must be a URI")
    if form in ("date", "date-time"):
        try:
            if form == "date":
                datetime.date.fromisoformat(value)
            else:
                datetime.datetime.fromisoformat(value)
        except ValueError:
            raise _invalid(f"{name!r} must be a {form} (ISO 8601)") from None


def _check_number(name: str, field: dict[str, object], value: object, *, whole: bool) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _invalid(f"{name!r} must be a number")
    if whole and not (isinstance(value, int) or value.is_integer()):
        raise _invalid(f"{name!r} must be a whole number")
    least, most = field.get("minimum"), field.get("maximum")
    if isinstance(least, (int, float)) and value < least:
        raise _invalid(f"{name!r} must be at least {least}")
    if isinstance(most, (int, float)) and value > most:
        raise _invalid(f"{name!r} must be at most {most}")


def _check_choices(name: str, field: dict[str, object], value: object) -> None:
    if not _strings(value):
        raise _invalid(f"{name!r} must be a list of strings")
    items = field.get("items")
    allowed = _consts(items) if isinstance(items, dict) else None
    wrong = [v for v in value if allowed is not None and v not in allowed]
    if wrong:
        raise _invalid(f"{name!r} cannot hold {wrong[0]!r}")
    least, most = field.get("minItems"), field.get("maxItems")
    if isinstance(least, int) and len(value) < least:
        raise _invalid(f"{name!r} must hold at least {least} choices")
    if isinstance(most, int) and len(value) > most:
        raise _invalid(f"{name!r} must hold at most {most} choices")


def _strings(value: object) -> TypeGuard[list[str]]:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _consts(field: dict[str, object]) -> list[object] | None:
    """The values a field is chosen from (`enum`, or the `const`s of `oneOf`/`anyOf`)."""
    enum = field.get("enum")
    if isinstance(enum, list):
        return enum
    for key in ("oneOf", "anyOf"):
        options = field.get(key)
        if isinstance(options, list):
            return [o.get("const") for o in options if isinstance(o, dict)]
    return None


def _invalid(message: str) -> BadRequestError:
    return BadRequestError(message, code="invalid_answer")
