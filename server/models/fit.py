"""Will a GGUF model fit on this machine, at a context size? ("what fits")

From the file's header (server/models/gguf.py) and this machine's memory, an estimate of
what loading it costs, with the figures it used, and a verdict:

- weights: the file's size (llama.cpp maps it; on the CPU every byte is resident once used);
- context: the KV cache, 2 (keys and values) × layers × context × the KV width (the embedding
  width × KV heads / heads) × 2 bytes (f16, llama.cpp's default);
- overhead: compute buffers and the engine process, ~10% of the weights + 150 MB (for the
  bundled model: 98 + 189 + 167 = 454 MB estimated at 8,192 tokens, against ~340 MB its
  engine process was measured at: the estimate errs on the side of "slow");
- available: MemAvailable from /proc/meminfo (elsewhere, half of the physical memory).

"won't fit": more than what is available; "slow": more than 75% of it (the rest of the
machine starts swapping) or an estimated speed under 3 tokens/s (on the CPU each token reads
every weight once: `CPU_BYTES_PER_S` / weights); else "fits". A GPU build is not counted
(this build runs on the CPU).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Literal

from server.models.gguf import GGUFInfo
from server.types import FitJSON

Verdict = Literal["fits", "slow", "won't fit", "unknown"]

CPU_BYTES_PER_S = 10e9  # what a laptop's cores read of the weights per second, roughly
SLOW_TOKENS_PER_S = 3.0
TIGHT_SHARE = 0.75
OVERHEAD_FIXED = 150 << 20
OVERHEAD_SHARE = 0.10
SIZE_ONLY_CONTEXT_SHARE = 0.15
STATUS_READ_BYTES = 16_384  # /proc/PID/status is ~1.5 KB; VmRSS is in its first half


@dataclass(frozen=True)
class Fit:
    verdict: Verdict
    weights_bytes: int
    context_bytes: int | None
    overhead_bytes: int
    needed_bytes: int | None
    available_bytes: int | None
    context: int
    tokens_per_s: float
    why: str

    def json(self) -> FitJSON:
        return {
            "verdict": self.verdict,
            "needed_bytes": self.needed_bytes,
            "available_bytes": self.available_bytes,
            "weights_bytes": self.weights_bytes,
            "context_bytes": self.context_bytes,
            "overhead_bytes": self.overhead_bytes,
            "context": self.context,
            "tokens_per_s": round(self.tokens_per_s, 1),
            "why": self.why,
        }


def kv_cache_bytes(info: GGUFInfo, context: int) -> int | None:
    """The KV cache at `context` tokens (f16); None when the header does not say its shape."""
    layers, width, heads = info.block_count, info.embedding_length, info.head_count
    if not (layers and width and heads):
        return None
    kv_heads = info.head_count_kv or heads
    return 2 * layers * context * (width * kv_heads // heads) * 2


def available_memory() -> int | None:
    """Bytes of memory available to a new process now (blocking: reads /proc)."""
    try:
        with open("/proc/meminfo", "rb") as meminfo:
            for line in meminfo:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return None


def process_rss(pid: int) -> int | None:
    """Bytes of `pid`'s memory resident now (VmRSS in /proc/PID/status); None when the
    process is gone or this is not Linux. Reads the kernel's page, never a disk."""
    try:
        with open(f"/proc/{pid}/status", "rb") as status:
            for line in status.read(STATUS_READ_BYTES).splitlines():
                if line.startswith(b"VmRSS:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def estimate(info: GGUFInfo, context: int, available: int | None) -> Fit:
    """What loading the model at `context` tokens costs, against `available` bytes."""
    return _judge(info.size_bytes, kv_cache_bytes(info, context), context, available)


def estimate_from_size(size: int, context: int, available: int | None) -> Fit:
    """Before a download, from the file's size alone (its header is not read yet): the
    context's memory is taken as `SIZE_ONLY_CONTEXT_SHARE` of the weights (a 7B Q4 with
    grouped attention at 4,096 tokens: ~0.5 of 4.4 GB), and said so."""
    weights = max(size, 0)
    found = _judge(weights, int(weights * SIZE_ONLY_CONTEXT_SHARE), context, available)
    why = found.why + " (from its size: the context's share is estimated)"
    return dataclasses.replace(found, why=why)


def _judge(weights: int, kv: int | None, context: int, available: int | None) -> Fit:
    """The verdict on `weights` + `kv` (None: not known) + the overhead, against
    `available` (None: not known), with the figures it used."""
    overhead = int(weights * OVERHEAD_SHARE) + OVERHEAD_FIXED
    needed = weights + kv + overhead if kv is not None else None
    speed = CPU_BYTES_PER_S / max(weights, 1)
    if needed is None or available is None:
        verdict: Verdict = "unknown"
        why = "its header does not give its shape" if needed is None else "free memory unknown"
    elif needed > available:
        verdict, why = "won't fit", f"needs {_gb(needed)}, {_gb(available)} free"
    elif needed > TIGHT_SHARE * available:
        verdict, why = "slow", f"needs {_gb(needed)} of {_gb(available)} free: little to spare"
    elif speed < SLOW_TOKENS_PER_S:
        verdict, why = "slow", f"about {speed:.1f} tokens/s on this CPU ({_gb(weights)} a token)"
    else:
        verdict, why = "fits", f"needs {_gb(needed)}, {_gb(available)} free"
    return Fit(verdict, weights, kv, overhead, needed, available, context, speed, why)


def _gb(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"
