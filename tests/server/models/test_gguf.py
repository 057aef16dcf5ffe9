"""GGUF headers: the bundled model's real file is read right; hostile headers, built as real
files (sparse where they claim a lot), are refused at once with the reason, whole-header
bounds and a time bound included (issue 38: a 12 KB file held a pool thread 59 s)."""

from __future__ import annotations

import functools
import struct
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from server.errors import GGUFError
from server.limits import GGUFLimits
from server.models.bundled import bundled_gguf
from server.models.gguf import read_gguf
from tests.support.parley import Parley

U8, U64, STRING, ARRAY = 0, 10, 8, 9
# The bounds stop each hostile header below at its first claim over budget: 0.3 s at most
# (0.7 s on a loaded machine), for the million empty strings read first. The time bound is
# lifted in these tests so that only the bounds can refuse, and the reason is theirs.
REFUSED_WITHIN_S = 10.0


def text(value: bytes) -> bytes:
    return struct.pack("<Q", len(value)) + value


def header(keys: int, tensors: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, tensors, keys)


def array_key(name: bytes, item_kind: int, count: int) -> bytes:
    return text(name) + struct.pack("<IIQ", ARRAY, item_kind, count)


def sparse(path: Path, keys: int, entry: Callable[[bytes], bytes], gap: int) -> Path:
    """A header of `keys` entries, each followed by `gap` bytes that are never written (zeros
    the file system does not store): a few KB on disk claiming gigabytes of header."""
    with path.open("wb") as file:
        file.write(header(keys))
        for index in range(keys):
            file.write(entry(b"k%05d" % index))
            file.seek(gap, 1)
        file.truncate(file.tell() + 4096)
    return path


def many_string_arrays(directory: Path) -> Path:
    # The file: key after key holding a million empty strings, each under the old cap.
    entry = functools.partial(array_key, item_kind=STRING, count=10**6)
    return sparse(directory / "strings.gguf", 64, entry, 8 * 10**6)


def many_number_arrays(directory: Path) -> Path:
    entry = functools.partial(array_key, item_kind=U64, count=9 * 10**6)
    return sparse(directory / "numbers.gguf", 64, entry, 72 * 10**6)


def long_strings(directory: Path) -> Path:
    # Strings under the per-string cap, one per key, until the header is gigabytes long.
    def entry(name: bytes) -> bytes:
        return text(name) + struct.pack("<IQ", STRING, 15_000_000)

    return sparse(directory / "long.gguf", 1_000, entry, 15_000_000)


def giant_string(directory: Path) -> Path:
    path = directory / "giant.gguf"
    path.write_bytes(header(1) + text(b"k") + struct.pack("<IQ", STRING, 2**40))
    return path


def giant_key(directory: Path) -> Path:
    path = directory / "key.gguf"
    path.write_bytes(header(1) + struct.pack("<Q", 10_000_000) + b"k" * 4096)
    return path


def many_keys(directory: Path) -> Path:
    path = directory / "keys.gguf"
    path.write_bytes(
        header(GGUFLimits.max_keys + 1) + (text(b"k") + struct.pack("<IB", U8, 1)) * 10
    )
    return path


def many_tensors(directory: Path) -> Path:
    path = directory / "tensors.gguf"
    path.write_bytes(header(0, tensors=GGUFLimits.max_tensors + 1) + b"\0" * 4096)
    return path


def huge_array(directory: Path) -> Path:
    path = directory / "huge.gguf"
    path.write_bytes(header(1) + array_key(b"evil", 4, 2**63))
    return path


HOSTILE = [
    (many_string_arrays, "over 2,000,000 strings"),
    (many_number_arrays, "over 20,000,000 items"),
    (long_strings, "over 512,000,000 bytes"),
    (giant_string, "impossibly long"),
    (giant_key, "impossibly long"),
    (many_keys, "claims 10,001 keys"),
    (many_tensors, "200,001 tensors"),
    (huge_array, "over 20,000,000 items"),
]


@pytest.mark.parametrize(("make", "reason"), HOSTILE, ids=[make.__name__ for make, _ in HOSTILE])
def test_a_hostile_header_is_refused_at_once_saying_why(
    tmp_path: Path, make: object, reason: str
) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    started = time.monotonic()
    with pytest.raises(GGUFError, match="damaged") as refused:
        read_gguf(path, seconds=60)
    assert time.monotonic() - started < REFUSED_WITHIN_S
    assert reason in str(refused.value)


def test_the_sparse_files_are_small_on_disk_and_huge_in_name(tmp_path: Path) -> None:
    # What makes them hostile: the header claims far more than the disk holds.
    path = many_string_arrays(tmp_path)
    assert path.stat().st_size > 500_000_000
    assert path.stat().st_blocks * 512 < 2_000_000


def test_the_bundled_models_real_file_is_read_right() -> None:
    path = bundled_gguf()  # found through importlib.metadata, as the server finds it
    info = read_gguf(path)
    assert (info.architecture, info.context_length, info.quantization) == ("llama", 8192, "Q4_1")
    assert (info.tensors, info.size_bytes) == (272, path.stat().st_size)


def test_a_header_read_past_its_time_is_refused_saying_so() -> None:
    with pytest.raises(GGUFError, match="took more than 0 s to read"):
        read_gguf(bundled_gguf(), seconds=0)


def test_six_hostile_files_at_once_are_refused_and_the_models_list_still_answers(
    data_dir: Path, tmp_path: Path
) -> None:
    # Issue 38: six of them filled the server's thread pool and /api/models went unanswered.
    paths = []
    for index in range(6):
        folder = tmp_path / f"h{index}"
        folder.mkdir()
        paths.append(many_string_arrays(folder))
    server = Parley(data_dir).start()
    try:
        with ThreadPoolExecutor(6) as pool:
            replies = list(
                pool.map(
                    lambda p: server.call(
                        "POST", "/api/models/local", json_body={"path": str(p)}, timeout=60
                    ),
                    paths,
                )
            )
        assert [r.status for r in replies] == [400] * 6, [r.body for r in replies]
        # Over the strings bound, or (on a machine loaded enough) over the time bound first.
        assert all("damaged" in r.json()["error"]["message"] for r in replies)
        listed = server.call("GET", "/api/models")
        assert listed.status == 200
        assert all(m["name"] != "strings" for m in listed.json()["models"])
    finally:
        server.stop()
