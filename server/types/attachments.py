"""The wire of a file attached to a message."""

from __future__ import annotations

from typing import Literal, TypedDict

AttachmentKind = Literal["text", "image"]


class AttachmentJSON(TypedDict):
    """A file attached to a message (`POST /api/attachments`): `kind` text is a text file,
    code or a PDF, whose extracted text the model is given (`chars` long; `note` says what
    was left out); an image goes to models that take images."""

    id: str
    name: str
    kind: AttachmentKind
    mime: str
    bytes: int
    chars: int | None
    note: str | None
