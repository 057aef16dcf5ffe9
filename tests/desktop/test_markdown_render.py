"""Splitting a growing reply where re-rendering the rest can never change what is frozen."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.transcript.blocks import ReplyBlocks
from desktop.transcript.markdown import (
    MAX_PLAIN_TAIL_CHARS,
    PLAIN_LINE,
    MarkdownRenderer,
    split_stable,
    split_within,
)


def test_cut_after_the_last_blank_line_outside_code() -> None:
    text = "Intro.\n\n```python\nx = 1\n\ny = 2\n"
    stable, tail, carry = split_stable(text)
    assert (stable, tail, carry) == ("Intro.\n\n", "```python\nx = 1\n\ny = 2\n", "")


def test_cut_after_a_closed_code_block() -> None:
    text = "```\ncode\n```\nAfter"
    assert split_stable(text) == ("```\ncode\n```\n", "After", "")


def test_an_endless_paragraph_is_cut_at_a_space_to_keep_the_tail_short() -> None:
    text = "word " * 1000
    stable, tail, carry = split_stable(text, max_tail=100)
    assert stable + tail == text and len(tail) <= 100 and carry == ""


def test_only_a_tail_of_plain_prose_is_cut_short() -> None:
    """Past MAX_PLAIN_TAIL_CHARS a plain tail is cut at its last space; one with markup a
    cut could split (emphasis here) waits for MAX_TAIL_CHARS."""
    plain = "Intro.\n\n" + "word " * 100
    stable, tail, _ = split_stable(plain)
    assert stable.startswith("Intro.\n\nword ") and tail == "" and len(stable) == len(plain)
    marked = "Intro.\n\n" + "**bold** word " * 30
    assert split_stable(marked) == ("Intro.\n\n", "**bold** word " * 30, "")
    assert len("**bold** word " * 30) > MAX_PLAIN_TAIL_CHARS
    lines = "Intro.\n\n" + "a line of prose\n" * 20 + "last"
    stable, tail, _ = split_stable(lines)
    assert tail == "last" and stable.endswith("prose\n")


def test_text_cut_by_an_update_s_budget_is_cut_where_it_can_go_on() -> None:
    """split_within: with nothing stable, still a cut (more waits than an update takes)."""
    assert split_within("a paragraph going on and") == ("a paragraph going on ", "and", "")
    code = "```python\nx = 1\ny = 2\nz = "
    assert split_within(code) == ("```python\nx = 1\ny = 2\n", "z = ", "```python\n")
    # Past what the last cut carried, one line with no break: all of it, the fence carried.
    line = "```python\n" + "9" * 300
    assert split_within(line, beyond=len("```python\n")) == (line, "", "```python\n")
    assert split_within("9" * 300) == ("9" * 300, "", "")


def test_a_long_code_block_is_cut_at_a_line_and_carries_its_fence() -> None:
    text = "```python\n" + "print(1)\n" * 300
    stable, tail, carry = split_stable(text, max_tail=100)
    assert stable + tail == text
    assert stable.endswith("\n") and len(tail) <= 100
    assert carry == "```python\n"


# Prose and everything Markdown may read as markup, at the start of a line or inside it.
LINE_TEXT = st.text(st.sampled_from(list("ab1 .)-+*#>=|_`[]()!<>&\\~:'\"\u00a0\té\n")), max_size=12)


@settings(max_examples=2000, deadline=None)
@given(LINE_TEXT)
def test_a_line_drawn_without_the_parser_is_what_the_parser_makes_of_it(text: str) -> None:
    renderer = MarkdownRenderer()
    if PLAIN_LINE.fullmatch(text) and text.strip():
        assert renderer.render(text) == renderer.parsed(text)


def test_plain_prose_skips_the_parser_and_markup_does_not() -> None:
    assert PLAIN_LINE.fullmatch('It\'s 3 p.m. (or so) - "fine", à bientôt.')
    for marked in ["a *b*", "a `b`", "a [b](c)", "    code", "1. item", "- item", "# head",
                   "> quote", "a <b>", "a & b", "one\ntwo", "a\\b"]:  # fmt: skip
        assert not PLAIN_LINE.fullmatch(marked), marked


def test_rendering_escapes_raw_html_and_links_code_for_copying() -> None:
    renderer = MarkdownRenderer()
    html = renderer.render("<script>alert(1)</script>\n\n```python\nprint('hi')\n```")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="copy:1"' in html
    assert renderer.code_blocks["1"] == "print('hi')"


SAMPLES = {
    "paragraphs and code": (
        "First paragraph, long enough to wrap perhaps.\n\nSecond one.\n\n```python\n"
        "x = 1\n\ny = 2\n```\n\nAfter the code.\n"
    ),
    "loose numbered list": "Steps:\n\n1. First thing\n\n2. Second thing\n\n3. Third\n\nDone.\n",
    "nested lists (2 and 3 spaces)": (
        "- top\n  - two-space nested\n    - deeper\n- back\n\n"
        "1. one\n   - three-space nested\n2. two\n"
    ),
    "table": "Results:\n\n| name | value |\n|---|---|\n| a | 1 |\n| b | 2 |\n\nAfter.\n",
    "quote": "He said:\n\n> first line\n> second line\n\nThen left.\n",
    "mixed": "Intro.\n\n1. a\n\n   - x\n   - y\n\n2. b\n\n> q\n\n| h |\n|---|\n| c |\n",
    "ends with code": "Run this:\n\n```sh\nls -l\n```\n",
    # Longer than the tail drawn again at each update (1,500 characters), so drawn in
    # pieces; shorter than a block may grow to (JOIN_MAX_CHARS, 2,000).
    "a long paragraph": " ".join(f"word{n}" for n in range(230)) + "\n\nAfter it.\n",
    "a long paragraph with line breaks": "\n".join(
        " ".join(f"w{n}x{m}" for m in range(12)) for n in range(26)
    ),
    "a long paragraph with bold across a cut": (
        " ".join(f"word{n}" for n in range(90))
        + " **bold "
        + " ".join(f"word{n}" for n in range(130))
        + " end of bold** done.\n"
    ),
}
TAG = re.compile(r"<[^>]*>")


def visible(rendered: str) -> str:
    return re.sub(r"\s+", " ", TAG.sub(" ", rendered)).strip()


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("step", [1, 7, 60])
def test_a_reply_drawn_live_shows_what_it_shows_when_reopened(name: str, step: int) -> None:
    """Streamed into the transcript's blocks a few characters at a time, a reply reads as
    the same reply drawn whole when its chat is opened again."""
    text = SAMPLES[name]
    live = ReplyBlocks(MarkdownRenderer())
    for end in range(step, len(text) + step, step):
        live.set_text(text[:end])
    reopened = ReplyBlocks(MarkdownRenderer()).set_text(text)
    assert visible(" ".join(live.blocks)) == visible(" ".join(reopened))


def test_nested_items_nest_whatever_their_indentation() -> None:
    html = MarkdownRenderer().render("- top\n  - two\n    - three\n\n1. one\n   - sub\n")
    assert html.count("<ul>") == 3 + 1 and "<ol>" in html


def test_tables_have_rules_and_quotes_a_bar() -> None:
    html = MarkdownRenderer().render("| a |\n|---|\n| 1 |\n\n> quoted\n")
    assert '<table border="1"' in html
    assert 'bgcolor="#c8c8c8"></td>' in html and "quoted" in html
    assert "<blockquote>" not in html
