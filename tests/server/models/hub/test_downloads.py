"""Downloads from the local hub: progress to completion, verified and added as a model that
chats; a child killed mid-way, or a server restarted mid-way, resumes from the bytes on disk
(the hub's own record says where the second GET began); cancel deletes the partial file."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from server.models.bundled import bundled_gguf
from tests.server.models.hub.helpers import MiB, child_pid, models, start, wait_bytes, wait_state
from tests.support.hub import HubFile, LocalHub, tiny_gguf
from tests.support.parley import Parley, wait_model_ready

SIZE, HOLD = 8 * MiB, 3 * MiB


def test_a_download_completes_verified_and_added_and_chats(hub: LocalHub, data_dir: Path) -> None:
    hub.add("HuggingFaceTB/SmolLM2-GGUF", {"smol-Q4_1.gguf": HubFile(bundled_gguf())})
    server = Parley(data_dir).start()
    try:
        wait_model_ready(server)
        began = time.monotonic()
        download_id = start(server, "HuggingFaceTB/SmolLM2-GGUF", "smol-Q4_1.gguf")
        done = wait_state(server, download_id, "completed", "failed", timeout=120)
        took = time.monotonic() - began
        assert done["state"] == "completed", done
        print(f"\n{done['size_bytes'] / 1e6:.0f} MB downloaded, verified, added in {took:.2f} s")
        assert done["bytes_done"] == bundled_gguf().stat().st_size
        assert done["model"] == "smol-Q4_1" and "smol-Q4_1" in models(server)
        path = data_dir / "models" / "HuggingFaceTB" / "SmolLM2-GGUF" / "smol-Q4_1.gguf"
        assert done["path"] == str(path) and path.is_file()
        assert not Path(f"{path}.part").exists()
        assert server.status()["downloads"][0]["state"] == "completed"

        conversation_id = server.new_conversation(model="smol-Q4_1")
        stream = server.send(conversation_id, "Say hi.", max_tokens=5)
        stream.read_all()
        assert stream.final["parley"]["status"] == "completed"
    finally:
        server.stop()


def test_progress_is_shown_and_a_killed_child_resumes_where_it_stopped(
    hub: LocalHub, data_dir: Path, gguf_dir: Path
) -> None:
    file = HubFile(tiny_gguf(gguf_dir / "t.gguf", SIZE), hold_at=HOLD)
    hub.add("me/Tiny-GGUF", {"tiny-Q8_0.gguf": file})
    server = Parley(data_dir).start()
    try:
        download_id = start(server, "me/Tiny-GGUF", "tiny-Q8_0.gguf")
        part = data_dir / "models" / "me" / "Tiny-GGUF" / "tiny-Q8_0.gguf.part"
        wait_bytes(part, HOLD)
        shown = server.status()["downloads"][0]
        assert shown["state"] == "downloading" and shown["size_bytes"] == SIZE
        wait_state(server, download_id, "downloading")
        server.wait_for(lambda: server.status()["downloads"][0]["bytes_done"] == HOLD)

        os.kill(child_pid(server), signal.SIGKILL)
        failed = wait_state(server, download_id, "failed")
        assert failed["error_code"] == "interrupted" and failed["resumable"], failed
        assert part.stat().st_size == HOLD  # the bytes on disk are kept

        file.hold_at = None
        file.release_event.set()
        assert server.call("POST", f"/api/downloads/{download_id}/resume").status == 202
        done = wait_state(server, download_id, "completed", "failed")
        assert done["state"] == "completed", done
        first, second = file.gets[0], file.gets[-1]
        assert first[0] == 0 and second == [HOLD, SIZE - HOLD]  # fewer bytes the second time
        assert "tiny-Q8_0" in models(server)
    finally:
        server.stop()


def test_a_download_cut_by_a_restart_resumes_when_asked(
    hub: LocalHub, data_dir: Path, gguf_dir: Path
) -> None:
    file = HubFile(tiny_gguf(gguf_dir / "t.gguf", SIZE), hold_at=HOLD)
    hub.add("me/Tiny-GGUF", {"tiny-Q8_0.gguf": file})
    part = data_dir / "models" / "me" / "Tiny-GGUF" / "tiny-Q8_0.gguf.part"
    server = Parley(data_dir).start()
    try:
        download_id = start(server, "me/Tiny-GGUF", "tiny-Q8_0.gguf")
        wait_bytes(part, HOLD)
        pid = child_pid(server)
    finally:
        assert server.stop()
    assert not _alive(pid)  # a shutdown kills the child
    file.hold_at = None
    file.release_event.set()

    server = Parley(data_dir).start()
    try:
        paused = wait_state(server, download_id, "paused")
        assert paused["bytes_done"] == HOLD
        assert server.call("POST", f"/api/downloads/{download_id}/resume").status == 202
        done = wait_state(server, download_id, "completed", "failed")
        assert done["state"] == "completed", done
        assert file.gets[-1] == [HOLD, SIZE - HOLD]
    finally:
        server.stop()


def test_pause_stops_the_transfer_and_cancel_deletes_the_partial_file(
    hub: LocalHub, data_dir: Path, gguf_dir: Path
) -> None:
    file = HubFile(tiny_gguf(gguf_dir / "t.gguf", SIZE), hold_at=HOLD)
    hub.add("me/Tiny-GGUF", {"tiny-Q8_0.gguf": file})
    part = data_dir / "models" / "me" / "Tiny-GGUF" / "tiny-Q8_0.gguf.part"
    server = Parley(data_dir).start()
    try:
        download_id = start(server, "me/Tiny-GGUF", "tiny-Q8_0.gguf")
        wait_bytes(part, HOLD)
        pid = child_pid(server)
        began = time.monotonic()
        paused = server.call("POST", f"/api/downloads/{download_id}/pause")
        print(f"\npause answered in {time.monotonic() - began:.3f} s")
        assert paused.status == 200 and paused.json()["state"] == "paused"
        assert not _alive(pid)
        assert part.stat().st_size == HOLD

        assert server.call("POST", f"/api/downloads/{download_id}/resume").status == 202
        wait_state(server, download_id, "downloading")
        pid = child_pid(server)
        began = time.monotonic()
        assert server.call("DELETE", f"/api/downloads/{download_id}").status == 204
        print(f"cancel answered in {time.monotonic() - began:.3f} s")
        assert not _alive(pid)
        assert not part.exists()
        assert server.call("GET", "/api/downloads").json()["downloads"] == []
        assert "tiny-Q8_0" not in models(server)
    finally:
        server.stop()


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "zombie" not in status.lower()


def test_downloads_go_to_the_models_folder_chosen(
    hub: LocalHub, data_dir: Path, gguf_dir: Path, tmp_path: Path
) -> None:
    hub.add("me/Tiny-GGUF", {"tiny-Q8_0.gguf": HubFile(tiny_gguf(gguf_dir / "t.gguf", 4096))})
    chosen = tmp_path / "my models"
    server = Parley(data_dir, models_dir=chosen).start()
    try:
        download_id = start(server, "me/Tiny-GGUF", "tiny-Q8_0.gguf")
        done = wait_state(server, download_id, "completed", "failed")
        assert done["state"] == "completed", done
        assert done["path"] == str(chosen / "me" / "Tiny-GGUF" / "tiny-Q8_0.gguf")
        assert not (data_dir / "models").exists()
    finally:
        server.stop()


def test_the_same_file_name_from_three_repositories_of_one_owner_is_three_models(
    hub: LocalHub, data_dir: Path, gguf_dir: Path
) -> None:
    for repo in ("A", "B", "C"):
        source = tiny_gguf(gguf_dir / f"{repo}.gguf", 4096, name=repo)
        hub.add(f"me/{repo}-GGUF", {"tiny-Q8_0.gguf": HubFile(source)})
    server = Parley(data_dir).start()
    try:
        added = []
        for repo in ("A", "B", "C"):  # one after another: the names are given in this order
            download_id = start(server, f"me/{repo}-GGUF", "tiny-Q8_0.gguf")
            done = wait_state(server, download_id, "completed", "failed")
            assert done["state"] == "completed", done
            assert Path(done["path"]).is_file()
            added.append(done["model"])
        assert added == ["tiny-Q8_0", "tiny-Q8_0-me", "tiny-Q8_0-me-2"]
        assert set(added) <= set(models(server))
    finally:
        server.stop()
