"""The keys the desktop checks in the server's answers are read from the wire's TypedDicts,
so a field added there cannot be left out here."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import NotRequired, Required, TypedDict, is_typeddict

import pytest

from desktop.client.answers import STEP_KEYS, shaped
from desktop.errors import ClientError
from server.types import ToolPartJSON
from server.types.keys import required_keys

ROOT = Path(__file__).resolve().parents[3]


class Shape(TypedDict):
    kept: str
    maybe: NotRequired[int]


class Loose(TypedDict, total=False):
    needed: Required[str]
    extra: int


class Grown(Shape):
    added: str


def test_not_required_keys_are_not_required_under_postponed_annotations() -> None:
    assert required_keys(Shape) == ("kept",)
    assert required_keys(Loose) == ("needed",)


def test_a_field_added_to_a_shape_is_required_at_once() -> None:
    assert required_keys(Grown) == ("kept", "added")
    with pytest.raises(ClientError):
        shaped(Grown, (), {"kept": "x"})
    assert shaped(Grown, (), {"kept": "x", "added": "y"}) == {"kept": "x", "added": "y"}


def test_the_step_keys_are_the_tool_parts_required_keys() -> None:
    assert set(STEP_KEYS) == set(required_keys(ToolPartJSON))
    assert "started_at" in STEP_KEYS and "agent" not in STEP_KEYS


def _lists() -> list[tuple[str, str, str]]:
    """Every `shaped(Kind, NAME_KEYS, …)` and `_object(Kind, NAME_KEYS, …)` in desktop/client:
    (module, kind, list's name)."""
    found = set()
    for path in sorted((ROOT / "desktop" / "client").glob("*.py")):
        module = "desktop.client" + ("" if path.stem == "__init__" else f".{path.stem}")
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and len(node.args) >= 2):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            kind, keys = node.args[0], node.args[1]
            if (
                name in ("shaped", "_object")
                and isinstance(kind, ast.Name)
                and isinstance(keys, ast.Name)
                and keys.id.endswith("_KEYS")
                and kind.id != "dict"
            ):
                found.add((module, kind.id, keys.id))
    return sorted(found)


@pytest.mark.parametrize(("module", "kind", "keys"), _lists(), ids=lambda v: str(v))
def test_every_list_of_keys_covers_its_shapes_required_keys(
    module: str, kind: str, keys: str
) -> None:
    namespace = vars(importlib.import_module(module))
    shape = namespace[kind]
    assert is_typeddict(shape)
    assert set(namespace[keys]) >= set(required_keys(shape)), f"{keys} misses fields of {kind}"
