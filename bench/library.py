"""The library's indexer and search on a big folder, against parley-server in its own process.

    python -m bench.library [FILES] [KB_PER_FILE]
    python -m bench.library small [FILES]
    python -m bench.library bomb

Generates FILES Markdown files (default 10,000 of ~20 KB: 200 MB) of varied words, adds the
folder, and prints: the time to index it all and files/s; the server's peak memory while
indexing (VmHWM); search latency over 200 questions (p50/p95, through the API); the time from
touching one file to its new text being found (watchfiles, then the rescan).

`small`: the cost per file of indexing FILES (default 2,000) small Markdown files (~1 KB):
wall time, the server's CPU and its children's (the parse worker, issue 38).
`bomb`: a PDF bomb (21 KB, 40 pages sharing one 5 MB content stream) beside one note: the
time until it is skipped and the note indexed, the CPU it cost (the worker's and the
server's), and `/healthz` latency meanwhile.
"""

from __future__ import annotations

import contextlib
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

from bench.harness import TOKEN, ParleyProcess, processes, show, summary
from tests.support.client import request
from tests.support.documents import make_pdf_bomb
from tests.support.process import child_pids

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


def _cpu_fields(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_s(parley: ParleyProcess) -> tuple[float, float]:
    """CPU seconds so far (Linux /proc): the server's own, and its parse workers' (those
    running now, and those reaped, which the kernel adds to the server's children's time)."""
    tick = os.sysconf("SC_CLK_TCK")
    fields = _cpu_fields(parley.pid)
    workers = (int(fields[13]) + int(fields[14])) / tick
    for pid in child_pids(parley.pid):
        with contextlib.suppress(OSError):
            if b"library.worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                mine = _cpu_fields(pid)
                workers += (int(mine[11]) + int(mine[12])) / tick
    return (int(fields[11]) + int(fields[12])) / tick, workers


def small(files: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "small"
        for index in range(files):
            folder = root / f"d{index // 500:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            words = " ".join(f"w{(index * 7 + i) % 20_000:05d}" for i in range(150))
            (folder / f"f{index:05d}.md").write_text(f"# Note {index}\n\n{words}\n")
        with processes() as (_upstream, parley):
            own, kids = cpu_s(parley)
            began = time.perf_counter()
            parley.call("POST", "/api/library/folders", {"path": str(root)})
            wait_indexed(parley, files, timeout=3600)
            took = time.perf_counter() - began
            own_after, kids_after = cpu_s(parley)
            print(f"{files} small Markdown files (~1 KB) indexed in {took:.2f} s: "
                  f"{took / files * 1000:.2f} ms/file wall; CPU: server "
                  f"{own_after - own:.2f} s, parse worker {kids_after - kids:.2f} s")  # fmt: skip


def bomb() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch) / "bomb"
        root.mkdir()
        size = make_pdf_bomb(root / "a-bomb.pdf").stat().st_size
        (root / "b-note.md").write_text("# Note\n\nThe quokka smiles.\n")
        with processes() as (_upstream, parley):
            latencies: list[float] = []
            stop = threading.Event()

            def probe() -> None:
                while not stop.is_set():
                    start = time.perf_counter()
                    request(parley.port, "GET", "/healthz", token=TOKEN)
                    latencies.append((time.perf_counter() - start) * 1000)
                    time.sleep(0.05)

            prober = threading.Thread(target=probe)
            prober.start()
            own, kids = cpu_s(parley)
            began = time.perf_counter()
            parley.call("POST", "/api/library/folders", {"path": str(root)})
            while True:
                folders = parley.call("GET", "/api/library")["folders"]
                if folders and folders[0]["files"] == 1 and folders[0]["skipped_files"]:
                    break
                time.sleep(0.05)
            took = time.perf_counter() - began
            stop.set()
            prober.join()
            own_after, kids_after = cpu_s(parley)
            reason = folders[0]["skipped_files"][0]["reason"]
            print(f"PDF bomb ({size / 1000:.0f} KB, 40 pages x one 5 MB stream): skipped "
                  f"({reason!r}) and the note indexed {took:.1f} s after adding the folder; "
                  f"CPU: parse worker {kids_after - kids:.1f} s, server "
                  f"{own_after - own:.2f} s")  # fmt: skip
            show("/healthz meanwhile, every 50 ms (ms)", summary(latencies))


def main() -> None:
    if sys.argv[1:2] == ["small"]:
        small(int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
        return
    if sys.argv[1:2] == ["bomb"]:
        bomb()
        return
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
