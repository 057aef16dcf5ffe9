"""The library's indexer and search on a big folder, against parley-server in its own process.

    python -m bench.library [FILES] [KB_PER_FILE]

Generates FILES Markdown files (default 10,000 of ~20 KB: 200 MB) of varied words, adds the
folder, and prints: the time to index it all and files/s; the server's peak memory while
indexing (VmHWM); search latency over 200 questions (p50/p95, through the API); the time from
touching one file to its new text being found (watchfiles, then the rescan).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from bench.harness import ParleyProcess, processes, show, summary

WORDS = [f"w{i:05d}" for i in range(20_000)]


def generate(root: Path, files: int, kb: int) -> None:
    rng = random.Random(7)
    for index in range(files):
        folder = root / f"d{index // 500:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        paragraphs = []
        size = 0
        while size < kb * 1000:
            words = " ".join(rng.choice(WORDS) for _ in range(80))
            paragraphs.append(f"## Part {len(paragraphs)}\n\n{words} file{index}")
            size += len(words) + 30
        (folder / f"f{index:05d}.md").write_text("\n\n".join(paragraphs))


def peak_mb(parley: ParleyProcess) -> float:
    for line in Path(f"/proc/{parley.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_indexed(parley: ParleyProcess, files: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = parley.call("GET", "/api/library")
        folders = state["folders"]
        if state["progress"]["state"] == "idle" and folders and folders[0]["files"] == files:
            return
        time.sleep(0.05)
    raise TimeoutError("not indexed in time")


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    kb = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "docs"
        began = time.perf_counter()
        generate(root, files, kb)
        print(f"generated {files} files, {kb} KB each, in {time.perf_counter() - began:.1f} s")
        with processes() as (_upstream, parley):
            rss_before = parley.rss_mb()
            began = time.perf_counter()
            parley.call("POST", "/api/library/folders", {"path": str(root)})
            wait_indexed(parley, files, timeout=3600)
            took = time.perf_counter() - began
            print(f"indexed {files} files ({files * kb / 1000:.0f} MB) in {took:.1f} s: "
                  f"{files / took:.0f} files/s; server memory {rss_before:.0f} MB before, "
                  f"peak {peak_mb(parley):.0f} MB")  # fmt: skip
            rng = random.Random(11)
            latencies = []
            for _ in range(200):
                query = " ".join(rng.choice(WORDS) for _ in range(3))
                start = time.perf_counter()
                parley.call("GET", f"/api/library/search?q={quote(query)}&k=5")
                latencies.append((time.perf_counter() - start) * 1000)
            show("search, 3 words, k=5, through the API (ms)", summary(latencies))
            target = root / "d000" / "f00000.md"
            start = time.perf_counter()
            target.write_text("# Changed\n\nzzyzx appears now.")
            while not parley.call("GET", "/api/library/search?q=zzyzx&k=1")["passages"]:
                time.sleep(0.01)
            print(f"touch one file -> found by search: {time.perf_counter() - start:.2f} s")


if __name__ == "__main__":
    main()
