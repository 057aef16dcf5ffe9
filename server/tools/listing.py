"""A list one MCP server offers besides its tools (its resources, its prompts), held for its
session: listed when first asked for, listed again once the server says it changed (MCP
`list_changed`: a notification at 2025-11-25, an event of `subscriptions/listen` at
2026-07-28; server/tools/mcp_server.py hears both)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

from server.limits import ToolLimits

T = TypeVar("T")
Item = TypeVar("Item")


class Listing(Generic[T]):
    """One list of one server, or None until it is asked for."""

    def __init__(self) -> None:
        self._value: T | None = None
        self._version = 0

    def changed(self) -> None:
        """The server said the list changed, or its session ended: the next ask lists it."""
        self._value = None
        self._version += 1

    async def get(self, fetch: Callable[[], Awaitable[T]]) -> T:
        if self._value is not None:
            return self._value
        version = self._version
        value = await fetch()
        # A change told while it was being listed: this listing may predate it, so it is
        # given once but not kept.
        if version == self._version:
            self._value = value
        return value


async def all_pages(
    fetch: Callable[[str | None], Awaitable[tuple[list[Item], str | None]]], most: int
) -> list[Item]:
    """Every page of a paginated list (`cursor`, `nextCursor`), at most `most` items."""
    items: list[Item] = []
    cursor: str | None = None
    for _ in range(ToolLimits.pages_most):
        page, cursor = await fetch(cursor)
        items.extend(page)
        if not cursor or len(items) >= most:
            break
    return items[:most]
