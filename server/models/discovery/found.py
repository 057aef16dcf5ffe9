"""What a scan finds: GGUF files, each with every place it was found, and what it skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Source = Literal["lmstudio", "ollama", "hf_cache", "folder"]
# Which place names the file and gives the path to load, best first: a path a person reads
# (LM Studio's, a folder's, the cache's snapshot link) rather than an Ollama blob's hash.
PATH_ORDER: tuple[Source, ...] = ("lmstudio", "folder", "hf_cache", "ollama")


@dataclass(frozen=True)
class Root:
    """A place looked in: LM Studio's models folder, Ollama's store, the HF cache, a folder."""

    source: Source
    path: str  # as configured (absolute); resolved when scanned


@dataclass(frozen=True)
class Place:
    """Where a file was found: its source, the place there as that app names it
    (LM Studio's "publisher/repo", Ollama's "llama3.2:3b", the cache's "owner/repo", a
    folder's path), and the path to it (a link, in the HF cache)."""

    source: Source
    place: str
    path: str
    name: str  # the model's name as this place gives it


@dataclass
class FoundFile:
    device: int
    inode: int
    places: list[Place]
    size_bytes: int  # all its parts together
    parts: int
    architecture: str | None
    quantization: str | None
    context_length: int | None

    def primary(self) -> Place:
        return min(self.places, key=lambda p: PATH_ORDER.index(p.source))

    @property
    def name(self) -> str:
        ollama = next((p for p in self.places if p.source == "ollama"), None)
        return (ollama or self.primary()).name

    @property
    def path(self) -> str:
        return self.primary().path


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: str


@dataclass
class ScanResult:
    found: list[FoundFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    skipped_count: int = 0
    roots: list[tuple[Root, bool]] = field(default_factory=list)  # and whether it exists
    complete: bool = True
    stopped: str | None = None  # why not complete
    seconds: float = 0.0

    def find(self, path: str) -> FoundFile | None:
        for found in self.found:
            if any(place.path == path for place in found.places):
                return found
        return None
