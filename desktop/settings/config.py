"""The desktop app's own settings: OpenAI-compatible backends and the default system prompt.

Stored as JSON in the user config directory (`PARLEY_CONFIG_DIR` overrides), written
atomically. API keys never go into that file: see `desktop.settings.api_keys`.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import platformdirs

from server.settings import Limits, UpstreamSettings

APP_NAME = "parley"  # the same directory names as the server's

log = logging.getLogger(__name__)
DEFAULT_MAX_TOKENS = 2048
MAX_TOKENS = Limits().max_reply_tokens  # what the server takes


def config_dir() -> Path:
    override = os.environ.get("PARLEY_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


@dataclass
class Backend:
    base_url: str
    model: str
    # Tokens the model sees at once; None: the server asks the upstream.
    context: int | None = None


@dataclass
class DesktopConfig:
    backends: list[Backend] = field(default_factory=list)
    system_prompt: str = ""
    # The longest reply, in tokens: small models can otherwise loop until the context is
    # full. 0 means no limit of Parley's own.
    max_tokens: int = DEFAULT_MAX_TOKENS
    # What an earlier version kept as the default for new chats; moved to the server's
    # "Set as default" at the next launch, then "" (desktop/app.py).
    default_model: str = ""
    theme: str = "system"  # View → Theme: "system", "light" or "dark"

    @classmethod
    def load(cls, path: Path | None = None) -> DesktopConfig:
        """The saved config; defaults when there is none or it cannot be read (logged)."""
        path = path or config_dir() / "desktop.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            return cls(
                backends=[
                    Backend(str(b["base_url"]), str(b["model"]), _saved_context(b.get("context")))
                    for b in data["backends"]
                ],
                system_prompt=str(data.get("system_prompt", "")),
                max_tokens=_max_tokens(data.get("max_tokens", DEFAULT_MAX_TOKENS)),
                default_model=str(data.get("default_model", "")),
                theme=_theme(data.get("theme")),
            )
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.error("ignoring unreadable settings %s: %s", path, exc)
            return cls()

    def save(self, path: Path | None = None) -> None:
        write_atomically(path or config_dir() / "desktop.json", json.dumps(asdict(self), indent=2))


def _max_tokens(value: object) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS:
        return value
    return DEFAULT_MAX_TOKENS


def context_tokens(text: str) -> int | None:
    """A backend's context as typed ("32768", "32,768"); None when blank (ask the upstream).

    Raises ValueError saying what is wrong."""
    plain = "".join(text.split()).replace(",", "").replace("_", "")
    if not plain:
        return None
    lowest, highest = UpstreamSettings.min_context, UpstreamSettings.max_context
    if not (plain.isascii() and plain.isdigit()) or not lowest <= int(plain) <= highest:
        raise ValueError(
            f"the context must be a whole number of tokens from {lowest:,} to {highest:,} "
            f"(blank: ask the upstream), not {text.strip()!r}"
        )
    return int(plain)


def _saved_context(value: object) -> int | None:
    """What the file says, if it is a context (a hand-edited file may say anything)."""
    lowest, highest = UpstreamSettings.min_context, UpstreamSettings.max_context
    if isinstance(value, int) and not isinstance(value, bool) and lowest <= value <= highest:
        return value
    return None


def _theme(value: object) -> str:
    return value if isinstance(value, str) and value in ("system", "light", "dark") else "system"


def write_atomically(path: Path, text: str) -> None:
    """Temp file + rename: a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
