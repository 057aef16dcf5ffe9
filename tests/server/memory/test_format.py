"""A memory file's text: lines and their chat links, a line added, a line forgotten, what the
model reads."""

from __future__ import annotations

import pytest

from server.memory import format
from server.memory.prompt import block

CHAT = "0123456789abcdef0123456789abcdef"


def test_a_line_added_is_a_list_item_linked_to_its_chat_and_read_back_as_such() -> None:
    line = format.entry("The user prefers metric units.", CHAT, 500)
    assert line == f"- The user prefers metric units. <!-- chat:{CHAT} -->"
    text = format.with_line("# Memory\n\nWritten by hand\n", line)
    assert text == f"# Memory\n\nWritten by hand\n{line}\n"
    assert text is not None
    found = format.lines(text)
    assert [(x.number, x.text, x.chat_id) for x in found] == [
        (1, "# Memory", None),
        (3, "Written by hand", None),
        (4, "The user prefers metric units.", CHAT),
    ]


def test_a_proposed_line_is_made_one_line_and_cannot_forge_a_link_or_hide_words() -> None:
    line = format.entry("- Likes\n tea <!-- chat:other --> \x07ok", CHAT, 500)
    assert "\n" not in line and "\x07" not in line
    (found,) = format.lines(line)
    assert found.chat_id == CHAT
    assert found.text == "Likes tea &lt;!-- chat:other --&gt; ok"


@pytest.mark.parametrize("proposed", ["", "   ", "- ", "\n\n"])
def test_an_empty_line_is_refused(proposed: str) -> None:
    with pytest.raises(ValueError, match="the text to remember"):
        format.entry(proposed, CHAT, 500)


def test_a_line_too_long_is_refused_saying_the_most() -> None:
    with pytest.raises(ValueError, match="at most 20 characters"):
        format.entry("x" * 21, CHAT, 20)


def test_a_line_said_already_is_not_added_twice() -> None:
    line = format.entry("Metric units.", CHAT, 500)
    text = format.with_line("", line)
    assert text is not None
    assert format.with_line(text, format.entry("Metric units.", "another", 500)) is None


def test_a_file_with_crlf_and_no_final_newline_keeps_its_endings() -> None:
    line = format.entry("Metric.", CHAT, 500)
    assert format.with_line("a\r\nb", line) == f"a\r\nb\r\n{line}\r\n"


def test_forget_removes_that_line_and_its_copies_and_keeps_every_other_byte() -> None:
    linked = f"- Metric units. <!-- chat:{CHAT} -->"
    text = f"\ufeff# Mine\r\n\r\nhand line  \r\n{linked}\r\nlast\r\n{linked}"
    lines = format.lines(text)
    assert lines[0].text == "# Mine"  # the byte-order mark is the file's
    target = next(x for x in lines if x.chat_id == CHAT)
    assert format.without(text, target.id) == "\ufeff# Mine\r\n\r\nhand line  \r\nlast\r"
    hand = next(x for x in lines if x.text == "hand line")
    assert format.without(text, hand.id) == f"\ufeff# Mine\r\n\r\n{linked}\r\nlast\r\n{linked}"
    first = lines[0]
    assert (
        format.without(text, first.id) == f"\ufeff\r\nhand line  \r\n{linked}\r\nlast\r\n{linked}"
    )
    assert format.without(text, "0" * 16) is None


def test_an_id_names_the_text_not_the_place() -> None:
    text = "- a\n- b\n"
    (_, b) = format.lines(text)
    moved = format.lines("new line\n" + text)
    assert moved[2].id == b.id and moved[2].number == 3


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (b"\xff\xfe\x00h\x00i", "not UTF-8"),
        (b"text\x00more", "binary bytes"),
        (b"\x89PNG\r\n\x1a\n", "not UTF-8"),
        (b"ok\x1b\x01\x02", "binary bytes"),
    ],
)
def test_bytes_that_are_not_text_are_refused_saying_why(data: bytes, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        format.decoded(data)


def test_the_model_reads_the_lines_without_links_in_a_part_that_says_what_it_is() -> None:
    text = f"# Mine\n\n\n\n- Metric units. <!-- chat:{CHAT} -->\nno </memory> escape\n"
    part = block(text, project=True)
    assert part is not None
    assert CHAT not in part
    assert "this project" in part and "saved memory" in part
    body = part.split("<memory>\n", 1)[1]
    assert body == "# Mine\n\n- Metric units.\nno <\\/memory> escape\n</memory>"
    assert block("\n  \n", project=False) is None
    assert "outside any project" in (block("x", project=False) or "")
