"""Splitting a growing reply where re-rendering the rest can never change what is frozen."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from desktop.client import ReplyEnd
from desktop.markdown_render import (
    MAX_PLAIN_TAIL_CHARS,
    PLAIN_LINE,
    MarkdownRenderer,
    split_stable,
    split_within,
)
from desktop.widgets.transcript import Transcript
from tests.desktop.widgets.transcript.replies import add_text, told


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
USAGE = {"completion_tokens": 12, "tokens_per_s": 40.0, "ttft_ms": 90}


def grown_live(
    qtbot: Any, text: str, step: int = 0, usage: Any = None, saved: str | None = None
) -> Transcript:
    """A reply streamed piece by piece (of `step` characters; by default 7, or a hundredth
    of a long text), each piece drawn before the next comes; `saved`: what the server saved,
    if more than was streamed."""
    step = step or max(7, len(text) // 100)
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.begin_reply("q", "m", ("u", "a"))  # the ids of `reopened`'s messages
    sizes: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: sizes.append(size))
    for end in range(step, len(text) + step, step):
        add_text(view, text[end - step : end])
        qtbot.waitUntil(lambda end=end: bool(sizes) and sizes[-1] == min(end, len(text)))
    with qtbot.waitSignal(view.reply_ended, timeout=5_000):
        view.end_reply(ReplyEnd(status="completed", usage=usage or {}, content=saved))
    return view


def reopened(qtbot: Any, text: str, usage: Any = None) -> Transcript:
    view = Transcript()
    qtbot.addWidget(view)
    view.resize(800, 600)
    base = {"conversation_id": "c", "status": "completed", "ended_by": None, "error": None,
            "created_at": 0.0, "completed_at": 0.0}  # fmt: skip
    view.show_conversation([
        {**base, "id": "u", "role": "user", "content": "q", "model": None, "usage": None},
        {**base, "id": "a", "role": "assistant", "content": text, "model": "m",
         "usage": usage or {}},
    ])  # type: ignore[list-item]  # fmt: skip
    return view


@pytest.mark.parametrize("name", SAMPLES)
def test_a_reply_drawn_live_is_the_same_document_as_when_reopened(qtbot: Any, name: str) -> None:
    text = SAMPLES[name]
    live, again = grown_live(qtbot, text), reopened(qtbot, text)

    def document(view: Transcript) -> str:
        return re.sub(r"copy:\d+", "copy:N", view.document().toMarkdown())  # ids differ

    assert document(live) == document(again)


def block_tops(view: Transcript) -> list[tuple[float, str]]:
    """Where each line of text lies in the laid-out document, and its text."""
    view.show()
    document = view.document()
    layout = document.documentLayout()
    tops = []
    block = document.begin()
    while block.isValid():
        if block.text().strip():
            tops.append((layout.blockBoundingRect(block).top(), block.text()))
        block = block.next()
    return tops


@pytest.mark.parametrize("name", SAMPLES)
@pytest.mark.parametrize("usage", [None, USAGE], ids=["no figures", "figures"])
def test_a_reply_drawn_live_lies_where_it_lies_when_reopened(
    qtbot: Any, name: str, usage: Any
) -> None:
    """Not only the same text: every line at the same height, so nothing moves when the chat
    is drawn again (the gaps between name, text, code, tables and footer)."""
    text = SAMPLES[name]
    live, again = grown_live(qtbot, text, usage=usage), reopened(qtbot, text, usage=usage)
    assert block_tops(live) == block_tops(again)


@pytest.mark.parametrize("unseen", ["```\nprint(1)\n```\n", "More of it.\n"])
def test_text_saved_beyond_what_was_shown_lies_where_it_lies_when_reopened(
    qtbot: Any, unseen: str
) -> None:
    """Stop: the server generated text the view never received, drawn at the ending (a code
    block is a table to Qt: the footer goes below it only once it is laid out)."""
    shown = "Intro paragraph.\n\nThe code:\n\n"
    live = grown_live(qtbot, shown, saved=shown + unseen)
    assert block_tops(live) == block_tops(reopened(qtbot, shown + unseen))


def test_a_long_paragraph_that_comes_in_bursts_lies_as_when_reopened(qtbot: Any) -> None:
    """Bursts bigger than one update's budget are cut wherever the budget ends."""
    text = SAMPLES["a long paragraph"]
    live, again = grown_live(qtbot, text, step=2_500), reopened(qtbot, text)
    assert block_tops(live) == block_tops(again)


def test_a_loose_numbered_list_keeps_its_numbers_while_it_streams(qtbot: Any) -> None:
    view = Transcript()
    qtbot.addWidget(view)
    view.begin_reply("q", "m")
    sizes: list[int] = []
    view.reply_rendered.connect(lambda size, _cost: sizes.append(size))
    text = "Intro:\n\n1. First thing\n\n2. Second thing\n\n3. Third thing\n\nMore"
    for piece in text.split(" "):
        add_text(view, piece + " ")
        qtbot.waitUntil(lambda: bool(sizes) and sizes[-1] == told(view))
    markdown = view.document().toMarkdown()  # still streaming: no final redraw yet
    assert "\nIntro:\n" in markdown and "1.  First thing" in markdown, markdown
    # One list, not one per item (cut between its items, it would be three).
    assert "1.  First thing\n2.  Second thing\n3.  Third thing" in markdown, markdown


def test_nested_items_nest_whatever_their_indentation() -> None:
    html = MarkdownRenderer().render("- top\n  - two\n    - three\n\n1. one\n   - sub\n")
    assert html.count("<ul>") == 3 + 1 and "<ol>" in html


def test_tables_have_rules_and_quotes_a_bar() -> None:
    html = MarkdownRenderer().render("| a |\n|---|\n| 1 |\n\n> quoted\n")
    assert '<table border="1"' in html
    assert 'bgcolor="#c8c8c8"></td>' in html and "quoted" in html
    assert "<blockquote>" not in html
