"""What an uploaded file is, from its bytes (never from the name or type a client gives):
an image Parley can send (PNG, JPEG, GIF, WebP: checked by its whole structure, formats.py),
a PDF (it starts with `%PDF-`), or UTF-8 text (text, Markdown, code, HTML, CSV...). Anything
else is refused with a reason. Blocking (an image's walk reads all of it): a worker thread."""

from __future__ import annotations

from dataclasses import dataclass

from server.attachments.formats import MAX_SIDE, ImageError, image_mime
from server.errors import BadRequestError

SNIFF_BYTES = 8192  # a NUL in these: a binary file


@dataclass(frozen=True)
class Kind:
    kind: str  # "image", "pdf" or "text"
    mime: str


def kind_of(name: str, data: bytes, max_side: int = MAX_SIDE) -> Kind:
    """Raises BadRequestError (`attachment_unsupported`) for a file that is none of them,
    saying what is wrong with one that starts like an image and is not built as one."""
    try:
        mime = image_mime(data, max_side)
    except ImageError as exc:
        raise BadRequestError(
            f"{name!r} cannot be attached: it starts like an image but is not one ({exc})",
            code="attachment_unsupported",
        ) from exc
    if mime is not None:
        return Kind("image", mime)
    # At the start only: PDF readers tolerate bytes before it, but a text that mentions
    # a version ("%PDF-1.7") is not a PDF.
    if data.startswith(b"%PDF-"):
        return Kind("pdf", "application/pdf")
    if b"\x00" not in data[:SNIFF_BYTES]:
        return Kind("text", "text/plain; charset=utf-8")
    raise BadRequestError(
        f"{name!r} cannot be attached: Parley attaches text files (text, Markdown, code...), "
        "PDFs and PNG, JPEG, GIF or WebP images, and this is none of them",
        code="attachment_unsupported",
    )


def decoded(name: str, data: bytes) -> str:
    """A text file's text. Raises BadRequestError when it is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadRequestError(
            f"{name!r} cannot be attached: it is not UTF-8 text (nor a PDF or an image)",
            code="attachment_unsupported",
        ) from exc
