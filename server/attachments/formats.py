"""An image's structure, walked from its first byte to its last: a file is taken as a PNG,
GIF, JPEG or WebP only if it is built as one, not because it starts like one (a PNG
signature glued to an ELF or a ZIP would otherwise go upstream as a picture).

What is checked, without decoding a pixel (cheap, bounded by the file's size):
- PNG: the signature, IHDR first with sane dimensions and fields, every chunk's length and
  CRC, at least one IDAT (starting a zlib stream), IEND last and nothing after it;
- GIF: the header and screen, the colour tables' sizes, every extension's and frame's
  sub-blocks, at least one frame, the trailer last and nothing after it;
- JPEG: every marker segment's length, a frame header (SOF) with sane dimensions before
  the first scan, the scans' entropy-coded data, up to the end marker (bytes after it are
  allowed: phones append a motion photo's video there, and decoders stop at the marker);
- WebP: the RIFF size equal to the file's, every chunk's length, a VP8, VP8L or VP8X
  header first with sane dimensions.

`image_mime` says which one a file is (None: none of them); `ImageError` says what is wrong
with one that starts like an image and is not built as one."""

from __future__ import annotations

import re
import struct
import zlib

from server.limits import AttachmentLimits

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_SIDE = AttachmentLimits.max_image_side  # server/limits.py
_U16LE, _U16BE, _U32BE = struct.Struct("<H"), struct.Struct(">H"), struct.Struct(">I")
_PNG_DEPTHS = {0: {1, 2, 4, 8, 16}, 2: {8, 16}, 3: {1, 2, 4, 8}, 4: {8, 16}, 6: {8, 16}}
# Frame headers: SOF0-3, 5-7, 9-11, 13-15 (0xC4 DHT, 0xC8 JPG and 0xCC DAC are not).
_MARKER_IN_SCAN = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")
_SOF = {0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF}


class ImageError(ValueError):
    """Starts like an image but is not built as one (the message says what is wrong)."""


def image_mime(data: bytes, max_side: int = MAX_SIDE) -> str | None:
    """The image's media type once its whole structure is checked; None if it does not start
    like a PNG, GIF, JPEG or WebP. Raises ImageError for one that starts like it and is not."""
    if data.startswith(PNG_SIGNATURE):
        _png(data, max_side)
        return "image/png"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        _gif(data, max_side)
        return "image/gif"
    if data.startswith(b"\xff\xd8\xff"):
        _jpeg(data, max_side)
        return "image/jpeg"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        _webp(data, max_side)
        return "image/webp"
    return None


def _sides(width: int, height: int, max_side: int, what: str) -> None:
    if not (0 < width <= max_side and 0 < height <= max_side):
        raise ImageError(f"{what} of {width}×{height} pixels (each side must be 1–{max_side})")


def _png(data: bytes, max_side: int) -> None:
    at = len(PNG_SIGNATURE)
    seen: set[bytes] = set()  # the chunk types met so far
    colour = 0
    while True:
        if at + 12 > len(data):
            raise ImageError("a PNG cut short (no IEND chunk)")
        (length,) = _U32BE.unpack_from(data, at)
        kind = data[at + 4 : at + 8]
        end = at + 12 + length
        if length > 0x7FFFFFFF or end > len(data) or not kind.isalpha():
            raise ImageError("a PNG chunk with a length or type that does not fit the file")
        body = data[at + 8 : at + 8 + length]
        if zlib.crc32(kind + body) != _U32BE.unpack_from(data, end - 4)[0]:
            raise ImageError(f"a PNG {kind.decode('ascii')} chunk whose checksum is wrong")
        if not seen and kind != b"IHDR":
            raise ImageError("a PNG whose first chunk is not IHDR")
        if kind == b"IHDR":
            if seen or length != 13:
                raise ImageError("a PNG with a misplaced or malformed IHDR")
            width, height, depth, colour, method, filters, interlace = struct.unpack(
                ">IIBBBBB", body
            )
            _sides(width, height, max_side, "a PNG")
            if depth not in _PNG_DEPTHS.get(colour, ()) or method or filters or interlace > 1:
                raise ImageError("a PNG whose IHDR names no valid pixel format")
        elif kind == b"IDAT":
            first = b"IDAT" not in seen
            if first and len(body) >= 2 and (body[0] & 0x0F != 8 or (body[0] << 8 | body[1]) % 31):
                raise ImageError("a PNG whose image data is not a zlib stream")
        elif kind == b"IEND":
            if b"IDAT" not in seen or length:
                raise ImageError("a PNG with no image data")
            if colour == 3 and b"PLTE" not in seen:
                raise ImageError("a PNG with a palette format and no palette")
            if end != len(data):
                raise ImageError("a PNG with other data after its end")
            return
        elif kind[:1].isupper() and kind != b"PLTE":
            raise ImageError(f"a PNG with an unknown critical chunk {kind.decode('ascii')}")
        seen.add(kind)
        at = end


def _gif(data: bytes, max_side: int) -> None:
    if len(data) < 13:
        raise ImageError("a GIF cut short")
    width, height = struct.unpack_from("<HH", data, 6)
    _sides(width, height, max_side, "a GIF screen")
    at = 13 + _colour_table(data[10])
    frames = 0
    while at < len(data):
        block = data[at]
        if block == 0x3B:  # the trailer
            if not frames:
                raise ImageError("a GIF with no frame")
            if at + 1 != len(data):
                raise ImageError("a GIF with other data after its end")
            return
        if block == 0x21:  # an extension: its label, then its sub-blocks
            at = _sub_blocks(data, at + 2)
        elif block == 0x2C:  # a frame: its descriptor, colours, LZW code size, sub-blocks
            if at + 11 > len(data):
                raise ImageError("a GIF frame cut short")
            frame_width, frame_height = struct.unpack_from("<HH", data, at + 5)
            _sides(frame_width, frame_height, max_side, "a GIF frame")
            at += 10 + _colour_table(data[at + 9])
            if at >= len(data) or not 2 <= data[at] <= 8:
                raise ImageError("a GIF frame with no valid LZW code size")
            at = _sub_blocks(data, at + 1)
            frames += 1
        else:
            raise ImageError(f"a GIF with an unknown block 0x{block:02x}")
    raise ImageError("a GIF cut short (no trailer)")


def _colour_table(packed: int) -> int:
    return 3 * (2 << (packed & 0x07)) if packed & 0x80 else 0


def _sub_blocks(data: bytes, at: int) -> int:
    """Where the sub-blocks starting at `at` end (after their zero-length terminator)."""
    while at < len(data):
        size = data[at]
        at += 1 + size
        if size == 0:
            return at
    raise ImageError("a GIF cut short (its blocks run past the file's end)")


def _jpeg(data: bytes, max_side: int) -> None:
    at = 2
    framed = scanned = False
    while True:
        while at < len(data) and data[at] == 0xFF and at + 1 < len(data) and data[at + 1] == 0xFF:
            at += 1  # fill bytes before a marker
        if at + 2 > len(data) or data[at] != 0xFF:
            raise ImageError("a JPEG whose markers do not follow one another (cut short?)")
        marker = data[at + 1]
        if marker == 0xD9:  # EOI
            if not scanned:
                raise ImageError("a JPEG with no image data")
            return
        if marker in (0x01, *range(0xD0, 0xD8)):  # standalone: TEM, RSTn
            at += 2
            continue
        if marker in (0x00, 0xD8) or at + 4 > len(data):
            raise ImageError("a JPEG with a misplaced marker")
        (length,) = _U16BE.unpack_from(data, at + 2)
        end = at + 2 + length
        if length < 2 or end > len(data):
            raise ImageError("a JPEG segment whose length does not fit the file")
        if marker in _SOF:
            if length < 8 or length != 8 + 3 * data[at + 9] or not 1 <= data[at + 9] <= 4:
                raise ImageError("a JPEG with a malformed frame header")
            height, width = struct.unpack_from(">HH", data, at + 5)
            _sides(width, height, max_side, "a JPEG")
            framed = True
        at = end
        if marker == 0xDA:  # SOS: entropy-coded data up to the next real marker
            if not framed:
                raise ImageError("a JPEG scan before its frame header")
            scanned = True
            at = _entropy_end(data, at)


def _entropy_end(data: bytes, at: int) -> int:
    """Where a scan's entropy-coded data ends: at the 0xFF of the first marker that is
    neither a stuffed byte (0xFF00), a restart marker, nor a fill byte."""
    found = _MARKER_IN_SCAN.search(data, at)
    if found is None:
        raise ImageError("a JPEG cut short in its image data (no end marker)")
    return found.start()


def _webp(data: bytes, max_side: int) -> None:
    (size,) = struct.unpack_from("<I", data, 4)
    if size + 8 != len(data) or size < 4:
        raise ImageError("a WebP whose RIFF size is not the file's")
    at = 12
    kinds: list[bytes] = []
    while at < len(data):
        if at + 8 > len(data):
            raise ImageError("a WebP chunk cut short")
        kind = data[at : at + 4]
        (length,) = struct.unpack_from("<I", data, at + 4)
        end = at + 8 + length + (length & 1)
        body = data[at + 8 : at + 8 + length]
        if len(body) != length:
            raise ImageError("a WebP chunk whose length does not fit the file")
        if not kinds:
            _webp_header(kind, body, max_side)
        kinds.append(kind)
        at = end
    if not kinds or (kinds[0] == b"VP8X" and not {b"VP8 ", b"VP8L", b"ANMF"} & set(kinds)):
        raise ImageError("a WebP with no image")


def _webp_header(kind: bytes, body: bytes, max_side: int) -> None:
    if kind == b"VP8 ":
        if len(body) < 10 or body[3:6] != b"\x9d\x01\x2a" or body[0] & 1:
            raise ImageError("a WebP whose VP8 header is malformed")
        width = _U16LE.unpack_from(body, 6)[0] & 0x3FFF
        height = _U16LE.unpack_from(body, 8)[0] & 0x3FFF
    elif kind == b"VP8L":
        if len(body) < 5 or body[0] != 0x2F:
            raise ImageError("a WebP whose VP8L header is malformed")
        bits = int.from_bytes(body[1:5], "little")
        width, height = (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    elif kind == b"VP8X":
        if len(body) < 10:
            raise ImageError("a WebP whose VP8X header is malformed")
        width = int.from_bytes(body[4:7], "little") + 1
        height = int.from_bytes(body[7:10], "little") + 1
    else:
        raise ImageError("a WebP whose first chunk is not an image header")
    _sides(width, height, max_side, "a WebP")
