"""A tool server's template of resource URIs filled in with what the user typed (RFC 6570's
expressions, as MCP servers use them): each value escaped as its expression says, so a plain
`{name}` cannot add a path of its own."""

from __future__ import annotations

from desktop.composer.uri_templates import expand, last_part, variables


def test_the_variables_are_named_once_in_order() -> None:
    template = "repo://{owner}/{repo}/blob{/path*}{?ref,owner}"
    assert variables(template) == ["owner", "repo", "path", "ref"]


def test_a_plain_value_is_escaped_whole() -> None:
    assert expand("notes://{name}", {"name": "a/../b c"}) == "notes://a%2F..%2Fb%20c"


def test_reserved_expansion_keeps_the_path() -> None:
    assert expand("file:///{+path}", {"path": "docs/a b.md"}) == "file:///docs/a%20b.md"


def test_the_operators_put_their_values_in_place() -> None:
    values = {"path": "x", "ref": "main", "q": "a&b"}
    assert expand("r://t{/path}{?ref,q}", values) == "r://t/x?ref=main&q=a%26b"
    assert expand("r://t{/path}{?ref}", {}) == "r://t"  # not given: left out
    assert expand("r://t{#part}", {"part": "a/b"}) == "r://t#a/b"


def test_an_attachment_is_named_by_the_uris_last_part() -> None:
    assert last_part("notes://shopping") == "shopping"
    assert last_part("docs://dir/readme.md/") == "readme.md"
    assert last_part("notes://a%20b") == "a b"
