"""The walk and the cited-source route share one rule (sensitive.passed_over_name): every
file the walk lists is one the route may read, and every other document-like file below the
root has the reason the route gives."""

from __future__ import annotations

from pathlib import Path

from server.library.indexer import walk
from server.library.sensitive import passed_over_path

FILES = [
    "notes.md",
    "sub/deeper/plan.txt",
    ".env",
    ".git/config",
    ".git/notes.md",
    ".ssh/id_rsa",
    ".hidden/notes.md",
    "sub/.secret.md",
    "node_modules/pkg/README.md",
    "venv/lib/site.md",
    "__pycache__/x.md",
]


def test_the_route_refuses_exactly_what_the_walk_passes_over(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("text\n")
    listed = set(walk(str(root)))
    assert listed == {str(root / "notes.md"), str(root / "sub/deeper/plan.txt")}
    for name in FILES:
        path = str(root / name)
        if name.endswith((".md", ".txt")):  # a kind the walk lists when it reaches it
            assert (passed_over_path(str(root), path, tmp_path) is None) == (path in listed), name
        else:
            assert passed_over_path(str(root), path, tmp_path) is not None, name
