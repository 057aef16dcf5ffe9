"""The Hugging Face cache: `<hub>/models--<owner>--<name>/snapshots/<revision>/<file>.gguf`,
each a link into that repository's `blobs/` (huggingface_hub's layout). A link is followed
only into its own repository's folder; the same blob in two revisions is one file."""

from __future__ import annotations

import os

from server.models.discovery.budget import Budget
from server.models.discovery.collecting import Collector
from server.models.discovery.found import Place
from server.models.discovery.walking import stem, walk

REPO_PREFIX = "models--"
SNAPSHOT_DEPTH = 4  # files in folders of a repository: "Q4_K_M/model-00001-of-00002.gguf"


def repo_name(folder: str) -> str:
    """`models--bartowski--Llama-3.2-3B-GGUF` -> `bartowski/Llama-3.2-3B-GGUF` (a
    repository's name holds no "--": the hub refuses it)."""
    return folder[len(REPO_PREFIX) :].replace("--", "/", 1)


def find_in_cache(hub: str, budget: Budget, collector: Collector) -> None:
    for repo in _folders(hub, budget, prefix=REPO_PREFIX):
        place = repo_name(os.path.basename(repo))
        allowed = [os.path.realpath(repo)]
        for revision in _folders(os.path.join(repo, "snapshots"), budget):
            for path in walk(revision, budget, max_depth=SNAPSHOT_DEPTH):
                name = stem(os.path.basename(path))
                collector.examine(path, Place("hf_cache", place, path, name), allowed)


def _folders(parent: str, budget: Budget, prefix: str = "") -> list[str]:
    """The folders (not links to folders) in `parent` whose names start with `prefix`."""
    found = []
    try:
        with os.scandir(parent) as entries:
            for entry in entries:
                if not budget.entry():
                    break
                if entry.name.startswith(prefix) and entry.is_dir(follow_symlinks=False):
                    found.append(entry.path)
    except OSError:
        pass  # none there, or unreadable
    return sorted(found)
