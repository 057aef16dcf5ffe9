"""What one turn asks of the server, as the window's controls gave it when the user acted:
from the composer (or a message's action) to the reply controller, and from there to the
client, as one value rather than a dozen parameters passed down a chain."""

from __future__ import annotations

from dataclasses import dataclass, field

from desktop.client import TurnKind
from server.types import AttachmentJSON, MessageJSON, ModelStatusJSON


@dataclass(frozen=True)
class TurnAsked:
    """What a turn is asked with, as chosen when the user acts: the model picked for the
    chat, the longest reply the settings allow (None: no limit), and for a message that
    creates a chat, its system prompt and switches; `model_status`: that model as the server
    last reported it (None: not known), which says whether the turn waits for it to load."""

    model: str | None
    max_tokens: int | None
    system_prompt: str | None = None
    tools: bool = True
    documents: bool = False
    model_status: ModelStatusJSON | None = None


@dataclass(frozen=True)
class TurnRequest:
    """One turn: `asked` with, in the chat it was typed in (`conversation_id`; None: a new
    chat, made in `project_id`), doing `kind` — a new message's `text` (`send`), a new
    version of the user message `target` (`edit`), of the reply `target` (`regenerate`), or
    that reply going on (`continue`). `before`: for a turn on a message already on screen,
    the messages shown above its reply (None: the chat as it is). `attached`: the files
    attached in the composer (sent with it); `files`: all the message carries (an edit's:
    the question's own and those; None: `attached`), drawn above its words."""

    asked: TurnAsked
    conversation_id: str | None
    text: str
    kind: TurnKind = "send"
    target: str | None = None
    before: list[MessageJSON] | None = None
    attached: list[AttachmentJSON] = field(default_factory=list)
    files: list[AttachmentJSON] | None = None
    project_id: str | None = None
