"""Each way a download can fail ends with a clear message and no model: a 404, a gated
repository, a bad checksum, a lost connection, a stalled hub, a full disk. Only a failure
that can be resumed keeps its partial file; none leaves a finished file where a model would
be."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from server.limits import HubLimits, Limits
from tests.server.models.hub.helpers import MiB, models, start, wait_state
from tests.support.hub import HubFile, LocalHub, tiny_gguf
from tests.support.parley import Parley
from tests.support.upstream import ScriptedUpstream

SIZE = 4 * MiB
# HubLimits.stall_timeout here (a user's is a minute): over the child's own start (python and
# huggingface_hub imported, 0.6-0.9 s measured on a loaded machine), which counts as no bytes.
STALL = 5.0


@pytest.mark.parametrize(
    ("options", "gated", "code", "words", "kept"),
    [
        ({"missing": True}, False, "not_found", "404", False),
        ({}, True, "gated", "gated", False),
        ({"wrong_sha": True}, False, "bad_checksum", "sha256", False),
        ({"drop_at": 2 * MiB}, False, "connection_lost", "connection", True),
    ],
    ids=["404", "gated", "bad_checksum", "connection_lost"],
)
def test_a_failed_download_says_why_and_offers_no_model(
    hub: LocalHub,
    data_dir: Path,
    gguf_dir: Path,
    upstream: ScriptedUpstream,
    options: dict[str, object],
    gated: bool,
    code: str,
    words: str,
    kept: bool,
) -> None:
    file = HubFile(tiny_gguf(gguf_dir / "t.gguf", SIZE), **options)  # type: ignore[arg-type]
    hub.add("me/Tiny-GGUF", {"tiny-Q8_0.gguf": file}, gated=gated)
    final = data_dir / "models" / "me" / "Tiny-GGUF" / "tiny-Q8_0.gguf"
    server = Parley(data_dir, upstream.base_url).start()
    try:
        download_id = start(server, "me/Tiny-GGUF", "tiny-Q8_0.gguf")
        failed = wait_state(server, download_id, "failed", "completed", timeout=45)
        assert (failed["state"], failed["error_code"]) == ("failed", code), failed
        assert words in failed["error"], failed["error"]
        assert failed["resumable"] is kept
        assert "tiny-Q8_0" not in models(server)
        assert not final.exists()
        assert Path(f"{final}.part").exists() is kept
        assert server.status()["downloads"][0]["error_code"] == code
    finally:
        server.stop()


def test_a_file_larger_than_the_free_disk_is_refused_before_any_byte(
    hub: LocalHub, data_dir: Path, gguf_dir: Path, upstream: ScriptedUpstream
) -> None:
    huge = tiny_gguf(gguf_dir / "huge.gguf", 4096)
    with huge.open("r+b") as sparse:
        sparse.truncate(shutil.disk_usage(gguf_dir).free + 2**30)  # claimed, not stored
    hub.add("me/Huge-GGUF", {"huge-F32.gguf": HubFile(huge, sha256="a" * 64)})
    server = Parley(data_dir, upstream.base_url).start()
    try:
        download_id = start(server, "me/Huge-GGUF", "huge-F32.gguf")
        failed = wait_state(server, download_id, "failed", "completed")
        assert failed["error_code"] == "disk_full", failed
        assert "not enough disk space" in failed["error"]
        assert hub.file("me/Huge-GGUF", "huge-F32.gguf").gets == []
    finally:
        server.stop()


def test_a_hub_that_drips_bytes_fails_the_download_resumable_and_the_queue_moves_on(
    hub: LocalHub, data_dir: Path, gguf_dir: Path
) -> None:
    dripping = HubFile(tiny_gguf(gguf_dir / "d.gguf", SIZE, name="drip"), drip_at=MiB)
    hub.add("me/Drip-GGUF", {"drip-Q8_0.gguf": dripping})
    hub.add("me/Next-GGUF", {"next-Q8_0.gguf": HubFile(tiny_gguf(gguf_dir / "n.gguf", 4096))})
    part = data_dir / "models" / "me" / "Drip-GGUF" / "drip-Q8_0.gguf.part"
    server = Parley(data_dir, limits=Limits(hub=HubLimits(stall_timeout=STALL))).start()
    try:
        stuck = start(server, "me/Drip-GGUF", "drip-Q8_0.gguf")
        queued = start(server, "me/Next-GGUF", "next-Q8_0.gguf")
        assert dripping.held.wait(30)
        began = time.monotonic()
        failed = wait_state(server, stuck, "failed", "completed", timeout=12 * STALL)
        print(f"\na dripping hub given up {time.monotonic() - began:.2f} s after its drip began")
        assert (failed["error_code"], failed["resumable"]) == ("connection_lost", True), failed
        assert "no progress" in failed["error"]
        assert dripping.gets[0][1] > MiB  # it was sending: bytes past the first chunk came
        assert part.stat().st_size == MiB  # the bytes on disk are kept

        after = wait_state(server, queued, "completed", "failed")
        assert after["state"] == "completed", after  # the queue moved on

        dripping.drip_at = None
        dripping.release_event.set()
        assert server.call("POST", f"/api/downloads/{stuck}/resume").status == 202
        done = wait_state(server, stuck, "completed", "failed")
        assert done["state"] == "completed", done
        assert dripping.gets[-1] == [MiB, SIZE - MiB]  # resumed from the bytes on disk
        assert "drip-Q8_0" in models(server)
    finally:
        server.stop()
