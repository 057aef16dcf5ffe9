"""The scales every surface uses: spacing steps and type sizes in pixels, and the column a
conversation is read in (../shared/LOOK.md)."""

from __future__ import annotations

SPACING = {"xs": 4, "s": 8, "m": 12, "l": 16, "xl": 24, "xxl": 32}
TYPE = {"small": 12, "ui": 13, "body": 15, "title": 17, "heading": 20}
COLUMN = 760  # the widest the conversation's column grows, centred in the window
BUBBLE_RADIUS = 16
THUMBNAIL = 64  # an attached image's thumbnail, square


def as_map(text_scale: float = 1.0) -> dict[str, object]:
    """The scales as one map for QML (`look.spacing.l`, `look.type.body`...), the type sizes
    times `text_scale` (View → Zoom)."""
    return {
        "spacing": SPACING,
        "type": type_sizes(text_scale),
        "column": COLUMN,
        "bubbleRadius": BUBBLE_RADIUS,
        "thumbnail": THUMBNAIL,
    }


def type_sizes(text_scale: float = 1.0) -> dict[str, int]:
    return {name: round(size * text_scale) for name, size in TYPE.items()}
