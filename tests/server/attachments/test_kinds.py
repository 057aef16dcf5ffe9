"""What an upload is, from its structure (issue 48): an image only if it is built as one from
its first byte to its last (an ELF or a ZIP behind an image's signature is refused, saying
why), a PDF only if it starts as one (a Markdown file that mentions `%PDF-1.7` is text)."""

from __future__ import annotations

import struct

import pytest

from server.attachments.formats import ImageError, image_mime
from server.attachments.kinds import kind_of
from server.errors import BadRequestError
from tests.support.image_files import (
    ELF,
    GIF,
    JPEG,
    PNG,
    PNG_SIGNATURE,
    WEBP,
    ZIP,
    chunk,
    ihdr,
    png,
)


@pytest.mark.parametrize(
    ("data", "mime"),
    [(PNG, "image/png"), (GIF, "image/gif"), (JPEG, "image/jpeg"), (WEBP, "image/webp")],
)
def test_real_images_are_images(data: bytes, mime: str) -> None:
    assert kind_of("picture", data).mime == mime
    assert kind_of("picture", data).kind == "image"


@pytest.mark.parametrize(
    "data",
    [
        PNG_SIGNATURE + ELF,
        PNG_SIGNATURE + ZIP,
        b"GIF89a" + ELF,
        b"GIF87a" + ZIP,
        b"\xff\xd8\xff\xe0" + ELF,
        b"RIFF" + struct.pack("<I", 4 + len(ZIP)) + b"WEBP" + ZIP,
        PNG + ZIP,  # a whole image with an archive after its end
        GIF + ELF,
    ],
    ids=["png+elf", "png+zip", "gif+elf", "gif+zip", "jpeg+elf", "webp+zip", "png|zip", "gif|elf"],
)
def test_an_executable_or_archive_behind_an_image_signature_is_refused(data: bytes) -> None:
    with pytest.raises(BadRequestError) as refused:
        kind_of("cat.png", data)
    assert refused.value.code == "attachment_unsupported"
    assert "starts like an image but is not one" in refused.value.message


def test_a_png_is_walked_chunk_by_chunk() -> None:
    idat = chunk(b"IDAT", b"\x78\x9c" + bytes(10))
    end = chunk(b"IEND", b"")
    bad_crc = bytearray(PNG)
    bad_crc[8 + 25 + 8 + 2] ^= 1  # in IDAT's data (after the signature, IHDR, IDAT's head)
    cases = {
        bytes(bad_crc): "checksum is wrong",
        PNG_SIGNATURE + idat + ihdr(2, 2) + end: "first chunk is not IHDR",
        PNG_SIGNATURE + ihdr(0, 2) + idat + end: "0×2 pixels",
        PNG_SIGNATURE + ihdr(20_000, 2) + idat + end: "20000×2 pixels",
        PNG_SIGNATURE + ihdr(2, 2) + end: "no image data",
        PNG_SIGNATURE + ihdr(2, 2) + chunk(b"ZZZZ", b"") + idat + end: "unknown critical",
        PNG[:-12]: "cut short",
        PNG_SIGNATURE + ihdr(2, 2) + b"\x7f\xff\xff\xf0IDAT" + ELF: "does not fit the file",
    }
    for data, why in cases.items():
        with pytest.raises(ImageError, match=why):
            image_mime(data)
    assert image_mime(png(3, 5, filler=1000)) == "image/png"
    assert image_mime(PNG_SIGNATURE + ihdr(16_384, 1) + idat + end) == "image/png"


def test_a_gif_is_walked_block_by_block() -> None:
    screen = b"GIF89a" + struct.pack("<HHBBB", 1, 1, 0, 0, 0)
    cases = {
        screen + b";": "no frame",
        GIF[:-1]: "cut short",
        GIF[:20]: "cut short",
        screen + b",\x00\x00\x00\x00\x01\x00\x01\x00\x00\x0c\x00;": "LZW code size",
        screen + b"\x99;": "unknown block",
        b"GIF89a" + struct.pack("<HHBBB", 0, 1, 0, 0, 0) + GIF[13:]: "0×1 pixels",
    }
    for data, why in cases.items():
        with pytest.raises(ImageError, match=why):
            image_mime(data)


def test_jpeg_and_webp_are_walked_by_their_segments_and_chunks() -> None:
    cases = {
        JPEG[:-2]: "cut short",  # no end marker
        JPEG[:300]: "cut short|length",
        b"\xff\xd8\xff\xd9": "no image data",
        WEBP + b"\x00\x00": "RIFF size",
        WEBP[:-4]: "RIFF size",
    }
    for data, why in cases.items():
        with pytest.raises(ImageError, match=why):
            image_mime(data)
    # Bytes after a JPEG's end marker are allowed: phones append a motion photo's video.
    assert image_mime(JPEG + b"\x00\x00\x00\x18ftypmp42") == "image/jpeg"


def test_a_pdf_starts_with_its_header_and_a_text_that_mentions_one_is_text() -> None:
    notes = b"# Formats\n\nThe file says `%PDF-1.7` on its first line.\n"
    assert kind_of("notes.md", notes).kind == "text"
    assert kind_of("report.pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n").kind == "pdf"
