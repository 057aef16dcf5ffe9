"""The GGUF files a user added (`POST /api/models/local`) and each local model's own settings
(`PATCH /api/models/{name}`), remembered in the data dir.

`models.json`: `{"local_models": [{"name": ..., "path": ...}], "settings": {name: {"n_ctx": …,
"n_threads": …, "n_gpu_layers": …, "keep_alive": …}}, "default": name}` ("Set as default";
any model's name),
written whole to a temporary file and renamed over the old one, so a crash leaves the old
list or the new one, never half.
A file that cannot be read is reported in the log and treated as empty; it is not
overwritten until the user adds or removes a model.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path

from server.files import write_json_atomically

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RegisteredModel:
    name: str
    path: Path


# A local model's own settings: what LocalSettings fields a user may change per model.
SETTING_NAMES = ("n_ctx", "n_threads", "n_gpu_layers", "keep_alive")
ModelSettings = dict[str, int]


class RegisteredModels:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.models: list[RegisteredModel] = []
        self.settings: dict[str, ModelSettings] = {}
        self.default: str | None = None
        self._lock = threading.Lock()
        self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            entries = data["local_models"]
            self.models = [RegisteredModel(str(e["name"]), Path(str(e["path"]))) for e in entries]
            self.settings = {
                str(name): {k: int(v) for k, v in values.items() if k in SETTING_NAMES}
                for name, values in data.get("settings", {}).items()
            }
            default = data.get("default")
            self.default = default if isinstance(default, str) and default else None
        except FileNotFoundError:
            pass
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            log.error("cannot read the added models from %s (%s); starting without them",
                      self.path, exc)  # fmt: skip

    # Each change is made and written under one lock (they run in worker threads): two at
    # once never lose one another's change.

    def add(self, model: RegisteredModel) -> None:
        with self._lock:
            self._save([*self.models, model], self.settings, self.default)

    def remove(self, name: str) -> None:
        with self._lock:
            settings = {k: v for k, v in self.settings.items() if k != name}
            self._save([m for m in self.models if m.name != name], settings, self.default)

    def set_default(self, name: str) -> None:
        with self._lock:
            self._save(self.models, self.settings, name)

    def configure(self, name: str, changes: ModelSettings) -> ModelSettings:
        """Merge `changes` into the model's settings; returns them all."""
        with self._lock:
            merged = {**self.settings.get(name, {}), **changes}
            self._save(self.models, {**self.settings, name: merged}, self.default)
            return merged

    def _save(
        self, models: list[RegisteredModel], settings: dict[str, ModelSettings], default: str | None
    ) -> None:
        """Raises OSError; then what is in memory is unchanged too."""
        payload: dict[str, object] = {
            "local_models": [{"name": m.name, "path": str(m.path)} for m in models],
            "settings": settings,
        }
        if default:
            payload["default"] = default
        write_json_atomically(self.path, payload)
        self.models, self.settings, self.default = models, settings, default
