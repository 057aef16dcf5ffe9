"""GGUF files laid out as LM Studio, Ollama and the Hugging Face cache lay them out, in a
temporary home: tiny hand-built headers for listing, links to a real model to chat."""

from __future__ import annotations

import hashlib
import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path

STRING, U32 = 8, 4


def _text(value: bytes) -> bytes:
    return struct.pack("<Q", len(value)) + value


def tiny_gguf(
    path: Path, architecture: str = "llama", file_type: int = 15, context: int = 4096
) -> Path:
    """A GGUF header with no tensors: what a listing reads (Q4_K_M is file type 15)."""
    arch = architecture.encode()
    keys = [
        _text(b"general.architecture") + struct.pack("<I", STRING) + _text(arch),
        _text(b"general.file_type") + struct.pack("<II", U32, file_type),
        _text(arch + b".context_length") + struct.pack("<II", U32, context),
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, len(keys)) + b"".join(keys))
    return path


def place(source: Path, target: Path, how: str = "link") -> Path:
    """`target` made `source` without copying it: a hard link ("hard"), else a symlink."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if how == "hard":
        os.link(source, target)
    else:
        os.symlink(source, target)
    return target


@dataclass(frozen=True)
class Home:
    """A home folder with each app's default place in it (and the environment that says so)."""

    root: Path

    @property
    def lmstudio(self) -> Path:
        return self.root / ".lmstudio" / "models"

    @property
    def ollama(self) -> Path:
        return self.root / "ollama-models"  # $OLLAMA_MODELS

    @property
    def hf_home(self) -> Path:
        return self.root / "hf"  # $HF_HOME

    @property
    def hub(self) -> Path:
        return self.hf_home / "hub"

    def lmstudio_file(self, publisher: str, repo: str, name: str) -> Path:
        return self.lmstudio / publisher / repo / name

    def ollama_model(
        self, model: str, tag: str, source: Path | None = None, *, namespace: str = "library",
        host: str = "registry.ollama.ai", how: str = "hard",
    ) -> Path:  # fmt: skip
        """A manifest naming a blob: `source` linked as the blob (hard by default, as Ollama's
        blobs are files), or a tiny header of its own. Returns the blob's path."""
        blobs = self.ollama / "blobs"
        blobs.mkdir(parents=True, exist_ok=True)
        if source is None:
            source = tiny_gguf(self.root / "made" / f"{model}-{tag}.gguf")
        digest = hashlib.sha256(f"{host}/{namespace}/{model}:{tag}".encode()).hexdigest()
        blob = place(source, blobs / f"sha256-{digest}", how)
        self.manifest(host, namespace, model, tag, json.dumps(ollama_manifest(digest)).encode())
        return blob

    def manifest(self, host: str, namespace: str, model: str, tag: str, data: bytes) -> Path:
        path = self.ollama / "manifests" / host / namespace / model / tag
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return path

    def hf_file(
        self, owner: str, repo: str, name: str, source: Path, revision: str = "a" * 40
    ) -> Path:
        """A snapshot link to a blob (hard-linked from `source`, or made by the caller)."""
        folder = self.hub / f"models--{owner}--{repo}"
        blob = folder / "blobs" / hashlib.sha256(f"{source}{name}".encode()).hexdigest()
        if not blob.exists():
            place(source, blob, "hard")
        snapshot = folder / "snapshots" / revision / name
        snapshot.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(os.path.relpath(blob, snapshot.parent), snapshot)
        return snapshot

    def environ(self) -> dict[str, str]:
        return {"HOME": str(self.root), "OLLAMA_MODELS": str(self.ollama),
                "HF_HOME": str(self.hf_home)}  # fmt: skip


def ollama_manifest(digest: str) -> dict[str, object]:
    return {
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                   "digest": "sha256:" + "0" * 64, "size": 485},
        "layers": [
            {"mediaType": "application/vnd.ollama.image.model", "digest": f"sha256:{digest}",
             "size": 1},
            {"mediaType": "application/vnd.ollama.image.template",
             "digest": "sha256:" + "1" * 64, "size": 1},
        ],
    }  # fmt: skip
