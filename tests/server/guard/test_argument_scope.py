"""An allow for calls whose path lies under a folder (server/agent/argument_scope.py): the
folder itself and what is inside it match; nothing that could resolve elsewhere does."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.agent.argument_scope import check_prefix, lies_under


@pytest.mark.parametrize(
    "value",
    ["/home/me/notes", "/home/me/notes/", "/home/me/notes/a.md", "/home/me//notes/./b/c.md"],
)
def test_the_folder_and_what_lies_inside_it_match(value: str) -> None:
    assert lies_under(value, "/home/me/notes")


@pytest.mark.parametrize(
    "value",
    [
        "/home/me/notes/../.bashrc",  # up and out
        "/home/me/notes/sub/../../.ssh/id_rsa",
        "/home/me/notes/sub/..",  # up, even when it would stay inside
        "/home/me/notes/%2e%2e/.bashrc",  # percent-encoded
        "/home/me/notes/%2E%2E%2f.bashrc",
        "/home/me/notes/\uff0e\uff0e/.bashrc",  # fullwidth dots (NFKC: "..")
        "/home/me/notes\\..\\.bashrc",  # a backslash separates too
        "/home/me/notes-old/a.md",  # a sibling sharing the prefix's letters
        "/home/me/note",
        "/home/me",
        "home/me/notes/a.md",  # relative where the folder is absolute
        "/home/me/notes/a\x00.md",  # a control character
        "/home/me/notes/a\n.md",
        "",
    ],
)
def test_a_value_that_could_resolve_elsewhere_does_not_match(value: str) -> None:
    assert not lies_under(value, "/home/me/notes")


def test_only_strings_match() -> None:
    assert not lies_under(["/home/me/notes/a.md"], "/home/me/notes")
    assert not lies_under(None, "/home/me/notes")


def test_a_symlink_inside_the_folder_that_points_outside_does_not_match(tmp_path: Path) -> None:
    notes, outside = tmp_path / "notes", tmp_path / "outside"
    notes.mkdir()
    outside.mkdir()
    (notes / "link").symlink_to(outside, target_is_directory=True)
    assert lies_under(str(notes / "real.md"), str(notes))
    assert not lies_under(str(notes / "link" / "secret"), str(notes))


def test_a_folder_reached_through_a_symlink_matches_its_own_files(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real", target_is_directory=True)
    assert lies_under(str(tmp_path / "alias" / "a.md"), str(tmp_path / "alias"))


@pytest.mark.parametrize("prefix", ["", "/", "  ", "/home/../etc", "/home/me/\x00", "x" * 5000])
def test_a_prefix_that_says_no_folder_or_climbs_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError):
        check_prefix(prefix)


def test_a_prefix_is_kept_normalised() -> None:
    assert check_prefix(" /home/me//notes/./ ") == "/home/me/notes"
    assert check_prefix("notes/") == "notes"
