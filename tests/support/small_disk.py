"""A small filesystem of a test's own: a tmpfs it fills and empties, so the database meets a
real ENOSPC (SQLite's SQLITE_FULL) as on a user's full disk. Needs root (as CI has); the
fixture skips where mounting is not allowed."""

from __future__ import annotations

import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


class SmallDisk:
    """A tmpfs mounted for the test; `fill()` takes every free byte, `free()` gives it back."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.filler = root / "filler"

    def fill(self) -> None:
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            for size in (65_536, 1):  # big blocks, then the last bytes one by one
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError as exc:
                    assert exc.errno == errno.ENOSPC, exc
        finally:
            os.close(fd)

    def free(self) -> None:
        self.filler.unlink()


def mounted_small_disk(tmp_path: Path) -> Iterator[SmallDisk]:
    """A SmallDisk at `tmp_path`/disk, unmounted after the test (use as a fixture)."""
    root = tmp_path / "disk"
    root.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small filesystem needs root")
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(root)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield SmallDisk(root)
    finally:
        subprocess.run(["umount", "-l", str(root)], check=False)
