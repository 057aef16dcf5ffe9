"""Text from a backend made safe to store and send: valid Unicode, nothing else.

JSON lets an upstream send lone UTF-16 surrogates (`"\\ud83d"`), e.g. an emoji split across
two chunks. SQLite and UTF-8 encoders refuse them, so a pair split across chunks is joined
and any other lone surrogate becomes U+FFFD.
"""

from __future__ import annotations

HIGH_SURROGATES = ("\ud800", "\udbff")


def valid_unicode(text: str) -> str:
    """Text that storage and clients take: lone surrogates and NUL (refused from users,
    and cutting SQLite's `length()`/`LIKE`) become U+FFFD."""
    if "\x00" in text:
        text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        # Through UTF-16: adjacent high+low halves become one character, the rest U+FFFD.
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


class TextJoiner:
    """Feeds chunks of text; holds back a trailing high surrogate until its other half."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        text = self._held + text
        self._held = ""
        if text and HIGH_SURROGATES[0] <= text[-1] <= HIGH_SURROGATES[1]:
            self._held, text = text[-1], text[:-1]
        return valid_unicode(text)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return "\ufffd" if held else ""
