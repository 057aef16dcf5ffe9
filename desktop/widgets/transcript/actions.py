"""The small line of actions under each message of the transcript: Copy; Edit (a question);
Regenerate and, for a reply that was stopped or cut, Continue; and ‹ 2/3 › between versions.

They are links (`msg:ACTION/ID`) in the transcript's HTML: the transcript copies by itself
and hands every other action to the window (`Transcript.message_action`). Read back from the
document, they say which message lies where, and what may be done with it."""

from __future__ import annotations

import html

from PySide6.QtGui import QTextBlock, QTextDocument

from server.types import FinishReason, MessageRole, Status, continuable


def actions_line(
    message_id: str,
    role: MessageRole,
    *,
    muted: str,
    status: Status = "completed",
    finish_reason: FinishReason | None = None,
    has_text: bool = True,
    last: bool = False,
    siblings: list[str] | None = None,
    index: int = 0,
) -> str:
    """The actions of one message as HTML. `last`: it ends the branch (only then may a
    stopped reply be continued); `siblings`/`index`: its versions and which one it is."""
    links = [_link("copy", message_id, "Copy")]
    if role == "user":
        links.append(_link("edit", message_id, "Edit"))
    elif status != "streaming":
        links.append(_link("regenerate", message_id, "Regenerate"))
        if last and continuable(status, finish_reason) and has_text:
            links.append(_link("continue", message_id, "Continue"))
    versions = siblings or [message_id]
    if len(versions) > 1:
        before = _link("version", versions[index - 1], "‹") if index > 0 else "‹"
        after = _link("version", versions[index + 1], "›") if index + 1 < len(versions) else "›"
        links.append(f"{before} {index + 1}/{len(versions)} {after}")
    joined = " &nbsp;·&nbsp; ".join(links)
    return f'<p style="margin-top:2px; font-size:small; color:{muted};">{joined}</p>'


def _link(action: str, message_id: str, label: str) -> str:
    return f'<a href="msg:{action}/{html.escape(message_id)}">{html.escape(label)}</a>'


def parse_link(path: str) -> tuple[str, str] | None:
    """(action, message id) of a `msg:` link's path, or None."""
    action, _, message_id = path.partition("/")
    known = ("copy", "edit", "regenerate", "continue", "version")
    return (action, message_id) if action in known and message_id else None


def last_actions(document: QTextDocument) -> dict[str, str]:
    """The actions of the last message drawn (action -> message id)."""
    block = document.lastBlock()
    while block.isValid():
        found = _block_actions(block)
        if found:
            return found
        block = block.previous()
    return {}


def actions_at(document: QTextDocument, position: int) -> dict[str, str]:
    """The actions of the message drawn at `position` (its actions line follows it)."""
    block = document.findBlock(position)
    while block.isValid():
        found = _block_actions(block)
        if found:
            return found
        block = block.next()
    return {}


def anchor_position(document: QTextDocument, href: str) -> int | None:
    """Where the link to `href` is in the document (None: not there)."""
    block = document.begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            if fragment.isValid() and fragment.charFormat().anchorHref() == href:
                return int(fragment.position())
            fragments += 1
        block = block.next()
    return None


def _block_actions(block: QTextBlock) -> dict[str, str]:
    """The `msg:` links of a block (an actions line): action -> message id."""
    found: dict[str, str] = {}
    fragments = block.begin()
    while not fragments.atEnd():
        fragment = fragments.fragment()
        href = fragment.charFormat().anchorHref() if fragment.isValid() else ""
        if href.startswith("msg:"):
            link = parse_link(href[len("msg:") :])
            if link is not None and link[0] != "version":
                found.setdefault(link[0], link[1])
        fragments += 1
    return found
