"""What an uploaded file is, from its bytes (never from the name or type a client gives):
an image Parley can send (PNG, JPEG, GIF, WebP), a PDF, or UTF-8 text (text, Markdown, code,
HTML, CSV...). Anything else is refused with a reason."""

from __future__ import annotations

from dataclasses import dataclass

from server.errors import BadRequestError

IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)
SNIFF_BYTES = 8192  # a NUL in these: a binary file


@dataclass(frozen=True)
class Kind:
    kind: str  # "image", "pdf" or "text"
    mime: str


def kind_of(name: str, data: bytes) -> Kind:
    """Raises BadRequestError (`attachment_unsupported`) for a file that is none of them."""
    for magic, mime in IMAGES:
        if data.startswith(magic):
            return Kind("image", mime)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return Kind("image", "image/webp")
    if b"%PDF-" in data[:1024]:
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
