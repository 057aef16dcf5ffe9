"""Flat scroll bars for the window's lists, and mixing colours (the look's style sheet:
desktop/look/window_style.py)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette


def scroll_bar(groove: str, handle: str, hover: str) -> str:
    """A flat scroll bar: a rounded handle on the background, no arrows.

    The platform's (Fusion's) paints gradients anew at every move of its handle: 1.2-1.7 ms
    a repaint, and a growing reply moves it at each update, where the text itself repaints
    in ~0.2 ms (docs/benchmarks.md). This one repaints in ~0.07 ms. Colours are
    given, not `palette(...)`: a style sheet reads the palette only when it is set, so the
    owner sets it again when the palette changes.
    """
    return f"""
QScrollBar:vertical {{ background: {groove}; width: 14px; margin: 0; border: none; }}
QScrollBar::handle:vertical {{
    background: {handle}; min-height: 32px; margin: 2px 3px; border-radius: 4px;
}}
QScrollBar::handle:vertical:hover, QScrollBar::handle:vertical:pressed {{
    background: {hover};
}}
QScrollBar::handle:vertical:disabled {{ background: none; }}
QScrollBar::add-line:vertical, QScrollBar::sub-line:vertical {{
    height: 0; border: none; background: none;
}}
QScrollBar::add-page:vertical, QScrollBar::sub-page:vertical {{ background: none; }}
"""


def scroll_bar_in(palette: QPalette) -> str:
    """The flat scroll bar in a palette's colours, on its base (a list's, the transcript's)."""
    base = palette.color(QPalette.ColorRole.Base)
    text = palette.color(QPalette.ColorRole.Text)
    return scroll_bar(base.name(), mix(base, text, 0.3), mix(base, text, 0.5))


def mix(a: QColor, b: QColor, share: float) -> str:
    """`a` with `share` of `b`, as #rrggbb."""
    return QColor(
        round(a.red() * (1 - share) + b.red() * share),
        round(a.green() * (1 - share) + b.green() * share),
        round(a.blue() * (1 - share) + b.blue() * share),
    ).name()
