"""Where each app keeps its files, read from the environment and LM Studio's own records the
way those apps read them."""

from __future__ import annotations

import json
import os
from pathlib import Path

from server.models.discovery.roots import default_roots


def roots(env: dict[str, str]) -> list[tuple[str, str]]:
    return [(root.source, root.path) for root in default_roots(env)]


def test_the_defaults_are_in_the_home_folder(tmp_path: Path) -> None:
    home = str(tmp_path)
    found = roots({"HOME": home})
    assert found[:2] == [("lmstudio", f"{home}/.lmstudio/models"),
                         ("lmstudio", f"{home}/.cache/lm-studio/models")]  # fmt: skip
    assert ("ollama", f"{home}/.ollama/models") in found
    assert ("hf_cache", f"{home}/.cache/huggingface/hub") in found


def test_the_environment_moves_ollama_and_the_cache(tmp_path: Path) -> None:
    home = str(tmp_path)
    env = {"HOME": home, "OLLAMA_MODELS": "~/big/ollama", "HF_HOME": "/srv/hf"}
    found = roots(env)
    assert [r for r in found if r[0] == "ollama"] == [("ollama", f"{home}/big/ollama")]
    assert ("hf_cache", "/srv/hf/hub") in found
    assert ("hf_cache", "/srv/cache") in roots({**env, "HF_HUB_CACHE": "/srv/cache"})
    xdg = roots({"HOME": home, "XDG_CACHE_HOME": "/x"})
    assert ("hf_cache", "/x/huggingface/hub") in xdg


def test_lm_studio_s_own_records_name_its_folders(tmp_path: Path) -> None:
    moved_home = tmp_path / "elsewhere" / ".lmstudio"
    moved_home.mkdir(parents=True)
    (tmp_path / ".lmstudio-home-pointer").write_text(f"{moved_home}\n")
    settings = {"downloadsFolder": "/mnt/models", "other": [1, 2]}
    (moved_home / "settings.json").write_text(json.dumps(settings))
    found = [path for source, path in roots({"HOME": str(tmp_path)}) if source == "lmstudio"]
    assert found[:2] == ["/mnt/models", f"{moved_home}/models"]


def test_lm_studio_s_records_are_read_bounded(tmp_path: Path) -> None:
    lmstudio = tmp_path / ".lmstudio"
    lmstudio.mkdir()
    os.mkfifo(tmp_path / ".lmstudio-home-pointer")  # never waited on
    big = lmstudio / "settings.json"
    big.write_text(json.dumps({"downloadsFolder": "/mnt/big"}))
    os.truncate(big, 10_000_000)
    relative = tmp_path / ".cache" / "lm-studio" / "settings.json"
    relative.parent.mkdir(parents=True)
    relative.write_text(json.dumps({"downloadsFolder": "models"}))
    found = [path for source, path in roots({"HOME": str(tmp_path)}) if source == "lmstudio"]
    assert found == [f"{tmp_path}/.lmstudio/models", f"{tmp_path}/.cache/lm-studio/models"]
