"""Polling a fact with a deadline: how tests wait for servers and threads they do not own."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_for(predicate: Callable[[], T], timeout: float = 10.0, interval: float = 0.005) -> T:
    """The first truthy value of `predicate()`; TimeoutError after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"condition not met within {timeout}s")
        time.sleep(interval)


def stays_true(predicate: Callable[[], object], during: float, interval: float = 0.01) -> None:
    """AssertionError if `predicate()` is ever false within `during` seconds.

    For what must NOT happen (a tool never called, a result never saved) where no later fact
    marks the moment it could no longer happen: the window gives a bug time to show. It
    never makes a test wait for something, so a slow machine cannot fail it; it can only
    make a bug less likely to be seen in time."""
    deadline = time.monotonic() + during
    while True:
        assert predicate(), "a condition that must hold became false"
        if time.monotonic() > deadline:
            return
        time.sleep(interval)
