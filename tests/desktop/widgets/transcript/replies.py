"""A reply grown in a transcript as its owner grows it (desktop/reply.py): the reply's parts
are held by the reply, and the transcript is told when they grew (`reply_grew`)."""

from __future__ import annotations

from desktop.widgets.transcript import Transcript
from server.types import ToolPartJSON


def add_text(view: Transcript, text: str) -> None:
    """More text of the reply the view draws (begun with `begin_reply`)."""
    view._growing.reply.parts.add_text(text)
    view.reply_grew()


def add_step(view: Transcript, step: ToolPartJSON) -> None:
    """A tool step of the reply the view draws began or changed."""
    view._growing.reply.parts.add_step(step)
    view.reply_grew()


def told(view: Transcript) -> int:
    """The characters of text of the reply the view draws, so far."""
    return view._growing.reply.told
