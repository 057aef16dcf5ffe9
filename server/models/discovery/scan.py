"""One scan of every place: the finders in turn, sharing one budget and one collector."""

from __future__ import annotations

import os

from server.limits import ScanLimits
from server.models.discovery.budget import Budget
from server.models.discovery.collecting import Collector
from server.models.discovery.found import Root, ScanResult
from server.models.discovery.hf_cache import find_in_cache
from server.models.discovery.lmstudio import find_in_folder
from server.models.discovery.ollama import find_in_store


def scan(roots: list[Root], limits: ScanLimits | None = None) -> ScanResult:
    """Blocking (stats and header reads): run it in a worker thread. Never raises for what it
    finds; a place that cannot be read is passed over."""
    budget = Budget(limits or ScanLimits())
    result = ScanResult()
    collector = Collector(budget, result)
    present = [(root, os.path.isdir(root.path)) for root in roots]
    result.roots = present
    # A link in LM Studio's or the user's folder may point into any place looked in (a file
    # of the HF cache linked into LM Studio's folder), never elsewhere.
    everywhere = [os.path.realpath(root.path) for root, there in present if there]
    for root, there in present:
        if not there or not budget.ok():
            continue
        if root.source == "ollama":
            find_in_store(root.path, budget, collector)
        elif root.source == "hf_cache":
            find_in_cache(root.path, budget, collector)
        else:
            find_in_folder(root.path, root.source, budget, collector, everywhere)
    result.found = sorted(collector.files.values(), key=lambda f: (f.name.lower(), f.path))
    result.complete = budget.stopped is None
    result.stopped = budget.stopped
    result.seconds = budget.elapsed()
    return result
