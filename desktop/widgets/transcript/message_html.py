"""The pieces of a message in the transcript, as HTML: who wrote it, the user's words, how a
reply ended (its badge and figures), a note while that is not known, and the gaps between
them. The same for a conversation drawn whole and for the reply drawn live."""

from __future__ import annotations

import html
import time

from desktop.reply_events import ReplyEnd
from desktop.widgets.badges import acted_text, badge_for, stats_for
from desktop.widgets.transcript.attachments import attachments_html
from desktop.widgets.transcript.colours import Colours
from desktop.widgets.transcript.question_tint import question_html
from server.types import AttachmentJSON

HEADER_GAP = 18.0
TEXT_GAP = 12.0
PARAGRAPH_GAP = 12.0  # Qt's own margin between HTML paragraphs
# Below the line of a reply's badge and figures, above its actions.
FOOTER_LINE_GAP = 6.0


def header(colours: Colours, role: str, model: str | None, when: float | None = None) -> str:
    """Who wrote it (the user in the accent colour), the model, and when (on hover)."""
    colour = colours.accent if role == "user" else colours.text
    who = "You" if role == "user" else "Assistant"
    extra = f' <span style="color:{colours.muted};">· {html.escape(model)}</span>' if model else ""
    stamp = time.strftime("%A %d %B %Y, %H:%M", time.localtime(when or time.time()))
    return (
        f'<p style="margin-top:18px;"><span title="{stamp}" style="color:{colour};">'
        f"<b>{who}</b></span>{extra}</p>"
    )


def user_body(text: str, attachments: list[AttachmentJSON] | None = None, muted: str = "") -> str:
    """The user's words on a tinted ground (painted by the transcript: question_tint), so a
    question stands apart from its reply; the files it carries above them (a message of
    files alone has no words drawn)."""
    chips = attachments_html(attachments, muted)
    return chips + (question_html(text) if text or not chips else "")


def footer(colours: Colours, end: ReplyEnd) -> str:
    badge = badge_for(end)
    stats = stats_for(end.usage)
    pieces = []
    if badge:
        colour = colours.error if end.status == "error" else colours.warning
        pieces.append(f'<span style="color:{colour};"><b>{html.escape(badge)}</b></span>')
    if stats:
        pieces.append(f'<span style="color:{colours.muted};">{html.escape(stats)}</span>')
    line = " &nbsp; ".join(pieces)
    acted = acted_text(end.ended) if end.status == "interrupted" else ""
    if acted:
        # In the same paragraph (one block, as when the chat is drawn whole).
        line += f'<br><span style="color:{colours.warning};">⚠ {html.escape(acted)}</span>'
    return f'<p style="margin-bottom:{FOOTER_LINE_GAP:g}px;">{line}</p>' if line else ""


def note(colours: Colours, text: str) -> str:
    colour = colours.warning
    return f'<p><span style="color:{colour};"><b>{html.escape(text)}</b></span></p>'
