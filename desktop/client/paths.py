"""Paths of the server's API, built from values that may hold anything."""

from __future__ import annotations

from urllib.parse import quote


def segment(value: str) -> str:
    """`value` as one segment of a URL's path: every reserved character escaped, and its dots
    too, which httpx would otherwise read as `.`/`..` segments and resolve (a decision on a
    call named ".." would reach another route)."""
    return quote(value, safe="").replace(".", "%2E")
