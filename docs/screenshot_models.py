"""Screenshots of getting a model (issue 39): Models → "Download a model…" mid-download and
done, and "On this computer…" — against a local hub (tests/support/hub.py) and a made-up
home holding an Ollama store and an LM Studio folder; the real app and its embedded server.

    QT_QPA_PLATFORM=offscreen python docs/screenshot_models.py [OUT_DIR]
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtWidgets import QApplication

from desktop.app import App
from desktop.embedded import launch_settings
from desktop.event_loop import WindowEventLoop
from desktop.models.found_dialog import FoundDialog
from desktop.models.hub_dialog import HubDialog
from desktop.models.models_dialog import ModelsDialog
from desktop.settings.config import DesktopConfig
from server.models.bundled import bundled_gguf
from tests.server.models.discovery.layouts import Home
from tests.support.hub import HubFile, LocalHub, tiny_gguf

SMOL = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF"


def local_hub(tmp: Path) -> tuple[LocalHub, HubFile]:
    hub = LocalHub().start()
    served = HubFile(bundled_gguf(), hold_at=40 * 1024 * 1024)
    hub.add(SMOL, {
        "SmolLM2-135M-Instruct-Q4_1.gguf": served,
        "SmolLM2-135M-Instruct-Q8_0.gguf": HubFile(tiny_gguf(tmp / "q8.gguf", 145_000_000, "q8")),
        "SmolLM2-135M-Instruct-F16.gguf": HubFile(tiny_gguf(tmp / "f16.gguf", 271_000_000, "f")),
    }, downloads=48_211)  # fmt: skip
    hub.add("bartowski/Qwen2.5-1.5B-Instruct-GGUF",
            {"Qwen2.5-1.5B-Instruct-Q4_K_M.gguf": HubFile(tiny_gguf(tmp / "q.gguf", 1000, "q"))},
            downloads=120_345)  # fmt: skip
    hub.add("meta-llama/Llama-3.2-3B-Instruct-GGUF",
            {"Llama-3.2-3B-Instruct-Q4_K_M.gguf": HubFile(tiny_gguf(tmp / "l.gguf", 1000, "l"))},
            gated=True, downloads=9_000)  # fmt: skip
    return hub, served


def made_up_home(tmp: Path) -> Home:
    home = Home(tmp / "home")
    copy = tmp / "smollm2.gguf"
    shutil.copyfile(bundled_gguf(), copy)
    home.ollama_model("smollm2", "135m", source=copy)
    lmstudio = home.lmstudio_file("lmstudio-community", "SmolLM2-GGUF", "SmolLM2-Q8_0.gguf")
    lmstudio.parent.mkdir(parents=True)
    shutil.copyfile(tiny_gguf(tmp / "t.gguf", 145_000_000, "lm"), lmstudio)
    return home


async def until(condition: Callable[[], object], seconds: float = 30) -> None:
    for _ in range(int(seconds / 0.1)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise TimeoutError


async def shoot(out: Path, tmp: Path, served: HubFile) -> None:
    app = App(launch_settings(["--data-dir", str(tmp / "data")]), DesktopConfig.load())
    task = asyncio.ensure_future(app.run())
    window = app.window
    await until(lambda: window.client is not None)
    window.chat_bar.models_button.click()
    await until(lambda: window.findChild(ModelsDialog, "models-dialog") is not None)
    models = window.findChild(ModelsDialog, "models-dialog")
    assert models is not None

    models.hub_button.click()
    await until(lambda: window.findChild(HubDialog, "hub-dialog") is not None)
    hub = window.findChild(HubDialog, "hub-dialog")
    assert hub is not None
    hub.query.setText("instruct")
    hub.search_button.click()
    await until(lambda: hub.repos.rowCount() == 3)
    hub.repos.selectRow(next(r for r in range(3) if hub.repos.item(r, 0).text() == SMOL))
    await until(lambda: hub.files.rowCount() == 3)
    hub.files.selectRow(next(r for r in range(3) if "Q4_1" in hub.files.item(r, 0).text()))
    hub.download_button.click()
    await until(served.held.is_set)
    await until(lambda: hub.downloads.rowCount() == 1 and "%" in hub.downloads.item(0, 2).text())
    hub.downloads.selectRow(0)
    await asyncio.sleep(0.5)
    hub.grab().save(str(out / "models-download.png"))
    served.hold_at = None
    served.release_event.set()
    await until(lambda: "ready" in hub.downloads.item(0, 1).text(), 60)
    hub.reject()

    models.found_button.click()
    await until(lambda: window.findChild(FoundDialog, "found-dialog") is not None)
    found = window.findChild(FoundDialog, "found-dialog")
    assert found is not None
    await until(lambda: found.table.rowCount() == 2)
    found.table.selectRow(0)
    await asyncio.sleep(0.3)
    found.grab().save(str(out / "models-on-this-computer.png"))
    found.reject()
    await asyncio.sleep(1.2)  # the Models list catches up with the new model
    models.grab().save(str(out / "models.png"))
    models.reject()
    window.close()
    await task


def main() -> None:
    out = Path(sys.argv[1] if sys.argv[1:] else Path(__file__).parent / "screenshots")
    tmp = Path(tempfile.mkdtemp(prefix="parley-shots-"))
    hub, served = local_hub(tmp)
    home = made_up_home(tmp)
    os.environ.update(home.environ())
    os.environ.update({"HF_ENDPOINT": hub.url, "HF_TOKEN": "",
                       "XDG_CONFIG_HOME": str(tmp / "config")})  # fmt: skip
    qt = QApplication([])
    loop = WindowEventLoop(qt)
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(shoot(out, tmp, served))
    finally:
        hub.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
