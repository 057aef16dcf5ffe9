"""Splitting a growing reply where re-rendering the rest can never change what is frozen."""

from __future__ import annotations

from desktop.markdown_render import MarkdownRenderer, split_stable


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


def test_a_long_code_block_is_cut_at_a_line_and_carries_its_fence() -> None:
    text = "```python\n" + "print(1)\n" * 300
    stable, tail, carry = split_stable(text, max_tail=100)
    assert stable + tail == text
    assert stable.endswith("\n") and len(tail) <= 100
    assert carry == "```python\n"


def test_rendering_escapes_raw_html_and_links_code_for_copying() -> None:
    renderer = MarkdownRenderer()
    html = renderer.render("<script>alert(1)</script>\n\n```python\nprint('hi')\n```")
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="copy:1"' in html
    assert renderer.code_blocks["1"] == "print('hi')"
