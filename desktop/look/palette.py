"""The colours of each theme: a small palette, designed for light and for dark (not one
inverted), read by the Qt Quick surfaces as a map of names to colours."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Palette:
    background: str  # behind everything: the page the conversation is on
    surface: str  # cards: a tool step, a code block, a summary
    raised: str  # what lies on a surface: a hovered row, a chip
    border: str  # hairlines around surfaces
    text: str
    muted: str  # secondary text: a model's name, figures, hints
    accent: str  # links, focus rings, the send button
    bubble: str  # behind the user's own words
    danger: str  # errors, "may have acted"
    warning: str  # waiting for you, a stopped reply
    success: str  # a step that completed
    code: str  # behind code

    def as_map(self) -> dict[str, str]:
        return asdict(self)


LIGHT = Palette(
    background="#ffffff",
    surface="#f6f6f4",
    raised="#ecece8",
    border="#e2e2dc",
    text="#1f1f1d",
    muted="#6b6b66",
    accent="#2f6fd6",
    bubble="#eef2f8",
    danger="#c0392b",
    warning="#b26a00",
    success="#2e7d4f",
    code="#f4f4f2",
)

DARK = Palette(
    background="#1c1c1e",
    surface="#252528",
    raised="#2f2f33",
    border="#38383c",
    text="#e8e8e6",
    muted="#9c9c98",
    accent="#7aa7f0",
    bubble="#2b3140",
    danger="#ef6f61",
    warning="#e0a040",
    success="#6cc28d",
    code="#272822",
)


def palette(dark: bool) -> Palette:
    return DARK if dark else LIGHT
