"""Many pixels in few bytes, and what they cost this process: a PNG whose solid colour
compresses to almost nothing, and the resident memory as Linux counts it (now, and at its
peak since it was last reset)."""

from __future__ import annotations

import gc
import struct
import zlib
from pathlib import Path


def big_png(path: Path, side: int = 8000) -> Path:
    """A solid-colour RGBA PNG of `side`×`side` pixels: ~265 KB on disk at 8000, 256 MB
    decoded. Made with zlib row by row: Qt would have to hold it whole to make it."""
    row = b"\x00" + b"\x10\x80\x80\xff" * side  # the filter byte, then the pixels
    packer = zlib.compressobj(6)
    pixels = b"".join(packer.compress(row) for _ in range(side)) + packer.flush()
    header = struct.pack(">IIBBBBB", side, side, 8, 6, 0, 0, 0)  # 8 bits, RGBA
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", pixels)
        + _chunk(b"IEND", b"")
    )  # fmt: skip
    return path


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def memory_mb() -> dict[str, float]:
    """This process's resident memory now and at its peak (VmRSS, VmHWM), in MB."""
    lines = Path("/proc/self/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in lines if ":" in line)
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmRSS", "VmHWM")}


def reset_peak_memory() -> float:
    """Start the peak (VmHWM) again from the resident memory of now, after a collection
    (Linux's clear_refs): the resident memory it starts from, in MB."""
    gc.collect()
    Path("/proc/self/clear_refs").write_text("5")
    return memory_mb()["VmRSS"]
