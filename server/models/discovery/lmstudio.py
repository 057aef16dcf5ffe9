"""LM Studio's models folder: `<folder>/<publisher>/<repo>/<file>.gguf` (files elsewhere
below it are listed too, as LM Studio's own list does not care for the depth), and the
user's own folders, walked the same way."""

from __future__ import annotations

import os
from collections.abc import Sequence

from server.models.discovery.budget import Budget
from server.models.discovery.collecting import Collector
from server.models.discovery.found import Place, Source
from server.models.discovery.walking import stem, walk


def find_in_folder(
    root: str, source: Source, budget: Budget, collector: Collector, allowed: Sequence[str]
) -> None:
    """Every GGUF below `root`. Its place: LM Studio's "publisher/repo" (the folders between
    the root and the file), or the user's folder itself."""
    for path in walk(root, budget):
        if source == "lmstudio":
            where = os.path.relpath(os.path.dirname(path), root)
            place = "" if where == "." else where.replace(os.sep, "/")
        else:
            place = root
        name = stem(os.path.basename(path))
        collector.examine(path, Place(source, place, path, name), allowed)
