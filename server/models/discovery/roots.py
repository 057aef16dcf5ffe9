"""Where other apps keep their GGUF files, read from the environment as those apps read it.

Read at each scan (cheap), so a test points HOME, OLLAMA_MODELS and HF_HOME (or HF_HUB_CACHE)
at a temporary folder before it asks. LM Studio records a moved models folder in its
`settings.json` (`downloadsFolder`) and a moved home in `~/.lmstudio-home-pointer`; both are
small files of the user's, read bounded and checked (an absolute path, or ignored).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from pathlib import Path

from server.limits import ScanLimits
from server.models.discovery.found import Root

OLLAMA_SERVICE_STORE = "/usr/share/ollama/.ollama/models"  # Linux install as a system service


def default_roots(environ: Mapping[str, str] | None = None) -> list[Root]:
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    roots = [Root("lmstudio", path) for path in lmstudio_folders(home, env)]
    roots += [Root("ollama", path) for path in ollama_stores(home, env)]
    roots.append(Root("hf_cache", hf_hub_cache(home, env)))
    return _unique(roots)


def ollama_stores(home: Path, env: Mapping[str, str]) -> list[str]:
    configured = env.get("OLLAMA_MODELS")
    if configured:
        return [_absolute(configured, home)]  # Ollama then looks nowhere else
    return [str(home / ".ollama" / "models"), OLLAMA_SERVICE_STORE]


def hf_hub_cache(home: Path, env: Mapping[str, str]) -> str:
    """huggingface_hub's own order: HF_HUB_CACHE, the old HUGGINGFACE_HUB_CACHE,
    HF_HOME/hub, XDG_CACHE_HOME/huggingface/hub, ~/.cache/huggingface/hub."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if env.get(name):
            return _absolute(env[name], home)
    if env.get("HF_HOME"):
        return os.path.join(_absolute(env["HF_HOME"], home), "hub")
    cache = _absolute(env["XDG_CACHE_HOME"], home) if env.get("XDG_CACHE_HOME") else None
    return os.path.join(cache or str(home / ".cache"), "huggingface", "hub")


def lmstudio_folders(home: Path, env: Mapping[str, str]) -> list[str]:
    """The models folder LM Studio's settings name, then its home's (the pointer's, or
    ~/.lmstudio), then the old ~/.cache/lm-studio."""
    homes = [str(home / ".lmstudio")]
    pointer = _small_text(home / ".lmstudio-home-pointer")
    if pointer and os.path.isabs(pointer.strip()):
        homes.insert(0, pointer.strip())
    settings = [os.path.join(h, "settings.json") for h in homes]
    settings += [str(home / ".cache" / "lm-studio" / "settings.json")]
    settings += [str(home / ".config" / "LM Studio" / "settings.json")]
    settings += [str(home / "Library" / "Application Support" / "LM Studio" / "settings.json")]
    if env.get("APPDATA"):
        settings.append(os.path.join(env["APPDATA"], "LM Studio", "settings.json"))
    folders = [f for f in (_downloads_folder(Path(s)) for s in settings) if f]
    folders += [os.path.join(h, "models") for h in homes]
    folders.append(str(home / ".cache" / "lm-studio" / "models"))
    return folders


def _downloads_folder(settings: Path) -> str | None:
    text = _small_text(settings)
    if text is None:
        return None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    folder = data.get("downloadsFolder") if isinstance(data, dict) else None
    if isinstance(folder, str) and os.path.isabs(folder) and "\x00" not in folder:
        return folder
    return None


def _small_text(path: Path) -> str | None:
    """A small regular file's text; None for anything else (missing, a FIFO, too big)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode) or found.st_size > ScanLimits.settings_bytes:
            return None
        return os.read(fd, ScanLimits.settings_bytes).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _absolute(path: str, home: Path) -> str:
    expanded = str(home) + path[1:] if path == "~" or path.startswith("~/") else path
    return os.path.abspath(expanded)


def _unique(roots: list[Root]) -> list[Root]:
    seen: set[tuple[str, str]] = set()
    kept = []
    for root in roots:
        key = (root.source, os.path.normpath(root.path))
        if key not in seen:
            seen.add(key)
            kept.append(root)
    return kept
