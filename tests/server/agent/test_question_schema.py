"""An answer to a server's form is checked against MCP's restricted schema before the
server sees it: each refusal names the field and says what does not fit."""

from __future__ import annotations

from typing import Any

import pytest

from server.agent.question_schema import check_answer
from server.errors import BadRequestError

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email"},
        "day": {"type": "string", "format": "date"},
        "site": {"type": "string", "format": "uri"},
        "size": {"type": "string", "enum": ["S", "M", "L"]},
        "tier": {"type": "string", "oneOf": [{"const": "free", "title": "Free"}]},
        "code": {"type": "string", "minLength": 2, "maxLength": 4},
        "ratio": {"type": "number", "minimum": 0, "maximum": 1},
        "count": {"type": "integer"},
        "ok": {"type": "boolean"},
        "tags": {
            "type": "array",
            "items": {"anyOf": [{"const": "a"}, {"const": "b"}]},
            "minItems": 1,
            "maxItems": 2,
        },
        "other": {"type": "mystery"},
    },
    "required": ["ok"],
}


def test_an_answer_that_fits_is_taken_and_a_null_value_left_out() -> None:
    answer = {
        "email": "ada@example.com",
        "day": "2026-12-06",
        "site": "https://example.com",
        "size": "M",
        "tier": "free",
        "code": "abc",
        "ratio": 0.5,
        "count": 3,
        "ok": True,
        "tags": ["a", "b"],
        "other": "anything",
        "day_note": None,
    }
    with pytest.raises(BadRequestError, match="no field 'day_note'"):
        check_answer(SCHEMA, answer)
    del answer["day_note"]
    assert check_answer(SCHEMA, {**answer, "code": None}) == {
        k: v for k, v in answer.items() if k != "code"
    }


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("email", "not-an-address", "'email' must be an email address"),
        ("day", "06/12/2026", "'day' must be a date"),
        ("site", "no scheme", "'site' must be a URI"),
        ("size", "XL", "'size' must be one of 'S', 'M', 'L'"),
        ("tier", "pro", "'tier' must be one of 'free'"),
        ("code", "a", "'code' must be at least 2 characters"),
        ("code", "abcde", "'code' must be at most 4 characters"),
        ("ratio", 2, "'ratio' must be at most 1"),
        ("ratio", True, "'ratio' must be a number"),
        ("count", 1.5, "'count' must be a whole number"),
        ("ok", "yes", "'ok' must be true or false"),
        ("tags", ["c"], "'tags' cannot hold 'c'"),
        ("tags", [], "'tags' must hold at least 1"),
        ("tags", ["a", "b", "a"], "'tags' must hold at most 2"),
        ("tags", [1], "'tags' must be a list of strings"),
        ("other", [1, 2], "'other' must be a string, a number, true/false or a list of strings"),
        ("other", {"nested": 1}, "'other' must be"),
    ],
)
def test_a_value_that_does_not_fit_is_refused_naming_its_field(
    field: str, value: object, says: str
) -> None:
    with pytest.raises(BadRequestError, match=says) as refused:
        check_answer(SCHEMA, {"ok": True, field: value})
    assert refused.value.code == "invalid_answer"


def test_a_missing_required_field_is_refused() -> None:
    with pytest.raises(BadRequestError, match="the field 'ok' is required"):
        check_answer(SCHEMA, None)
