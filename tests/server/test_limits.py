"""Every deadline lives in Limits, in the order its docstring gives; a config that breaks it
is refused."""

from __future__ import annotations

import dataclasses

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
