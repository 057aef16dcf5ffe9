"""The desktop bundle (issue 14): build time, size, and launch from it against `python -m desktop`.

    python -m bench.bundle [ROUNDS] [--no-build]

1. `packaging/build.sh` timed (its build venv and pip's cache as they are: say which in the
   note), after removing the previous dist/ and PyInstaller's work folder;
2. the bundle's size unpacked (dist/parley) and as the .tar.gz;
3. ROUNDS launches (default 5) of the bundle's `parley` and of `python -m desktop`, offscreen,
   each with fresh data: spawn -> window shown, -> server ready (PARLEY_PRINT_TIMINGS), and
   -> the bundled model ready (`/api/status` polled every 20 ms). Run it alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import read_timings, show, summary
from tests.support.client import request

ROOT = Path(__file__).resolve().parent.parent


def build() -> None:
    shutil.rmtree(ROOT / "dist", ignore_errors=True)
    shutil.rmtree(ROOT / "build" / "pyinstaller", ignore_errors=True)
    started = time.perf_counter()
    subprocess.run(["bash", "packaging/build.sh"], cwd=ROOT, check=True, capture_output=True)
    print(f"build (packaging/build.sh, build venv kept): {time.perf_counter() - started:.0f} s")


def size_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 1e6
    files = (p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    return sum(p.lstat().st_size for p in files) / 1e6


def model_ready_at(runtime: Path, patience_s: float) -> float | None:
    deadline = time.monotonic() + patience_s
    while time.monotonic() < deadline:
        found = next(iter(runtime.glob("server-*.json")), None)
        if found is not None:
            try:
                info = json.loads(found.read_text())
                port = int(info["url"].rsplit(":", 1)[1])
                status = request(port, "GET", "/api/status", token=info["token"]).json()
            except (OSError, ValueError, KeyError):
                status = None
            if status and any(m["state"] == "ready" for m in status["models"]):
                return time.time()
        time.sleep(0.02)
    return None


def launches(command: list[str], rounds: int) -> None:
    shown, served, ready = [], [], []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            env = {
                **os.environ,
                "QT_QPA_PLATFORM": "offscreen",
                "PARLEY_PRINT_TIMINGS": "1",
                "PARLEY_RUNTIME_DIR": f"{tmp}/rt",
                "PARLEY_CONFIG_DIR": f"{tmp}/cfg",
                "PARLEY_LOG_DIR": f"{tmp}/log",
            }
            start = time.time()
            proc = subprocess.Popen(
                [*command, "--data-dir", f"{tmp}/data"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            assert proc.stdout is not None
            events = read_timings(proc.stdout, 30)
            model = model_ready_at(Path(tmp) / "rt", 60)
            proc.terminate()
            proc.wait(30)
            proc.stdout.close()
        if "window_shown" in events:
            shown.append((events["window_shown"] - start) * 1000)
        if "server_ready" in events:
            served.append((events["server_ready"] - start) * 1000)
        if model is not None:
            ready.append((model - start) * 1000)
    label = Path(command[0]).name if len(command) == 1 else " ".join(command[-2:])
    show(f"{label}: launch -> window shown (ms)", summary(shown))
    show(f"{label}: launch -> server ready (ms)", summary(served))
    show(f"{label}: launch -> bundled model ready (ms)", summary(ready))


def main(rounds: int = 5, build_first: bool = True) -> None:
    if build_first:
        build()
    bundle = ROOT / "dist" / "parley"
    archives = sorted((ROOT / "dist").glob("parley-*.tar.gz"))
    print(f"bundle unpacked: {size_mb(bundle):.0f} MB; archive {archives[-1].name}: "
          f"{size_mb(archives[-1]):.0f} MB")  # fmt: skip
    gguf = next(bundle.rglob("*.gguf"))
    print(f"of which the bundled GGUF: {size_mb(gguf):.0f} MB, "
          f"llama.cpp (xllamacpp): {size_mb(bundle / '_internal' / 'xllamacpp'):.0f} MB, "
          f"Qt (PySide6): {size_mb(bundle / '_internal' / 'PySide6'):.0f} MB")  # fmt: skip
    launches([str(bundle / "parley")], rounds)
    launches([sys.executable, "-m", "desktop"], rounds)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(int(args[0]) if args else 5, "--no-build" not in sys.argv)
