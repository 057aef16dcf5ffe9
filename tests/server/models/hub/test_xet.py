"""Repositories served through Xet: a download's child process (server/models/hub/fetch.py)
against the local hub answering as a Xet-backed repository does (the resolve gives the
file's Xet hash and where to get a Xet token). Files the hub serves over HTTP still come
that way; a file it serves from Xet only goes through hf_xet, and every failure is said in
words, never as a raw exception."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.server.models.hub.helpers import MiB
from tests.support.hub import HubFile, LocalHub, tiny_gguf

OVER_HTTP_LIMIT = 51 * 1000**3  # huggingface_hub downloads at most 50 GB over HTTP


def run_child(
    hub: LocalHub, part: Path, size: int, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """The child's last words, run as Parley runs it."""
    job = {
        "endpoint": hub.url,
        "repo": "me/Big-GGUF",
        "revision": "0123456789abcdef0123456789abcdef01234567",
        "file": "big-F16.gguf",
        "part": str(part),
        "size": size,
        "parent": os.getpid(),
    }
    done = subprocess.run(
        [sys.executable, "-m", "server.models.hub.fetch", json.dumps(job)],
        capture_output=True,
        timeout=120,
        env={**os.environ, "HF_HUB_DISABLE_PROGRESS_BARS": "1", **(env or {})},
    )
    answer: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return answer


def sparse(path: Path, size: int) -> Path:
    tiny_gguf(path, 4096)
    with path.open("r+b") as file:
        file.truncate(size)  # claimed, not stored
    return path


def test_a_file_served_from_xet_only_fails_in_words_when_the_xet_storage_fails(
    hub: LocalHub, gguf_dir: Path, tmp_path: Path
) -> None:
    big = sparse(gguf_dir / "big.gguf", OVER_HTTP_LIMIT)
    hub.add("me/Big-GGUF", {"big-F16.gguf": HubFile(big, sha256="a" * 64)}, xet=True)
    answer = run_child(hub, tmp_path / "big-F16.gguf.part", OVER_HTTP_LIMIT)
    assert answer["code"] == "hub_error", answer
    assert answer["message"].startswith("the hub's Xet storage failed the download of big-F16")
    assert "pip install" not in answer["message"]
    assert "Error" not in answer["message"].split(":")[0]
    assert any(r.startswith("GET /api/models/me/Big-GGUF/xet-read-token/") for r in hub.requests)
    assert hub.file("me/Big-GGUF", "big-F16.gguf").gets == []  # never over HTTP


def test_a_file_served_from_xet_only_says_why_when_xet_is_turned_off(
    hub: LocalHub, gguf_dir: Path, tmp_path: Path
) -> None:
    big = sparse(gguf_dir / "big.gguf", OVER_HTTP_LIMIT)
    hub.add("me/Big-GGUF", {"big-F16.gguf": HubFile(big, sha256="a" * 64)}, xet=True)
    answer = run_child(
        hub, tmp_path / "big-F16.gguf.part", OVER_HTTP_LIMIT, {"HF_HUB_DISABLE_XET": "1"}
    )
    assert answer == {
        "code": "xet_required",
        "message": "big-F16.gguf is 51 GB: the hub serves files over 50 GB only from its "
        "Xet storage, and Xet is turned off here (HF_HUB_DISABLE_XET)",
    }


def test_a_file_over_the_http_limit_without_a_xet_address_says_why(
    hub: LocalHub, gguf_dir: Path, tmp_path: Path
) -> None:
    big = sparse(gguf_dir / "big.gguf", OVER_HTTP_LIMIT)
    hub.add("me/Big-GGUF", {"big-F16.gguf": HubFile(big, sha256="a" * 64)})
    answer = run_child(hub, tmp_path / "big-F16.gguf.part", OVER_HTTP_LIMIT)
    assert answer["code"] == "xet_required", answer
    assert answer["message"].endswith("and it gave no Xet address for this one")


def test_a_xet_backed_repositorys_file_comes_over_http_resumably(
    hub: LocalHub, gguf_dir: Path, tmp_path: Path
) -> None:
    file = HubFile(tiny_gguf(gguf_dir / "t.gguf", 2 * MiB))
    hub.add("me/Big-GGUF", {"big-F16.gguf": file}, xet=True)
    part = tmp_path / "big-F16.gguf.part"
    part.write_bytes(file.path.read_bytes()[:MiB])  # a paused download's bytes
    assert run_child(hub, part, 2 * MiB) == {"ok": True}
    assert part.read_bytes() == file.path.read_bytes()
    assert file.gets == [[MiB, MiB]]  # resumed from the bytes on disk
