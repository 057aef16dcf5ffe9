"""A tool server's template of resource URIs (RFC 6570, as MCP's `resources/templates/list`
gives them: `notes://{name}`, `repo://{owner}/{repo}/file{/path*}`) filled in with what the
user typed: the variables it names, in order, and the URI with their values put in, each
escaped as its expression says (a plain `{name}` escapes every reserved character, so a
value cannot add a path of its own; `{+path}` and `{#part}` keep them)."""

from __future__ import annotations

import re
from urllib.parse import quote, unquote

EXPRESSION = re.compile(r"\{([+#./;?&]?)([^{}]+)\}")
RESERVED = ":/?#[]@!$&'()*+,;="
# The operator: what goes first, between the values, whether they are named, and whether the
# reserved characters are kept.
OPERATORS = {
    "": ("", ",", False, False),
    "+": ("", ",", False, True),
    "#": ("#", ",", False, True),
    ".": (".", ".", False, False),
    "/": ("/", "/", False, False),
    ";": (";", ";", True, False),
    "?": ("?", "&", True, False),
    "&": ("&", "&", True, False),
}


def _names(body: str) -> list[str]:
    """The variables of one expression, their modifiers (`*`, `:3`) dropped."""
    return [re.sub(r"(\*|:\d+)$", "", part.strip()) for part in body.split(",") if part.strip()]


def variables(template: str) -> list[str]:
    """The variables the template names, in order, each once."""
    found: list[str] = []
    for match in EXPRESSION.finditer(template):
        found += [name for name in _names(match.group(2)) if name not in found]
    return found


def expand(template: str, values: dict[str, str]) -> str:
    """The URI, each expression replaced by its values (one not given is left out, as
    RFC 6570 leaves out an undefined variable)."""

    def replaced(match: re.Match[str]) -> str:
        first, between, named, reserved = OPERATORS[match.group(1)]
        pieces = []
        for name in _names(match.group(2)):
            value = values.get(name, "")
            if not value:
                continue
            escaped = quote(value, safe=RESERVED if reserved else "")
            pieces.append(f"{name}={escaped}" if named else escaped)
        return first + between.join(pieces) if pieces else ""

    return EXPRESSION.sub(replaced, template)


def last_part(uri: str) -> str:
    """A name for what the URI names: its last part, as people write it (the server names
    an attachment of a URI alone so too, escaped)."""
    tail = uri.rstrip("/").rsplit("/", 1)[-1]
    return unquote(tail or uri)
