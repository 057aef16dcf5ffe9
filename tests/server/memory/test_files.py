"""A memory file on disk as hostile input: a hand edit between Parley's read and its write is
kept; a 50 MB file, a binary one, a link, a FIFO are refused with an error saying so and left
exactly as they are."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from server.errors import (
    MemoryChangingError,
    MemoryFileError,
    NotFoundError,
    PayloadTooLargeError,
)
from server.limits import MemoryLimits
from server.memory import format
from server.memory.files import MemoryFile, memory_path
from server.memory.prompt import memory_block

CHAT = "c" * 32
LIMITS = MemoryLimits()


def run(coroutine: object) -> object:
    async def main() -> object:
        return await coroutine  # type: ignore[misc]

    return anyio.run(main)


def remember(memory: MemoryFile, said: str, chat: str = CHAT) -> None:
    line = format.entry(said, chat, LIMITS.max_line_chars)
    run(memory.change(lambda text: format.with_line(text, line)))


def test_the_scopes_have_their_own_files_and_no_id_names_a_path(tmp_path: Path) -> None:
    assert memory_path(tmp_path, None) == tmp_path / "memory" / "global.md"
    assert memory_path(tmp_path, "p1") == tmp_path / "memory" / "projects" / "p1.md"
    for bad in ("../x", "a/b", "", ".", "x" * 65):
        with pytest.raises(NotFoundError):
            memory_path(tmp_path, bad)


def test_a_line_remembered_makes_the_file_and_reads_back_with_its_chat(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, LIMITS)
    remember(memory, "The user prefers metric units.")
    assert memory.path.read_text() == f"- The user prefers metric units. <!-- chat:{CHAT} -->\n"
    assert memory.path.stat().st_mode & 0o777 == 0o600  # the user's alone
    found = run(memory.read())
    assert [(x.text, x.chat_id) for x in format.lines(found.text)] == [  # type: ignore[attr-defined]
        ("The user prefers metric units.", CHAT)
    ]


def test_a_hand_edit_between_the_read_and_the_write_is_kept(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, "p1", LIMITS)
    memory.path.parent.mkdir(parents=True)
    memory.path.write_text("# Mine\n- by hand\n")
    line = format.entry("Metric units.", CHAT, 500)
    seen: list[str] = []

    def add(text: str) -> str | None:
        seen.append(text)
        if len(seen) == 1:  # an editor saves while Parley makes its change
            memory.path.write_text("# Mine\n- by hand\n- saved meanwhile\n")
        return format.with_line(text, line)

    run(memory.change(add))
    assert len(seen) == 2  # made again, over the file as saved
    assert memory.path.read_text() == f"# Mine\n- by hand\n- saved meanwhile\n{line}\n"


def test_an_editor_saving_by_rename_between_read_and_write_is_kept(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, LIMITS)
    memory.path.parent.mkdir(parents=True)
    memory.path.write_text("a\n")
    calls = 0

    def add(text: str) -> str | None:
        nonlocal calls
        calls += 1
        if calls == 1:
            fresh = memory.path.with_name("editor.tmp")
            fresh.write_text("a\nb\n")
            os.replace(fresh, memory.path)
        return text + "c\n"

    run(memory.change(add))
    assert memory.path.read_text() == "a\nb\nc\n"


def test_a_file_that_keeps_changing_is_refused_and_the_last_save_kept(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, MemoryLimits(write_attempts=3))
    memory.path.parent.mkdir(parents=True)
    memory.path.write_text("0\n")
    saves = 0

    def add(text: str) -> str | None:
        nonlocal saves
        saves += 1
        memory.path.write_text(f"{saves}\n")
        return text + "parley\n"

    with pytest.raises(MemoryChangingError, match="kept changing"):
        run(memory.change(add))
    assert memory.path.read_text() == "3\n"


def test_the_editor_saves_only_over_the_version_it_read(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, LIMITS)
    first = run(memory.replace("one\n", None))
    tag = first.tag  # type: ignore[attr-defined]
    assert memory.path.read_text() == "one\n"
    memory.path.write_text("one\nby hand\n")
    with pytest.raises(MemoryChangingError):
        run(memory.replace("two\n", tag))
    assert memory.path.read_text() == "one\nby hand\n"
    with pytest.raises(MemoryChangingError):
        run(memory.replace("two\n", None))  # "there was no file": there is one
    now = run(memory.read())
    run(memory.replace("two\n", now.tag))  # type: ignore[attr-defined]
    assert memory.path.read_text() == "two\n"


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"x" * (50 * 1024 * 1024), "larger than 65,536 bytes"),
        (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, "not UTF-8"),
        (b"notes\x00\x01\x02", "binary bytes"),
    ],
    ids=["50MB", "png", "nul"],
)
def test_a_file_parley_will_not_read_is_refused_and_never_rewritten(
    tmp_path: Path, content: bytes, why: str
) -> None:
    memory = MemoryFile(tmp_path, None, LIMITS)
    memory.path.parent.mkdir(parents=True)
    memory.path.write_bytes(content)
    before = os.stat(memory.path)
    with pytest.raises(MemoryFileError, match=why) as raised:
        run(memory.read())
    assert str(memory.path) in raised.value.message
    with pytest.raises(MemoryFileError, match=why):
        remember(memory, "Metric units.")
    with pytest.raises(MemoryFileError, match=why):
        run(memory.replace("new\n", None))
    after = os.stat(memory.path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )
    assert memory.path.read_bytes()[:64] == content[:64]
    assert os.listdir(memory.path.parent) == ["global.md"]  # no temporary file left
    # The turn goes on without it.
    assert run(memory_block(tmp_path, None, LIMITS)) is None


def test_a_symlinked_memory_file_is_not_followed(tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere.md"
    secret.write_text("- the target's words\n")
    memory = MemoryFile(tmp_path / "data", None, LIMITS)
    memory.path.parent.mkdir(parents=True)
    memory.path.symlink_to(secret)
    with pytest.raises(MemoryFileError, match="symbolic link"):
        run(memory.read())
    with pytest.raises(MemoryFileError, match="symbolic link"):
        remember(memory, "Metric units.")
    assert secret.read_text() == "- the target's words\n"
    assert memory.path.is_symlink()
    assert run(memory_block(tmp_path / "data", None, LIMITS)) is None
    # Deleting it deletes the link, never its target.
    assert run(memory.delete()) is True
    assert not os.path.lexists(memory.path) and secret.exists()


def test_a_symlinked_memory_folder_is_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "projects").mkdir(parents=True)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "memory").symlink_to(elsewhere)
    memory = MemoryFile(tmp_path / "data", "p1", LIMITS)
    with pytest.raises(MemoryFileError, match="symbolic link"):
        remember(memory, "Metric units.")
    assert list((elsewhere / "projects").iterdir()) == []


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, LIMITS)
    memory.path.parent.mkdir(parents=True)
    os.mkfifo(memory.path)
    with pytest.raises(MemoryFileError, match="not a regular file"):
        run(memory.read())


def test_delete_removes_only_the_version_named(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, LIMITS)
    assert run(memory.delete()) is False  # no file
    read = run(memory.replace("one\n", None))
    memory.path.write_text("one\nby hand\n")
    with pytest.raises(MemoryChangingError):
        run(memory.delete(read.tag))  # type: ignore[attr-defined]
    assert memory.path.read_text() == "one\nby hand\n"
    now = run(memory.read())
    assert run(memory.delete(now.tag)) is True  # type: ignore[attr-defined]
    assert not memory.path.exists()
    assert os.listdir(memory.path.parent) == []


def test_a_50_mb_file_can_still_be_deleted_when_the_user_asks(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, LIMITS)
    memory.path.parent.mkdir(parents=True)
    memory.path.write_bytes(b"x" * (50 * 1024 * 1024))
    with pytest.raises(MemoryChangingError):
        run(memory.delete("0" * 64))  # not the version named: kept
    assert memory.path.stat().st_size == 50 * 1024 * 1024
    assert run(memory.delete()) is True
    assert not memory.path.exists()


def test_a_change_that_would_pass_the_bound_is_refused(tmp_path: Path) -> None:
    memory = MemoryFile(tmp_path, None, MemoryLimits(max_bytes=100))
    run(memory.replace("x" * 90 + "\n", None))
    with pytest.raises(PayloadTooLargeError, match="larger than 100 bytes"):
        remember(memory, "one more line that does not fit")
    assert memory.path.read_text() == "x" * 90 + "\n"
