"""The GGUF files a user added (`POST /api/models/local`), remembered in the data dir.

`models.json`: `{"local_models": [{"name": ..., "path": ...}]}`, written whole to a temporary
file and renamed over the old one, so a crash leaves the old list or the new one, never half.
A file that cannot be read is reported in the log and treated as empty; it is not
overwritten until the user adds or removes a model.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RegisteredModel:
    name: str
    path: Path


class RegisteredModels:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.models: list[RegisteredModel] = self._load()

    def _load(self) -> list[RegisteredModel]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            entries = data["local_models"]
            return [RegisteredModel(str(e["name"]), Path(str(e["path"]))) for e in entries]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.error("cannot read the added models from %s (%s); starting without them",
                      self.path, exc)  # fmt: skip
            return []

    def add(self, model: RegisteredModel) -> None:
        self._save([*self.models, model])

    def remove(self, name: str) -> None:
        self._save([m for m in self.models if m.name != name])

    def _save(self, models: list[RegisteredModel]) -> None:
        """Raises OSError; then the list in memory is unchanged too."""
        payload = {"local_models": [{"name": m.name, "path": str(m.path)} for m in models]}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_text(json.dumps(payload, indent=2), encoding="utf-8")
        os.replace(temporary, self.path)
        self.models = models
