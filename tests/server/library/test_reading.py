"""A file of the library read as hostile input (issue 37): through one descriptor, never
through a link, never blocked by a FIFO, bounded in bytes whatever the walk saw."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from server.errors import SkipFile
from server.library.reading import read_inside


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "home" / ".ssh" / "id_rsa"
    secret.parent.mkdir(parents=True)
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nsecret\n")
    return secret


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "library"
    (folder / "sub").mkdir(parents=True)
    (folder / "sub" / "notes.md").write_text("# Notes\n\nabout quokkas\n")
    return folder


def test_a_plain_file_is_read_with_the_identity_of_what_was_read(root: Path) -> None:
    path = root / "sub" / "notes.md"
    data, identity = read_inside(str(root), str(path))
    assert data == path.read_bytes()
    found = path.stat()
    assert (identity.device, identity.inode, identity.size) == (
        found.st_dev,
        found.st_ino,
        found.st_size,
    )


def test_a_file_swapped_for_a_link_is_not_read_through_it(root: Path, outside: Path) -> None:
    path = root / "sub" / "notes.md"
    path.unlink()
    path.symlink_to(outside)
    with pytest.raises(SkipFile, match="a link"):
        read_inside(str(root), str(path))


def test_a_folder_swapped_for_a_link_is_not_read_through(root: Path, outside: Path) -> None:
    (root / "sub" / "notes.md").unlink()
    (root / "sub").rmdir()
    (root / "sub").symlink_to(outside.parent)
    (outside.parent / "notes.md").write_text("the key's neighbour")
    with pytest.raises(SkipFile, match="a link"):
        read_inside(str(root), str(root / "sub" / "notes.md"))


def test_a_link_to_dev_zero_is_not_read(root: Path) -> None:
    link = root / "zero.txt"
    link.symlink_to("/dev/zero")
    with pytest.raises(SkipFile, match="a link"):
        read_inside(str(root), str(link))


def test_a_fifo_is_refused_without_blocking(root: Path) -> None:
    # Nobody ever writes to it: a blocking open or read would hang this test until its timeout.
    fifo = root / "sub" / "pipe.md"
    os.mkfifo(fifo)
    with pytest.raises(SkipFile, match="not a regular file"):
        read_inside(str(root), str(fifo))


def test_a_huge_sparse_file_is_skipped_by_its_own_size_not_read(root: Path) -> None:
    huge = root / "huge.txt"
    with huge.open("wb") as file:
        file.truncate(1_500_000_000)
    with pytest.raises(SkipFile, match="larger than 20 MB"):
        read_inside(str(root), str(huge))


def test_a_file_longer_than_its_size_says_is_cut_at_the_limit(tmp_path: Path) -> None:
    # A file in /proc is regular and its fstat says 0 bytes, but it reads more: what a file
    # that grows while it is read looks like to the reader.
    proc = f"/proc/{os.getpid()}"
    if not os.path.exists(f"{proc}/environ"):
        pytest.skip("no /proc here")
    assert os.stat(f"{proc}/environ").st_size == 0
    with pytest.raises(SkipFile, match="grew while being read"):
        read_inside(proc, f"{proc}/environ", limit=16)


@pytest.mark.parametrize("path", ["/etc/passwd", "{root}/../outside.md", "{root}"])
def test_a_path_outside_its_folder_is_refused(root: Path, path: str) -> None:
    (root.parent / "outside.md").write_text("outside")
    with pytest.raises(SkipFile, match="not inside its library folder"):
        read_inside(str(root), path.format(root=root))


def test_a_file_gone_before_it_is_read_says_so(root: Path) -> None:
    with pytest.raises(SkipFile, match="gone"):
        read_inside(str(root), str(root / "sub" / "missing.md"))
