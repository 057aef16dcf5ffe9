"""The window's own style sheet: only what the platform style leaves too faint."""

from __future__ import annotations

# Keyboard focus must be plain to see (the default is a faint 1 px line): a 2 px ring in
# the palette's highlight colour on the fields a user types in. (Qt draws a style-sheet
# border on a state only when the plain state has one too. The transcript is left out: a
# style sheet would stop it from following a switch of the system's palette.)
FOCUS = """
QPlainTextEdit, QLineEdit {
    border: 1px solid palette(mid);
    border-radius: 3px;
    padding: 1px;
}
QPlainTextEdit:focus, QLineEdit:focus {
    border: 2px solid palette(highlight);
    padding: 0px;
}
"""
