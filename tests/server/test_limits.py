"""Every deadline lives in Limits, in the order its docstring gives; a config that breaks it
is refused."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from server.settings import Limits

# (shorter, longer): the order written in the Limits docstring.
ORDER = [
    ("stop_timeout", "shutdown_runs_wait"),
    ("shutdown_runs_wait", "graceful_shutdown"),
    ("graceful_shutdown", "server_stop_wait"),
    ("settle_bound", "settled_wait"),
]


def test_the_defaults_keep_the_order() -> None:
    limits = Limits()
    for shorter, longer in ORDER:
        assert getattr(limits, shorter) < getattr(limits, longer), (shorter, longer)
    # The settle's worst case: the stop, then every final-write attempt with its pauses.
    assert limits.settle_bound == pytest.approx(5.0 + 3 * 5.0 + 0.2 + 0.4)


def test_the_desktop_waits_have_the_agreed_names_and_defaults() -> None:
    limits = Limits()
    assert (limits.close_settle_wait, limits.server_start_wait, limits.server_stop_wait) == (
        2.0,
        15.0,
        10.0,
    )


def test_close_settle_wait_need_not_exceed_stop_timeout() -> None:
    # A UI bound: the server stop that follows settles whatever is left (see the docstring).
    limits = Limits()
    assert limits.close_settle_wait < limits.stop_timeout
    Limits(close_settle_wait=0.5, stop_timeout=5.0)


def test_checkpoints_leave_a_margin_under_the_crash_loss_promise() -> None:
    assert Limits().checkpoint_interval <= 0.25 / 2


@pytest.mark.parametrize(("shorter", "longer"), ORDER)
def test_a_config_that_breaks_the_order_is_refused(shorter: str, longer: str) -> None:
    defaults = Limits()
    if shorter == "settle_bound":  # derived: break it through the longer side
        changes = {longer: defaults.settle_bound}
    else:
        changes = {shorter: getattr(defaults, longer)}
    with pytest.raises(ValueError, match=shorter):
        dataclasses.replace(defaults, **changes)


@pytest.mark.parametrize("name", ["stop_timeout", "settled_wait", "checkpoint_interval"])
def test_a_deadline_must_be_positive(name: str) -> None:
    with pytest.raises(ValueError, match=name):
        Limits(**{name: 0.0})


def is_literal(node: ast.expr) -> bool:
    """A number or None written in place; not a flag (`yield_on_timeout=True`)."""
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool)


def literal_deadlines(source: str) -> list[str]:
    """Calls in `source` that give a deadline as a number of their own: `timeout=5`,
    `rust_timeout=100`, `move_on_after(1)`, `fail_after(2.5)`, `wait_for(x, 3)`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        numbers = [k.value for k in node.keywords if k.arg and k.arg.endswith("timeout")]
        if name in ("move_on_after", "fail_after") and node.args:
            numbers.append(node.args[0])
        if name == "wait_for" and len(node.args) > 1:
            numbers.append(node.args[1])
        found += [ast.unparse(node) for n in numbers if is_literal(n)]
    return found


def test_no_server_module_has_a_deadline_of_its_own() -> None:
    """Every timeout is named in server/limits.py (issue 40), not written inline."""
    root = Path(__file__).resolve().parents[2] / "server"
    inline = {
        str(path.relative_to(root)): found
        for path in sorted(root.rglob("*.py"))
        if (found := literal_deadlines(path.read_text(encoding="utf-8")))
    }
    assert not inline


def test_the_inline_deadline_check_finds_one() -> None:
    source = "anyio.move_on_after(1)\nx.get(u, timeout=2.0)\nok(timeout=t)\nw(rust_timeout=100)"
    assert literal_deadlines(source) == [
        "anyio.move_on_after(1)",
        "x.get(u, timeout=2.0)",
        "w(rust_timeout=100)",
    ]
    assert literal_deadlines("w(yield_on_timeout=True)") == []
    assert Limits().tools.stop.grace > 0 and Limits().scan.max_depth > 0  # the parts are in it
