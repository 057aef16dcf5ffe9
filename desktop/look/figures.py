"""Figures as the window writes them: a token count in short ("3.1k"), what a server's tools
cost every prompt that offers them."""

from __future__ import annotations


def short_tokens(count: int) -> str:
    """A token count as a person reads it: 950, 3.1k, 41k, 1.2M."""
    if count < 1000:
        return f"{count}"
    if count < 10_000:
        return f"{count / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    if count < 1_000_000:
        return f"{round(count / 1000)}k"
    return f"{count / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"


def tools_cost(tokens: int) -> str:
    """What a server's tools' definitions take of every prompt that offers them."""
    return f"~{short_tokens(tokens)} tokens" if tokens else "—"
