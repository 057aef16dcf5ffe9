"""A local Hugging Face Hub: the parts of its HTTP API huggingface_hub 2.4 uses, for
repositories holding GGUF files the tests make. Nothing reaches the internet.

    GET  /api/models?search=&filter=gguf&sort=&limit=     the search
    GET  /api/models/{owner}/{name}[/revision/{rev}]      model info (?blobs=True: sizes, lfs)
    HEAD/GET /{owner}/{name}/resolve/{rev}/{file}          302 to /cdn/... with X-Repo-Commit,
                                                           X-Linked-Etag, X-Linked-Size
    GET  /cdn/{owner}/{name}/{file}                        the bytes; Range -> 206

A repository made with `xet=True` answers as one stored in Xet does: the resolve also gives
the file's Xet hash and, as a `xet-auth` link, where to get a Xet token
(GET /api/models/{owner}/{name}/xet-read-token/{rev}), which names a Xet storage (CAS) on
this hub that has nothing (every /cas/... answer is a 404); the bytes stay served over
HTTP, from another host name (localhost), as the real hub's bridge serves them.

Like the real hub: an unknown repository is 401 RepoNotFound, a gated one lists its files
but answers a download with 401 GatedRepo, a missing file is 404 EntryNotFound. A file may
be served with bytes that do not match its sha256, drop the connection at an offset (every
time: the connection is lost for good), hold at an offset until `release()`, or from an
offset drip one byte every `drip_every` seconds until `release()` (a stalled hub that no
read timeout catches). Each GET
of a file's bytes is recorded (`gets`: its first byte, what it sent), so a test can tell a
resume from a restart."""

from __future__ import annotations

import hashlib
import json
import re
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def tiny_gguf(path: Path, size: int, name: str = "tiny") -> Path:
    """A valid GGUF (no tensors) of exactly `size` bytes, its padding varied by `name`."""
    text = lambda v: struct.pack("<Q", len(v)) + v  # noqa: E731
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + text(b"general.name")
    head += struct.pack("<I", 8) + text(name.encode())
    pattern = hashlib.sha256(name.encode()).digest()
    body = (pattern * (size // len(pattern) + 1))[: size - len(head)]
    path.write_bytes(head + body)
    return path


@dataclass
class HubFile:
    path: Path  # the bytes served
    sha256: str = ""  # what the listing says (the real one unless `wrong_sha`)
    wrong_sha: bool = False
    missing: bool = False  # listed, but its download is a 404
    drop_at: int | None = None
    hold_at: int | None = None
    drip_at: int | None = None
    drip_every: float = 0.1
    held: threading.Event = field(default_factory=threading.Event)
    release_event: threading.Event = field(default_factory=threading.Event)
    # Each GET of the bytes: [its first byte, the bytes it sent so far].
    gets: list[list[int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.sha256:
            return  # given (a huge sparse file is not read)
        real = hashlib.sha256(self.path.read_bytes()).hexdigest()
        self.sha256 = ("f" * 64 if real != "f" * 64 else "0" * 64) if self.wrong_sha else real

    @property
    def size(self) -> int:
        return self.path.stat().st_size


@dataclass
class HubRepo:
    files: dict[str, HubFile]
    gated: bool = False
    downloads: int = 0
    xet: bool = False


class LocalHub:
    def __init__(self) -> None:
        self.repos: dict[str, HubRepo] = {}
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.hub = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.requests: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def add(self, repo: str, files: dict[str, HubFile], **options: Any) -> HubRepo:
        self.repos[repo] = HubRepo(files, **options)
        return self.repos[repo]

    def file(self, repo: str, name: str) -> HubFile:
        return self.repos[repo].files[name]

    def start(self) -> LocalHub:
        self._thread.start()
        return self

    def release(self) -> None:
        for repo in self.repos.values():
            for file in repo.files.values():
                file.release_event.set()

    def stop(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    @property
    def hub(self) -> LocalHub:
        hub: LocalHub = self.server.hub  # type: ignore[attr-defined]
        return hub

    def do_HEAD(self) -> None:
        self._route(head=True)

    def do_GET(self) -> None:
        self._route(head=False)

    def _route(self, head: bool) -> None:
        url = urlsplit(self.path)
        path, query = unquote(url.path), parse_qs(url.query)
        self.hub.requests.append(f"{self.command} {path}")
        if path == "/api/models":
            return self._json(200, self._search(query))
        if m := re.fullmatch(r"/api/models/([^/]+/[^/]+)/xet-read-token/[^/]+", path):
            return self._xet_token(m.group(1))
        if m := re.fullmatch(r"/api/models/([^/]+/[^/]+)(?:/revision/([^/]+))?", path):
            return self._info(m.group(1))
        if m := re.fullmatch(r"/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path):
            return self._resolve(m.group(1), m.group(3))
        if m := re.fullmatch(r"/cdn/([^/]+/[^/]+)/(.+)", path):
            return self._bytes(m.group(1), m.group(2), head)
        return self._error(404, "EntryNotFound", "no such route")

    def _search(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        words = query.get("search", [""])[0].lower()
        found = [
            {
                "id": repo,
                "_id": repo,
                "downloads": r.downloads,
                "likes": 1,
                "gated": "manual" if r.gated else False,
                "tags": ["gguf"],
            }
            for repo, r in self.hub.repos.items()
            if words in repo.lower()
        ]
        return sorted(found, key=lambda r: -int(r["downloads"]))

    def _info(self, repo: str) -> None:
        found = self.hub.repos.get(repo)
        if found is None:
            return self._error(401, "RepoNotFound", "Repository not found")
        siblings = [{"rfilename": "README.md", "size": 10, "blobId": "0" * 40}]
        siblings += [
            {
                "rfilename": name,
                "size": f.size,
                "blobId": "1" * 40,
                "lfs": {"size": f.size, "sha256": f.sha256, "pointerSize": 134},
            }
            for name, f in found.files.items()
        ]
        gated = "manual" if found.gated else False
        self._json(
            200,
            {
                "id": repo,
                "_id": repo,
                "sha": COMMIT,
                "gated": gated,
                "private": False,
                "siblings": siblings,
            },
        )

    def _lookup(self, repo: str, name: str) -> HubFile | None:
        found = self.hub.repos.get(repo)
        if found is None:
            self._error(401, "RepoNotFound", "Repository not found")
            return None
        if found.gated:
            self._error(401, "GatedRepo", "Access to this repository is restricted")
            return None
        file = found.files.get(name)
        if file is None or file.missing:
            self._error(404, "EntryNotFound", f"{name} does not exist")
            return None
        return file

    def _resolve(self, repo: str, name: str) -> None:
        file = self._lookup(repo, name)
        if file is None:
            return
        self.send_response(302)
        storage = self.hub.url
        if self.hub.repos[repo].xet:  # its bridge: another host, as the real hub's
            storage = storage.replace("127.0.0.1", "localhost")
        self.send_header("Location", f"{storage}/cdn/{repo}/{name}?signed=1")
        self.send_header("X-Repo-Commit", COMMIT)
        self.send_header("X-Linked-Etag", f'"{file.sha256}"')
        self.send_header("X-Linked-Size", str(file.size))
        self.send_header("ETag", '"pointer"')
        if self.hub.repos[repo].xet:
            self.send_header("X-Xet-Hash", hashlib.sha256(name.encode()).hexdigest())
            token_url = f"{self.hub.url}/api/models/{repo}/xet-read-token/{COMMIT}"
            self.send_header("Link", f'<{token_url}>; rel="xet-auth"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def _xet_token(self, repo: str) -> None:
        found = self.hub.repos.get(repo)
        if found is None or not found.xet:
            return self._error(404, "EntryNotFound", "not a Xet repository")
        body = json.dumps({"casUrl": f"{self.hub.url}/cas", "exp": 4102444800}).encode()
        self.send_response(200)
        self.send_header("X-Xet-Cas-Url", f"{self.hub.url}/cas")
        self.send_header("X-Xet-Access-Token", "xet-test-token")
        self.send_header("X-Xet-Token-Expiration", "4102444800")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _bytes(self, repo: str, name: str, head: bool) -> None:
        file = self._lookup(repo, name)
        if file is None:
            return
        size, start = file.size, 0
        if m := re.fullmatch(r"bytes=(\d+)-", self.headers.get("Range", "")):
            start = min(int(m.group(1)), size)
        self.send_response(206 if start else 200)
        self.send_header("Content-Length", str(size - start))
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", f'"{file.sha256}"')
        if start:
            self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.end_headers()
        if head:
            return
        sent = [start, 0]
        file.gets.append(sent)
        with file.path.open("rb") as source:
            source.seek(start)
            offset = start
            while offset < size:
                stop = size
                for mark in (file.drop_at, file.hold_at, file.drip_at):
                    if mark is not None and offset < mark:
                        stop = min(stop, mark)
                if file.drop_at is not None and offset >= file.drop_at:
                    self.close_connection = True
                    self.connection.close()  # the connection is lost, every time
                    return
                chunk = source.read(min(256 * 1024, stop - offset))
                try:
                    self.wfile.write(chunk)
                    self.wfile.flush()
                except OSError:
                    return  # the client went away (a kill)
                sent[1] += len(chunk)
                offset += len(chunk)
                if offset == file.hold_at and not file.release_event.is_set():
                    file.held.set()
                    file.release_event.wait(30)
                if offset == file.drip_at and not file.release_event.is_set():
                    file.held.set()
                    while offset < size - 1 and not file.release_event.wait(file.drip_every):
                        try:
                            self.wfile.write(source.read(1))
                            self.wfile.flush()
                        except OSError:
                            return
                        sent[1] += 1
                        offset += 1

    def _json(self, status: int, value: object) -> None:
        body = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, status: int, code: str, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        self.send_response(status)
        self.send_header("X-Error-Code", code)
        self.send_header("X-Error-Message", message)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)
