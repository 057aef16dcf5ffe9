"""What fits (issue 39): a GGUF's shape and whether its chat template takes tools are read
from its header; the memory a model needs at a context size, against what is free, gives
"fits", "slow" or "won't fit" with the figures used; the models list shows both."""

from __future__ import annotations

import struct
from pathlib import Path

from server.models.bundled import BUNDLED_MODEL_NAME, bundled_gguf
from server.models.fit import estimate, kv_cache_bytes
from server.models.gguf import GGUFInfo, read_gguf
from tests.server.models.test_gguf import header, text
from tests.support.parley import Parley

U32, STRING = 4, 8


def key_u32(name: str, value: int) -> bytes:
    return text(name.encode()) + struct.pack("<II", U32, value)


def key_str(name: str, value: bytes) -> bytes:
    return text(name.encode()) + struct.pack("<I", STRING) + text(value)


def tiny_gguf(path: Path, template: bytes | None) -> Path:
    keys = [key_str("general.architecture", b"llama"), key_u32("llama.block_count", 4),
            key_u32("llama.embedding_length", 256), key_u32("llama.attention.head_count", 8),
            key_u32("llama.attention.head_count_kv", 2)]  # fmt: skip
    if template is not None:
        keys.append(key_str("tokenizer.chat_template", template))
    path.write_bytes(header(len(keys)) + b"".join(keys))
    return path


def test_the_header_gives_the_shape_and_whether_the_template_takes_tools(
    tmp_path: Path,
) -> None:
    bundled = read_gguf(bundled_gguf())
    assert (bundled.block_count, bundled.embedding_length) == (30, 576)
    assert (bundled.head_count, bundled.head_count_kv) == (9, 3)
    assert bundled.template_tools is False  # SmolLM2's template has no tools

    tools = b"{% if tools %}{{ tools | tojson }}{% endif %}{{ messages }}"
    assert read_gguf(tiny_gguf(tmp_path / "t.gguf", tools)).template_tools is True
    plain = b"{% for m in messages %}{{ m.content }}{% endfor %}"
    assert read_gguf(tiny_gguf(tmp_path / "p.gguf", plain)).template_tools is False
    assert read_gguf(tiny_gguf(tmp_path / "n.gguf", None)).template_tools is None
    # A template longer than any real one is skipped, not a reason to refuse the file.
    long = read_gguf(tiny_gguf(tmp_path / "l.gguf", b"tools " * 400_000))
    assert long.template_tools is None and long.block_count == 4


def test_the_estimate_counts_weights_context_and_overhead() -> None:
    info = read_gguf(bundled_gguf())
    # 2 (K, V) x 30 layers x 8,192 tokens x (576 x 3 / 9) x 2 bytes
    assert kv_cache_bytes(info, 8192) == 2 * 30 * 8192 * 192 * 2 == 188_743_680
    roomy = estimate(info, 8192, available=16_000_000_000)
    assert roomy.verdict == "fits" and roomy.needed_bytes is not None
    needed = roomy.needed_bytes
    assert needed == info.size_bytes + 188_743_680 + roomy.overhead_bytes
    assert estimate(info, 8192, available=int(needed / 0.8)).verdict == "slow"
    refused = estimate(info, 8192, available=needed - 1)
    assert refused.verdict == "won't fit" and "free" in refused.why
    # A smaller context needs less.
    assert (estimate(info, 2048, available=needed - 1).verdict) == "fits"
    # A big model fits in memory but reads too many bytes a token to be quick on a CPU.
    big = GGUFInfo("llama", 4096, "Q4_K_M", 8_000_000_000, 0, 32, 4096, 32, 8)
    slow = estimate(big, 4096, available=64_000_000_000)
    assert slow.verdict == "slow" and "tokens/s" in slow.why
    unknown = GGUFInfo("mystery", None, None, 1_000_000, 0)
    assert estimate(unknown, 4096, available=10**10).verdict == "unknown"


def test_the_models_list_says_what_fits_and_whether_it_takes_tools(parley: Parley) -> None:
    reply = parley.call("GET", "/api/models")
    assert reply.status == 200
    bundled = next(m for m in reply.json()["models"] if m["name"] == BUNDLED_MODEL_NAME)
    facts = bundled["gguf"]
    assert facts["tools"] is False
    fit = facts["fit"]
    assert fit["context"] == bundled["settings"]["n_ctx"]
    assert fit["verdict"] in ("fits", "slow", "won't fit")
    assert fit["available_bytes"] > 0 and fit["needed_bytes"] > fit["weights_bytes"]


def test_before_a_download_the_estimate_is_from_the_size_and_says_so() -> None:
    from server.models.fit import estimate_from_size

    small = estimate_from_size(500_000_000, 4096, available=16_000_000_000)
    assert small.verdict == "fits" and "from its size" in small.why
    assert small.needed_bytes is not None and small.needed_bytes > 500_000_000
    assert estimate_from_size(20_000_000_000, 4096, 16_000_000_000).verdict == "won't fit"
    assert estimate_from_size(8_000_000_000, 4096, 64_000_000_000).verdict == "slow"
    assert estimate_from_size(1_000, 4096, None).verdict == "unknown"


def test_the_status_says_whether_each_model_can_call_tools(parley: Parley) -> None:
    reply = parley.call("GET", "/api/status")
    assert reply.status == 200
    tools = {m["name"]: m.get("tools") for m in reply.json()["models"]}
    assert tools[BUNDLED_MODEL_NAME] is False  # its template: no tools
    assert all(value is None for name, value in tools.items() if name != BUNDLED_MODEL_NAME)
