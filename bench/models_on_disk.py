"""Getting a model (issue 39): how long finding the GGUFs on disk takes, and a download from
a local hub (tests/support/hub.py) of the bundled 98 MB GGUF — its time and rate end to end
(the child process started, the bytes written, the sha256 checked, the model added), and how
soon Pause and Cancel answer with the transfer stopped.

    python -m bench.models_on_disk [files]
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import show
from server.models.bundled import bundled_gguf
from server.models.discovery.service import Discovery
from tests.server.models.discovery.layouts import Home, tiny_gguf
from tests.support.hub import HubFile, LocalHub
from tests.support.parley import Parley


def scans(files: int) -> None:
    """`files` small GGUFs laid out in LM Studio's, Ollama's and the HF cache's ways, and
    1,000 hard links of the bundled model across the three (one entry)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = Home(root / "home")
        os.environ.update(home.environ())
        for n in range(files):
            made = tiny_gguf(root / "made" / f"m{n}.gguf")
            if n % 3 == 0:
                target = home.lmstudio_file("pub", f"repo{n}", f"m{n}-Q4_K_M.gguf")
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(made, target)
            elif n % 3 == 1:
                home.ollama_model(f"model{n}", "latest", source=made)
            else:
                home.hf_file("owner", f"repo{n}", f"m{n}.gguf", made)
        discovery = Discovery(root / "data")
        times = []
        for _ in range(3):
            began = time.perf_counter()
            result = asyncio.run(discovery.scan())
            times.append(time.perf_counter() - began)
        show(f"scan of {files:,} GGUFs in three stores", {
            "found": len(result.found), "skipped": result.skipped_count,
            "first_ms": round(times[0] * 1000), "again_ms": [round(t * 1000) for t in times[1:]],
        })  # fmt: skip


def download() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        hub = LocalHub().start()
        os.environ.update({"HF_ENDPOINT": hub.url, "HF_TOKEN": ""})
        served = HubFile(bundled_gguf())
        held = HubFile(bundled_gguf(), hold_at=16 * 1024 * 1024)
        hub.add("bench/Smol-GGUF", {"smol-Q4_1.gguf": served, "held-Q4_1.gguf": held})
        server = Parley(Path(tmp) / "data").start()
        try:
            began = time.perf_counter()
            body = {"repo": "bench/Smol-GGUF", "file": "smol-Q4_1.gguf"}
            reply = server.call("POST", "/api/downloads", json_body=body)
            download_id = reply.json()["id"]
            state = server.wait_for(lambda: _state(server, download_id, "completed", "failed"), 120)
            took = time.perf_counter() - began
            size = served.size
            body = {"repo": "bench/Smol-GGUF", "file": "held-Q4_1.gguf"}
            reply = server.call("POST", "/api/downloads", json_body=body)
            held_id = reply.json()["id"]
            server.wait_for(lambda: held.held.is_set(), 60)
            began = time.perf_counter()
            server.call("POST", f"/api/downloads/{held_id}/pause")
            pause_ms = (time.perf_counter() - began) * 1000
            began = time.perf_counter()
            server.call("DELETE", f"/api/downloads/{held_id}")
            cancel_ms = (time.perf_counter() - began) * 1000
            show("download of the bundled GGUF from a local hub", {
                "state": state["state"], "bytes": size, "seconds": round(took, 2),
                "mb_per_s": round(size / took / 1e6, 1), "pause_ms": round(pause_ms, 1),
                "cancel_ms": round(cancel_ms, 1),
            })  # fmt: skip
        finally:
            server.stop()
            hub.stop()


def _state(server: Parley, download_id: str, *states: str) -> dict | None:  # type: ignore[type-arg]
    for found in server.call("GET", "/api/downloads").json()["downloads"]:
        if found["id"] == download_id and found["state"] in states:
            return dict(found)
    return None


if __name__ == "__main__":
    scans(int(sys.argv[1]) if sys.argv[1:] else 1_000)
    download()
