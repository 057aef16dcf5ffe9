"""Comments say why, not when: product code's comments and docstrings name no issue (git log
keeps that history); what an issue stood for is said in words where it matters."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# An issue by number: "issue 16", "issues 41 and 42", "(#12)". An upstream's own issue
# ("ollama/ollama#11189", "docs#1393") is a source cited, not history, and stays.
# A line may break between the word and its number.
ISSUE = re.compile(r"\b[Ii]ssues?\s+#?\d+|(?<![\w/.-])#\d{1,5}\b")


def product_files() -> list[Path]:
    files = [*ROOT.glob("server/**/*.py"), *ROOT.glob("desktop/**/*.py")]
    files += ROOT.glob("desktop/**/*.qml")
    return sorted(files)


def remarks(path: Path) -> list[tuple[int, str]]:
    """(line, text) of each comment (its lines that follow one another read as one) and each
    docstring in a file."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".qml":
        return [(n, line) for n, line in enumerate(source.splitlines(), 1) if "//" in line]
    found: list[tuple[int, str]] = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type != tokenize.COMMENT:
            continue
        text = token.string.lstrip("#").strip()
        if found and found[-1][0] + found[-1][1].count("\n") == token.start[0] - 1:
            # The next line of the same comment: read as one text, as it is written.
            found[-1] = (found[-1][0], f"{found[-1][1]}\n{text}")
        else:
            found.append((token.start[0], text))
    for node in ast.walk(ast.parse(source)):
        kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
        if isinstance(node, kinds) and (doc := ast.get_docstring(node, clean=False)):
            found.append((node.body[0].lineno, doc))
    return found


@pytest.mark.parametrize("path", product_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_comment_names_an_issue(path: Path) -> None:
    named = [f"{n}: {m.group()}" for n, text in remarks(path) for m in ISSUE.finditer(text)]
    assert not named, f"say why instead of naming the issue: {named}"


def test_the_rule_sees_an_issue_and_not_a_colour_or_an_upstreams_bug() -> None:
    assert ISSUE.search("see issue 16") and ISSUE.search("(#12)")
    assert ISSUE.search("given them, issue\n43 item 5")  # broken across a line
    assert not ISSUE.search('"#505054"') and not ISSUE.search("ollama/ollama#11189")
