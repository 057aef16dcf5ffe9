"""What the models page says in words: a model's state ("Loaded · 420 MB", "In use by 1
reply"), its facts (size, quantization, context, fits, tools) and a download's progress
(bytes, speed, time left). Plain functions of the server's JSON, so the rows stay drawing."""

from __future__ import annotations

from server.types import ModelJSON
from server.types.getting_models import DownloadJSON, FoundModelJSON

# An upstream has nothing to load: its states say whether it was reached.
UPSTREAM_STATES = {"ready": "Reached", "loading": "Checking…", "unloaded": "Not checked yet"}
DOWNLOAD_STATES = {
    "queued": "Waiting",
    "downloading": "Downloading",
    "paused": "Paused",
    "verifying": "Checking the file…",
    "completed": "Ready",
    "failed": "Failed",
}
SOURCES = {"lmstudio": "LM Studio", "ollama": "Ollama", "hf_cache": "Hugging Face cache",
           "folder": "your folder"}  # fmt: skip


def size_text(size: int | None) -> str:
    if size is None:
        return "?"
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:,.0f} MB"


def replies_text(count: int) -> str:
    return f"{count} repl{'y' if count == 1 else 'ies'}"


def state_words(model: ModelJSON) -> str:
    """How the model is doing, as a person says it."""
    if model["state"] == "error":
        reason = model["error"] or "no reason given"
        failed = "Failed to load" if model["kind"] == "local" else "Not reached"
        return f"{failed}: {reason}"
    lifecycle = model.get("lifecycle")
    memory = model.get("memory_bytes")
    in_use = model["slots_busy"] or (1 if lifecycle == "busy" else 0)
    if lifecycle is None:  # an upstream
        text = UPSTREAM_STATES.get(model["state"], model["state"])
    elif lifecycle == "loading":
        text = "Loading…"
    elif lifecycle == "not_loaded":
        text = "Not loaded"
    else:
        text = "Loaded"
    if in_use:
        text = f"In use by {replies_text(in_use)}" if text in ("Loaded", "Reached") else text
    if lifecycle in ("loaded", "busy") and memory:
        text += f" · {size_text(memory)}"
    if model["queue_length"]:
        text += f" · {model['queue_length']} waiting"
    return text


def state_tone(model: ModelJSON) -> str:
    """The colour a state is drawn in: "danger", "warning" (changing), "success" or ""."""
    if model["state"] == "error":
        return "danger"
    lifecycle = model.get("lifecycle")
    if lifecycle == "loading" or model["state"] == "loading":
        return "warning"
    if lifecycle in ("loaded", "busy") or (lifecycle is None and model["state"] == "ready"):
        return "success"
    return ""


def facts_words(model: ModelJSON) -> str:
    """Its file's size, quantization and the context it runs with; an upstream's kind."""
    gguf = model.get("gguf")
    if gguf is None:
        return "OpenAI-compatible server" if model["kind"] != "local" else "Local model"
    facts = [size_text(gguf["size_bytes"])]
    if gguf["quantization"]:
        facts.append(gguf["quantization"])
    settings = model.get("settings")
    if settings is not None:
        facts.append(f"{settings['n_ctx']:,}-token context")
    return " · ".join(facts)


def fit_words(model: ModelJSON) -> tuple[str, str]:
    """The verdict on whether a local model fits this machine, and its figures (a tooltip)."""
    gguf = model.get("gguf")
    fit = gguf.get("fit") if gguf is not None else None
    if fit is None:
        return "", ""
    figures = [fit["why"], f"at a context of {fit['context']:,} tokens:"]
    figures.append(f"weights {fit['weights_bytes'] / 1e6:,.0f} MB")
    if fit["context_bytes"] is not None:
        figures.append(f"context (KV cache) {fit['context_bytes'] / 1e6:,.0f} MB")
    figures.append(f"overhead {fit['overhead_bytes'] / 1e6:,.0f} MB")
    if fit["available_bytes"] is not None:
        figures.append(f"memory free now {fit['available_bytes'] / 1e6:,.0f} MB")
    figures.append(f"about {fit['tokens_per_s']:,.0f} tokens/s on this CPU (estimated)")
    return fit["verdict"], "\n".join(figures)


def tools_words(model: ModelJSON) -> tuple[str, str]:
    """Whether the model can call tools (from its chat template), and why (a tooltip)."""
    gguf = model.get("gguf")
    if model["kind"] != "local":
        return "", ""
    if gguf is None or gguf.get("tools") is None:
        return "tools not known", "Not known until it is used"
    if gguf["tools"]:
        return "can call tools", "Its chat template takes tools: documents and MCP servers"
    return "no tools", "Its chat template has no tools: it answers without them"


def progress_words(download: DownloadJSON) -> str:
    """ "45 MB of 98 MB · 3.2 MB/s · 12 s left" while it moves; bytes alone otherwise."""
    done, total = download["bytes_done"], download["size_bytes"]
    parts = [f"{size_text(done)} of {size_text(total)}"]
    rate, left = download["rate_bytes_per_s"], download["seconds_left"]
    if download["state"] == "downloading":
        if rate:
            parts.append(f"{rate / 1e6:.1f} MB/s")
        if left is not None:
            parts.append(time_left_words(left))
    return " · ".join(parts)


def time_left_words(seconds: float) -> str:
    minutes, rest = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes:02d} min left"
    if minutes:
        return f"{minutes} min {rest:02d} s left"
    return f"{rest} s left" if rest else "a moment left"


def percent(download: DownloadJSON) -> int:
    total = download["size_bytes"]
    return min(100, round(100 * download["bytes_done"] / total)) if total else 0


def download_state_words(download: DownloadJSON) -> str:
    text = DOWNLOAD_STATES.get(download["state"], download["state"])
    if download["state"] == "completed" and download["model"]:
        text += f": the model {download['model']}"
    return text


def found_in_words(found: FoundModelJSON) -> str:
    return "; ".join(
        f"{SOURCES.get(p['source'], p['source'])} ({p['place']})" for p in found["found_in"]
    )


def found_facts_words(found: FoundModelJSON) -> str:
    facts = [size_text(found["size_bytes"])]
    if found["quantization"]:
        facts.append(found["quantization"])
    if found["context_length"]:
        facts.append(f"trained for {found['context_length']:,} tokens")
    return " · ".join(facts)
