"""Attachments (issue 43), measured on real processes.

    python -m bench.attachments [ROUNDS]

parley-server and the scripted upstream each in a process of their own. Measured:
- the upload of a 1 MB Markdown file, a 20 MB text file (the largest), a 10 MB image and a
  40-page PDF (its text extracted in the library's parse workers): POST to 201;
- a send carrying the 10 MB image: POST to the upstream holding the request (the file read,
  base64 and the request's JSON), and the server's resident memory after;
- while the 20 MB file uploads, a reply streaming in another chat: its longest gap between
  two tokens (the upload must not stall other replies).
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench.harness import TOKEN, ParleyProcess, processes, show, summary
from tests.support.client import SSEStream, request
from tests.support.documents import make_pdf
from tests.support.image_files import png

PNG_BYTES = 10 * 1024 * 1024  # the most an attached image may be
# A real PNG made that big by a text chunk (20 bytes of the chunk's own around the filler).
PNG = png(filler=PNG_BYTES - len(png()) - 20)


def upload(parley: ParleyProcess, name: str, data: bytes) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    reply = request(
        parley.port, "POST", f"/api/attachments?name={quote(name)}", token=TOKEN, body=data,
        headers={"Content-Type": "application/octet-stream"},
    )  # fmt: skip
    elapsed = (time.perf_counter() - started) * 1000
    assert reply.status == 201, reply.body
    return elapsed, reply.json()


def upload_then(parley: ParleyProcess, files: dict[str, Any], done: threading.Event) -> None:
    upload(parley, "big.txt", files["big.txt (20 MB)"][1])
    done.set()


def main(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        pdf = make_pdf(
            Path(scratch) / "r.pdf", [f"Page {i} of the report " * 20 for i in range(40)]
        )
        files = {
            "notes.md (1 MB)": ("notes.md", b"# Notes\n\n" + b"Some words here. " * 61_680),
            "big.txt (20 MB)": ("big.txt", b"x" * (20 * 1024 * 1024 - 1)),
            "photo.png (10 MB)": ("photo.png", PNG),
            "report.pdf (40 pages)": ("report.pdf", pdf.read_bytes()),
        }
        with processes() as (upstream, parley):
            for label, (name, data) in files.items():
                times = [upload(parley, name, data)[0] for _ in range(rounds)]
                show(f"upload {label}, ms", summary(times))

            sends, rss = [], []
            for _ in range(rounds):
                _, image = upload(parley, "photo.png", files["photo.png (10 MB)"][1])
                upstream.script(tokens=1)
                cid = parley.new_conversation()
                before = len(upstream.records())
                started = time.perf_counter()
                stream = SSEStream(
                    parley.port, f"/api/conversations/{cid}/messages",
                    {"content": "what is it?", "attachments": [image["id"]]}, TOKEN,
                )  # fmt: skip
                while len(upstream.records()) == before:
                    time.sleep(0.001)
                sends.append((time.perf_counter() - started) * 1000)
                stream.read_all()
                rss.append(parley.rss_mb())
            show("send with a 10 MB image: POST to the upstream's request, ms", summary(sends))
            show("server resident memory after each, MB", summary(rss))

            gaps = []
            for _ in range(rounds):
                upstream.script(tokens=400, rate=100)
                cid = parley.new_conversation()
                stream = parley.stream(cid, "stream while a file uploads")
                assert stream.first  # streaming now
                done = threading.Event()
                threading.Thread(target=upload_then, args=(parley, files, done)).start()
                last, longest = time.perf_counter(), 0.0
                for _event in stream.iter_events():
                    now = time.perf_counter()
                    if not done.is_set():
                        longest = max(longest, now - last)
                    last = now
                done.wait(60)
                gaps.append(longest * 1000)
            show("longest gap between tokens (100 tok/s) during a 20 MB upload, ms", summary(gaps))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
