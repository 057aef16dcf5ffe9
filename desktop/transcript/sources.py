"""A reply's sources as its list shows them: each once, by number (a source it cited rather
than the same one listed as given), and where in its file each is."""

from __future__ import annotations

from server.types import CitationPartJSON, PartJSON


def sources(parts: list[PartJSON]) -> dict[int, CitationPartJSON]:
    """A reply's sources, each once, in the order of their numbers: a source it cited
    rather than the same one listed as given (a reply drawn as it came lists both)."""
    found: dict[int, CitationPartJSON] = {}
    for part in parts:
        if part["type"] == "citation" and (part["n"] not in found or part.get("cited", True)):
            found[part["n"]] = part
    return dict(sorted(found.items()))


def place(source: CitationPartJSON) -> str:
    """Where in its file a source is (", page 4", ", lines 3–9")."""
    if source["page"] is not None:
        return f", page {source['page']}"
    if source["lines"] is not None:
        return f", lines {source['lines'][0]}–{source['lines'][1]}"
    return ""
