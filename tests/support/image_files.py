"""Images for the attachments' tests, real ones (decoders read them: the JPEG and the WebP
were written by Qt's encoders, the PNG is made here with zlib), and what hostile files are
made of: an image's signature glued to something else."""

from __future__ import annotations

import base64
import struct
import zlib

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# 1×1, a white pixel: the smallest GIF commonly used (one frame, a graphic control block).
GIF = (
    b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00"
    b"!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"
)
JPEG = base64.b64decode(  # 2×2 teal, QImageWriter("jpeg", quality 10)
    "/9j/4AAQSkZJRgABAQEAZABkAAD/2wBDAFA3PEY8MlBGQUZaVVBfeMiCeG5uePWvuZHI////////////////////"
    "////////////////////////////////2wBDAVVaWnhpeOuCguv/////////////////////////////////////"
    "////////////////////////////////////wAARCAACAAIDASIAAhEBAxEB/8QAHwAAAQUBAQEBAQEAAAAAAAAAAAEC"
    "AwQFBgcICQoL/8QAtRAAAgEDAwIEAwUFBAQAAAF9AQIDAAQRBRIhMUEGE1FhByJxFDKBkaEII0KxwRVS0fAkM2Jygg"
    "kKFhcYGRolJicoKSo0NTY3ODk6Q0RFRkdISUpTVFVWV1hZWmNkZWZnaGlqc3R1dnd4eXqDhIWGh4iJipKTlJWWl5iZ"
    "mqKjpKWmp6ipqrKztLW2t7i5usLDxMXGx8jJytLT1NXW19jZ2uHi4+Tl5ufo6erx8vP09fb3+Pn6/8QAHwEAAwEBAQ"
    "EBAQEBAQAAAAAAAAECAwQFBgcICQoL/8QAtREAAgECBAQDBAcFBAQAAQJ3AAECAxEEBSExBhJBUQdhcRMiMoEIFEKR"
    "obHBCSMzUvAVYnLRChYkNOEl8RcYGRomJygpKjU2Nzg5OkNERUZHSElKU1RVVldYWVpjZGVmZ2hpanN0dXZ3eHl6go"
    "OEhYaHiImKkpOUlZaXmJmaoqOkpaanqKmqsrO0tba3uLm6wsPExcbHyMnK0tPU1dbX2Nna4uPk5ebn6Onq8vP09fb3"
    "+Pn6/9oADAMBAAIRAxEAPwCOiiiqMT//2Q=="
)
WEBP = base64.b64decode(  # 2×2 teal, QImageWriter("webp")
    "UklGRjgAAABXRUJQVlA4ICwAAACQAQCdASoCAAIAAgA0JaACdLoAA5gA/u8pR8TxdvIb/6MP/xpH/GkfDmAAAA=="
)


def chunk(kind: bytes, body: bytes) -> bytes:
    """One PNG chunk: length, type, data, CRC."""
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def ihdr(width: int, height: int) -> bytes:
    return chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))


def png(width: int = 2, height: int = 2, filler: int = 0) -> bytes:
    """A real RGB PNG of `width`×`height` (teal), with `filler` bytes of text in a tEXt chunk
    (to make it as big as a test needs)."""
    rows = b"".join(b"\x00" + b"\x00\x80\x80" * width for _ in range(height))
    text = chunk(b"tEXt", b"Comment\x00" + b"x" * filler) if filler else b""
    return (
        PNG_SIGNATURE
        + ihdr(width, height)
        + text
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


PNG = png()

# What an ELF executable starts with (x86-64, little-endian), and a ZIP's local file header:
# the bodies the hostile files below carry.
ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(8) + b"\x02\x00\x3e\x00\x01\x00\x00\x00" + bytes(200)
ZIP = b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + bytes(20) + b"payload.sh" + b"#!/bin/sh\n" * 20
