"""Ollama's store: `manifests/<host>/<namespace>/<model>/<tag>` (JSON) names each model's
layers; the layer of media type `application/vnd.ollama.image.model` is the GGUF, kept as
`blobs/sha256-<hex>`. Named as `ollama list` names it: "llama3.2:3b" in the library,
"namespace/model:tag" elsewhere on Ollama's registry, "host/namespace/model:tag" otherwise.

A manifest is hostile input: read only if it is a small regular file (no link, no FIFO),
parsed bounded, and it may name a blob only by a well-formed sha256 digest; the blob (or
what a link there points at) must lie in this store's `blobs/` folder.
"""

from __future__ import annotations

import json
import os
import re
import stat

from server.errors import ManifestError
from server.models.discovery.budget import Budget
from server.models.discovery.collecting import Collector
from server.models.discovery.found import Place

MODEL_MEDIA_TYPE = "application/vnd.ollama.image.model"
REGISTRY = "registry.ollama.ai"
LIBRARY = "library"
DIGEST = re.compile(r"sha256[:-]([0-9a-f]{64})")
_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
          | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0))  # fmt: skip


def model_name(host: str, namespace: str, model: str, tag: str) -> str:
    if host == REGISTRY:
        return f"{model}:{tag}" if namespace == LIBRARY else f"{namespace}/{model}:{tag}"
    return f"{host}/{namespace}/{model}:{tag}"


def find_in_store(store: str, budget: Budget, collector: Collector) -> None:
    blobs = os.path.realpath(os.path.join(store, "blobs"))
    for parts, manifest in _manifests(os.path.join(store, "manifests"), budget):
        if not budget.manifest():
            return
        try:
            digest = model_digest(_read_small(manifest, budget.limits.max_manifest_bytes),
                                  budget.limits.max_layers)  # fmt: skip
        except ManifestError as exc:
            collector.skip(manifest, str(exc))
            continue
        name = model_name(*parts)
        blob = os.path.join(store, "blobs", f"sha256-{digest}")
        collector.examine(blob, Place("ollama", name, blob, name), [blobs])


def model_digest(data: bytes, max_layers: int) -> str:
    """The hex sha256 of the manifest's model layer. Raises ManifestError."""
    try:
        manifest = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ManifestError("its manifest is not JSON") from exc
    layers = manifest.get("layers") if isinstance(manifest, dict) else None
    if not isinstance(layers, list):
        raise ManifestError("its manifest lists no layers")
    for layer in layers[:max_layers]:
        if isinstance(layer, dict) and layer.get("mediaType") == MODEL_MEDIA_TYPE:
            digest = layer.get("digest")
            matched = DIGEST.fullmatch(digest) if isinstance(digest, str) else None
            if matched is None:
                raise ManifestError("its manifest names the model by a malformed digest")
            return matched[1]
    raise ManifestError("its manifest names no model layer (not a model, or not a GGUF)")


def _read_small(path: str, limit: int) -> bytes:
    try:
        fd = os.open(path, _FLAGS)
    except OSError as exc:
        raise ManifestError(f"cannot open its manifest ({exc.strerror or exc})") from None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            raise ManifestError("its manifest is not a regular file")
        if found.st_size > limit:
            raise ManifestError(f"its manifest is over {limit:,} bytes long")
        data = os.read(fd, limit + 1)
        if len(data) > limit:  # grown since fstat
            raise ManifestError(f"its manifest is over {limit:,} bytes long")
        return data
    except OSError as exc:
        raise ManifestError(f"cannot read its manifest ({exc.strerror or exc})") from None
    finally:
        os.close(fd)


def _manifests(root: str, budget: Budget) -> list[tuple[tuple[str, str, str, str], str]]:
    """((host, namespace, model, tag), path) of each manifest: folders three deep (never
    through a link), then files."""
    found: list[tuple[tuple[str, ...], str]] = [((), root)]
    for _depth in range(3):
        found = [
            ((*parts, name), path)
            for parts, folder in found
            for name, path in _entries(folder, budget, folders=True)
        ]
    manifests = []
    for parts, folder in found:
        for name, path in _entries(folder, budget, folders=False):
            host, namespace, model = parts
            manifests.append(((host, namespace, model, name), path))
    return manifests


def _entries(folder: str, budget: Budget, *, folders: bool) -> list[tuple[str, str]]:
    kept = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if not budget.entry():
                    break
                if entry.name.startswith("."):
                    continue
                wanted = entry.is_dir if folders else entry.is_file
                if wanted(follow_symlinks=False):
                    kept.append((entry.name, entry.path))
    except OSError:
        pass  # none there, or unreadable
    return sorted(kept)
