"""What a GGUF file says about itself, read from its header without loading the model.

Used to refuse a file that is not a model before registering it (`POST /api/models/local`),
and to show its size, quantization and context length. Every length read from the file is
bounded, so a hostile or damaged file costs little and raises `GGUFError` with the reason.
"""

from __future__ import annotations

import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

MAGIC = b"GGUF"
MAX_KEYS = 100_000
MAX_STRING_BYTES = 16_000_000  # a chat template or a merges entry is far smaller
MAX_DIMS = 8
MAX_ARRAY_ITEMS = 10_000_000  # a vocabulary has a few hundred thousand
# Only these keys are kept; the others are read past, not stored.
WANTED_KEYS = ("general.architecture", "general.file_type", "general.alignment")
ALIGNMENT_KEY = "general.alignment"

# The value types of GGUF's key-value section, and the struct format of each scalar.
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
           11: "<q", 12: "<d"}  # fmt: skip
STRING, ARRAY = 8, 9

# `general.file_type` (llama.cpp's LLAMA_FTYPE_*), for the common ones.
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
              10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
              16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
              22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
              28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
              37: "TQ2_0", 38: "MXFP4"}  # fmt: skip


class GGUFError(ValueError):
    """Not a usable GGUF file; the message says why."""


@dataclass(frozen=True)
class GGUFInfo:
    architecture: str | None
    context_length: int | None
    quantization: str | None
    size_bytes: int
    tensors: int


def read_gguf(path: Path) -> GGUFInfo:
    """The file's own account of itself. Raises GGUFError (missing, not GGUF, damaged).

    A truncated file is found when the cut falls before the last tensor's data begins; a cut
    inside the last tensor is found only when the model loads (the load error names it).
    """
    try:
        status = path.stat()
        if path.is_dir():
            raise IsADirectoryError
        if not stat.S_ISREG(status.st_mode):  # a FIFO or a device would block or never end
            raise GGUFError(f"{path} is not a regular file")
        with path.open("rb") as file:
            return _read(_Reader(file, status.st_size), status.st_size)
    except FileNotFoundError:
        raise GGUFError(f"no file at {path}") from None
    except IsADirectoryError:
        raise GGUFError(f"{path} is a folder, not a GGUF file") from None
    except OSError as exc:
        raise GGUFError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, OverflowError, struct.error) as exc:
        if isinstance(exc, GGUFError):
            raise
        raise GGUFError(f"the file is damaged ({exc})") from None


class _Reader:
    def __init__(self, file: IO[bytes], size: int) -> None:
        self.file = file
        self.size = size

    def skip(self, count: int) -> None:
        if count > self.size - self.file.tell():
            raise GGUFError("the file is truncated (it ends inside its header)")
        self.file.seek(count, 1)

    def take(self, count: int) -> bytes:
        data = self.file.read(count)
        if len(data) != count:
            raise GGUFError("the file is truncated (it ends inside its header)")
        return data

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, keep: bool = True) -> str:
        length = self.scalar("<Q")
        if length > MAX_STRING_BYTES:
            raise GGUFError("the file is damaged (a string in its header is impossibly long)")
        if not keep:
            self.skip(length)
            return ""
        return self.take(length).decode("utf-8", "replace")

    def value(self, kind: int, keep: bool = True) -> Any:
        if kind in SCALARS:
            return self.scalar(SCALARS[kind])
        if kind == STRING:
            return self.string(keep)
        if kind == ARRAY:
            item_kind, count = self.scalar("<I"), self.scalar("<Q")
            if count > MAX_ARRAY_ITEMS:
                raise GGUFError("the file is damaged (an impossibly long array)")
            if item_kind in SCALARS:
                # Numeric arrays (token scores…) are not needed.
                self.skip(struct.calcsize(SCALARS[item_kind]) * count)
                return None
            if item_kind == STRING:
                for _ in range(count):  # the vocabulary: skipped string by string
                    length = self.scalar("<Q")
                    if length > MAX_STRING_BYTES:
                        raise GGUFError("the file is damaged (an impossibly long string)")
                    self.skip(length)
                return None
            raise GGUFError(f"the file is damaged (unknown array type {item_kind})")
        raise GGUFError(f"the file is damaged (unknown value type {kind})")


def _read(reader: _Reader, size: int) -> GGUFInfo:
    if reader.file.read(4) != MAGIC:
        raise GGUFError("not a GGUF model file")
    version = reader.scalar("<I")
    if version not in (2, 3):
        raise GGUFError(f"GGUF version {version} is not supported")
    tensors, keys = reader.scalar("<Q"), reader.scalar("<Q")
    if keys > MAX_KEYS or tensors > 10_000_000:
        raise GGUFError("the file is damaged (impossible counts in its header)")
    meta: dict[str, Any] = {}
    for _ in range(keys):
        key = reader.string()
        wanted = key in WANTED_KEYS or key.endswith(".context_length")
        value = reader.value(reader.scalar("<I"), keep=wanted)
        if wanted:
            meta[key] = value
    last_offset = 0
    for _ in range(tensors):
        reader.string(keep=False)  # name
        dims = reader.scalar("<I")
        if dims > MAX_DIMS:
            raise GGUFError("the file is damaged (a tensor with impossible dimensions)")
        reader.take(8 * dims)
        reader.scalar("<I")  # type
        last_offset = max(last_offset, reader.scalar("<Q"))
    alignment = meta.get(ALIGNMENT_KEY, 32)
    alignment = alignment if isinstance(alignment, int) and alignment > 0 else 32
    data_start = -(-reader.file.tell() // alignment) * alignment
    if tensors and data_start + last_offset >= size:
        raise GGUFError("the file is truncated (its tensor data is cut short)")
    architecture = meta.get("general.architecture")
    context = meta.get(f"{architecture}.context_length") if isinstance(architecture, str) else None
    file_type = meta.get("general.file_type")
    return GGUFInfo(
        architecture=architecture if isinstance(architecture, str) else None,
        context_length=context if isinstance(context, int) else None,
        quantization=FILE_TYPES.get(file_type) if isinstance(file_type, int) else None,
        size_bytes=size,
        tensors=tensors,
    )
