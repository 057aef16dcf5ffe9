"""One download per file: concurrent requests for the same file are one download, the
others told which one it is, and the finished model keeps its file; a file whose path is
taken is never replaced nor deleted by a download that did not create it."""

from __future__ import annotations

import threading
from pathlib import Path

from tests.server.models.hub.helpers import models, start, wait_state
from tests.support.client import Reply
from tests.support.hub import HubFile, LocalHub, tiny_gguf
from tests.support.parley import Parley

ROUNDS, AT_ONCE = 10, 4


def _post_at_once(server: Parley, repo: str, file: str, count: int) -> list[Reply]:
    """`count` POSTs of the same file, each on its own connection, sent together."""
    barrier = threading.Barrier(count)
    replies: list[Reply | None] = [None] * count

    def post(index: int) -> None:
        barrier.wait()
        body = {"repo": repo, "file": file}
        replies[index] = server.call("POST", "/api/downloads", json_body=body)

    threads = [threading.Thread(target=post, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert all(reply is not None for reply in replies)
    return [reply for reply in replies if reply is not None]


def test_concurrent_requests_for_one_file_are_one_download_and_lose_no_model(
    hub: LocalHub, data_dir: Path, gguf_dir: Path
) -> None:
    for n in range(ROUNDS):
        source = tiny_gguf(gguf_dir / f"t{n}.gguf", 64 * 1024, name=f"tiny{n}")
        hub.add(f"me/Tiny{n}-GGUF", {f"tiny{n}-Q8_0.gguf": HubFile(source)})
    server = Parley(data_dir).start()
    accepted_ids: list[str] = []
    try:
        for n in range(ROUNDS):
            repo, file = f"me/Tiny{n}-GGUF", f"tiny{n}-Q8_0.gguf"
            replies = _post_at_once(server, repo, file, AT_ONCE)
            accepted = [r for r in replies if r.status == 202]
            assert len(accepted) == 1, [(r.status, r.body) for r in replies]
            download_id = accepted[0].json()["id"]
            accepted_ids.append(download_id)
            for refused in (r for r in replies if r.status != 202):
                error = refused.json()["error"]
                assert (refused.status, error["code"]) == (409, "download_exists"), error
                assert download_id in error["message"], error
        lost = []
        for n, download_id in enumerate(accepted_ids):
            done = wait_state(server, download_id, "completed", "failed")
            path = data_dir / "models" / "me" / f"Tiny{n}-GGUF" / f"tiny{n}-Q8_0.gguf"
            if not (done["state"] == "completed" and path.is_file()):
                lost.append((n, done))
        assert lost == []
        listed = models(server)
        assert all(f"tiny{n}-Q8_0" in listed for n in range(ROUNDS)), listed
        assert len(server.call("GET", "/api/downloads").json()["downloads"]) == ROUNDS
    finally:
        server.stop()


def test_a_file_already_at_the_path_is_neither_replaced_nor_deleted(
    hub: LocalHub, data_dir: Path, gguf_dir: Path
) -> None:
    """A file put at the download's path while it runs (by hand, by another program): the
    download fails as `model_exists` and the file stays as it was."""
    source = tiny_gguf(gguf_dir / "t.gguf", 1024 * 1024)
    file = HubFile(source, hold_at=512 * 1024)
    hub.add("me/Tiny-GGUF", {"tiny-Q8_0.gguf": file})
    final = data_dir / "models" / "me" / "Tiny-GGUF" / "tiny-Q8_0.gguf"
    server = Parley(data_dir).start()
    try:
        download_id = start(server, "me/Tiny-GGUF", "tiny-Q8_0.gguf")
        assert file.held.wait(30)
        theirs = tiny_gguf(final, 4096, name="theirs").read_bytes()
        file.release_event.set()
        failed = wait_state(server, download_id, "failed", "completed")
        assert (failed["state"], failed["error_code"]) == ("failed", "model_exists"), failed
        assert final.read_bytes() == theirs
        assert "tiny-Q8_0" not in models(server)
    finally:
        server.stop()


def test_a_cancelled_download_lets_go_of_its_file(
    hub: LocalHub, data_dir: Path, gguf_dir: Path
) -> None:
    file = HubFile(tiny_gguf(gguf_dir / "t.gguf", 1024 * 1024), hold_at=512 * 1024)
    hub.add("me/Tiny-GGUF", {"tiny-Q8_0.gguf": file})
    part = data_dir / "models" / "me" / "Tiny-GGUF" / "tiny-Q8_0.gguf.part"
    server = Parley(data_dir).start()
    try:
        first = start(server, "me/Tiny-GGUF", "tiny-Q8_0.gguf")
        assert file.held.wait(30)
        assert server.call("DELETE", f"/api/downloads/{first}").status == 204
        assert not part.exists()
        file.hold_at = None
        file.release_event.set()
        again = start(server, "me/Tiny-GGUF", "tiny-Q8_0.gguf")
        done = wait_state(server, again, "completed", "failed")
        assert done["state"] == "completed", done
        assert [d["id"] for d in server.call("GET", "/api/downloads").json()["downloads"]] == [
            again
        ]
        assert "tiny-Q8_0" in models(server)
    finally:
        server.stop()
