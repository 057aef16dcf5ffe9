"""What a GGUF file says about itself, read from its header without loading the model.

Used to refuse a file that is not a model before registering it (`POST /api/models/local`),
and to show its size, quantization and context length. Every length read from the file is
bounded, and so is the whole header (keys, strings, array items, tensors, bytes and time), so
a hostile or damaged file costs little and raises `GGUFError` with the reason. Per-length caps
alone let a 12 KB sparse file claim a million empty strings in key after key: 59 s in a pool
thread, then accepted. A claimed count is checked against what is left of the
budget before a single item is read, so such a header is refused at its first big claim.
"""

from __future__ import annotations

import re
import stat
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from server.errors import GGUFError
from server.limits import GGUFLimits, ModelLimits

MAGIC = b"GGUF"
MAX_KEY_BYTES = 65_535  # the GGUF spec's own limit; also for the few values kept
HEADER_SECONDS = ModelLimits.gguf_header_time  # server/limits.py
# Only these keys are kept; the others are read past, not stored.
WANTED_KEYS = ("general.architecture", "general.file_type", "general.alignment")
SHAPE_KEYS = (
    ".context_length",
    ".block_count",
    ".embedding_length",
    ".attention.head_count",
    ".attention.head_count_kv",
)
TEMPLATE_KEY = "tokenizer.chat_template"
ALIGNMENT_KEY = "general.alignment"

# The value types of GGUF's key-value section, and the struct format of each scalar.
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
           11: "<q", 12: "<d"}  # fmt: skip
STRING, ARRAY = 8, 9
U64 = struct.Struct("<Q")

# `general.file_type` (llama.cpp's LLAMA_FTYPE_*), for the common ones.
FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
              10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
              16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
              22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
              28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
              37: "TQ2_0", 38: "MXFP4"}  # fmt: skip


@dataclass(frozen=True)
class GGUFInfo:
    architecture: str | None
    context_length: int | None
    quantization: str | None
    size_bytes: int
    tensors: int
    # The shape that sizes its context's memory (server/models/fit.py); None where not said.
    block_count: int | None = None
    embedding_length: int | None = None
    head_count: int | None = None
    head_count_kv: int | None = None
    # Whether its chat template takes tools (None: no template, or one too long to read).
    template_tools: bool | None = None


def read_gguf(path: Path, *, seconds: float = HEADER_SECONDS) -> GGUFInfo:
    """The file's own account of itself. Raises GGUFError (missing, not GGUF, damaged, or a
    header over its bounds, including `seconds` to read it).

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
            return _read(_Reader(file, status.st_size, seconds), status.st_size)
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
    """Reads the header, keeping count of everything it costs against `GGUFLimits`."""

    def __init__(self, file: IO[bytes], size: int, seconds: float) -> None:
        self.file = file
        self.size = size
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.used = 0  # header bytes read or skipped
        self.strings = 0
        self.items = 0

    def check_time(self) -> None:
        if time.monotonic() >= self.deadline:
            raise GGUFError(
                f"its header took more than {self.seconds:g} s to read (a damaged or hostile "
                "file, or a very slow disk)"
            )

    def spend(self, count: int) -> None:
        self.used += count
        most = GGUFLimits.max_header_bytes
        if self.used > most:
            raise GGUFError(f"the file is damaged (its header is over {most:,} bytes long)")

    def count_strings(self, count: int) -> None:
        self.strings += count
        if self.strings > GGUFLimits.max_strings:
            raise GGUFError(
                f"the file is damaged (its header holds over {GGUFLimits.max_strings:,} strings)"
            )

    def skip(self, count: int) -> None:
        if count > self.size - self.file.tell():
            raise GGUFError("the file is truncated (it ends inside its header)")
        self.spend(count)
        self.file.seek(count, 1)

    def take(self, count: int) -> bytes:
        self.spend(count)
        data = self.file.read(count)
        if len(data) != count:
            raise GGUFError("the file is truncated (it ends inside its header)")
        return data

    def scalar(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def string(self, keep: bool = True) -> str:
        self.count_strings(1)
        length = self.scalar("<Q")
        if length > (MAX_KEY_BYTES if keep else GGUFLimits.max_string_bytes):
            raise GGUFError("the file is damaged (a string in its header is impossibly long)")
        if not keep:
            self.skip(length)
            return ""
        return self.take(length).decode("utf-8", "replace")

    def template(self) -> str | None:
        """The chat template; None (skipped) when it is longer than
        `GGUFLimits.max_template_bytes`."""
        self.count_strings(1)
        length = self.scalar("<Q")
        if length > GGUFLimits.max_string_bytes:
            raise GGUFError("the file is damaged (a string in its header is impossibly long)")
        if length > GGUFLimits.max_template_bytes:
            self.skip(length)
            return None
        return self.take(length).decode("utf-8", "replace")

    def value(self, kind: int, keep: bool = True) -> Any:
        if kind in SCALARS:
            return self.scalar(SCALARS[kind])
        if kind == STRING:
            return self.string(keep)
        if kind == ARRAY:
            item_kind, count = self.scalar("<I"), self.scalar("<Q")
            self.items += count
            most = GGUFLimits.max_array_items
            if self.items > most:
                raise GGUFError(f"the file is damaged (its arrays hold over {most:,} items)")
            if item_kind in SCALARS:
                # Numeric arrays (token scores…) are not needed.
                self.skip(struct.calcsize(SCALARS[item_kind]) * count)
                return None
            if item_kind == STRING:
                self.count_strings(count)  # the whole claim, before reading any of it
                self._skip_strings(count)
                return None
            raise GGUFError(f"the file is damaged (unknown array type {item_kind})")
        raise GGUFError(f"the file is damaged (unknown value type {kind})")

    def _skip_strings(self, count: int) -> None:
        """The vocabulary: skipped string by string (the one loop per item, kept tight)."""
        read, seek, unpack = self.file.read, self.file.seek, U64.unpack
        for index in range(count):
            if not index & 0xFFFF:
                self.check_time()
            data = read(8)
            if len(data) != 8:
                raise GGUFError("the file is truncated (it ends inside its header)")
            (length,) = unpack(data)
            if length > GGUFLimits.max_string_bytes:
                raise GGUFError("the file is damaged (an impossibly long string)")
            self.spend(8 + length)
            seek(length, 1)
        if self.file.tell() > self.size:
            raise GGUFError("the file is truncated (it ends inside its header)")


def _read(reader: _Reader, size: int) -> GGUFInfo:
    if reader.file.read(4) != MAGIC:
        raise GGUFError("not a GGUF model file")
    version = reader.scalar("<I")
    if version not in (2, 3):
        raise GGUFError(f"GGUF version {version} is not supported")
    tensors, keys = reader.scalar("<Q"), reader.scalar("<Q")
    if keys > GGUFLimits.max_keys or tensors > GGUFLimits.max_tensors:
        raise GGUFError(
            f"the file is damaged (its header claims {keys:,} keys and {tensors:,} tensors)"
        )
    meta: dict[str, Any] = {}
    for _ in range(keys):
        reader.check_time()
        key = reader.string()
        kind = reader.scalar("<I")
        if key == TEMPLATE_KEY and kind == STRING:
            meta[key] = reader.template()
            continue
        wanted = key in WANTED_KEYS or key.endswith(SHAPE_KEYS)
        value = reader.value(kind, keep=wanted)
        if wanted:
            meta[key] = value
    last_offset = 0
    for _ in range(tensors):
        reader.check_time()
        reader.string(keep=False)  # name
        dims = reader.scalar("<I")
        if dims > GGUFLimits.max_dims:
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

    def shape(name: str) -> int | None:
        found = meta.get(f"{architecture}.{name}") if isinstance(architecture, str) else None
        return found if isinstance(found, int) and not isinstance(found, bool) else None

    file_type = meta.get("general.file_type")
    template = meta.get(TEMPLATE_KEY)
    return GGUFInfo(
        architecture=architecture if isinstance(architecture, str) else None,
        context_length=shape("context_length"),
        quantization=FILE_TYPES.get(file_type) if isinstance(file_type, int) else None,
        size_bytes=size,
        tensors=tensors,
        block_count=shape("block_count"),
        embedding_length=shape("embedding_length"),
        head_count=shape("attention.head_count"),
        head_count_kv=shape("attention.head_count_kv"),
        template_tools=takes_tools(template) if isinstance(template, str) else None,
    )


def takes_tools(template: str) -> bool:
    """Whether a chat template renders the tools it is given (as llama.cpp's own check
    does, by the template's use of the `tools` variable or of tool calls)."""
    return bool(re.search(r"\btools\b|tool_calls", template))
