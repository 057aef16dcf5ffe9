"""A download's child process: `python -m server.models.hub.fetch '<job JSON>'`.

It fetches one file of one pinned commit into its `.part` file, appending to the bytes
already there (a Range request), with huggingface_hub's own HEAD (`get_hf_file_metadata`:
size, the redirect to the file's storage) and GET (`http_get`, which also retries a dropped
connection from where it stopped). huggingface_hub's `hf_hub_download` cannot be used for
this: since 2.x it writes to a `.incomplete` file unique to each call and deletes it on any
error, so nothing resumes after a kill. The parent kills this process to pause, cancel or
shut down: a kill stops the transfer at once, and the bytes on disk are the resume point.

It prints one JSON line at the end: {"ok": true} or {"code": ..., "message": ...}."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any, TypedDict

from server.errors import FetchError

# A child that imports the server's modules pays for them: only names.py, limits.py,
# session.py and (for a file served from Xet only) xet.py are imported here, all small.
from server.limits import HubLimits


class Job(TypedDict):
    endpoint: str | None
    repo: str
    revision: str
    file: str
    part: str
    size: int
    parent: int


def _die_with(parent: int) -> bool:
    """Linux: the kernel kills this process when Parley ends, even by kill -9."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    return os.getppid() == parent


def fetch(job: Job, limits: HubLimits) -> None:
    from huggingface_hub import constants, get_hf_file_metadata, hf_hub_url
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils._headers import build_hf_headers

    from server.models.hub.session import use_download_session

    use_download_session(limits)
    # Smaller writes than the default 10 MiB: finer progress, less lost by a kill.
    constants.DOWNLOAD_CHUNK_SIZE = limits.chunk_bytes
    endpoint = job["endpoint"]
    url = hf_hub_url(job["repo"], job["file"], revision=job["revision"], endpoint=endpoint)
    meta = get_hf_file_metadata(url, timeout=limits.connect_timeout, endpoint=endpoint)
    if meta.size is not None and meta.size != job["size"]:
        raise FetchError(
            "changed",
            f"the hub now gives {job['file']} as {meta.size:,} bytes, not {job['size']:,}",
        )
    part = Path(job["part"])
    if job["size"] > constants.MAX_HTTP_DOWNLOAD_SIZE:
        # huggingface_hub's HTTP download refuses a file this large: the hub serves it
        # from Xet storage only.
        from server.models.hub.xet import fetch_from_xet

        fetch_from_xet(meta, part, job["file"], job["size"], endpoint)
        return
    location = meta.location or url
    # The token goes to the hub only, never to the storage it redirects to.
    same_host = endpoint is None or location.startswith(endpoint.rstrip("/") + "/")
    headers = build_hf_headers(library_name="parley") if same_host else {}
    with part.open("ab") as file:
        done = file.tell()
        if done > job["size"]:
            file.truncate(0)
            done = 0
        http_get(location, file, resume_size=done, headers=headers, expected_size=job["size"])


def classify(exc: BaseException) -> FetchError:
    import httpx2
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    if isinstance(exc, FetchError):
        return exc
    if isinstance(exc, GatedRepoError):
        return FetchError(
            "gated",
            "the repository is gated: accept its terms on the hub and set a token (HF_TOKEN)",
        )
    if isinstance(exc, (RepositoryNotFoundError, RemoteEntryNotFoundError, RevisionNotFoundError)):
        return FetchError("not_found", "the hub has no such file any more (404)")
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code
        if status == 404:
            return FetchError("not_found", "the hub has no such file any more (404)")
        if status in (401, 403):
            return FetchError(
                "gated",
                f"the hub refused the file ({status}): it may be "
                "gated or private; set a token (HF_TOKEN)",
            )
        return FetchError("hub_error", f"the hub failed the download ({status})")
    if isinstance(exc, httpx2.TransportError):
        return FetchError("connection_lost", f"the connection to the hub was lost ({exc})")
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return FetchError("disk_full", "the disk is full")
    if isinstance(exc, OSError) and "Consistency check failed" in str(exc):
        return FetchError("connection_lost", "the hub sent fewer bytes than the file holds")
    if isinstance(exc, OSError):
        return FetchError("disk_error", f"cannot write the file: {exc.strerror or exc}")
    return FetchError("failed", f"the download failed: {type(exc).__name__}: {exc}")


def main(argv: list[str]) -> int:
    job: Job = json.loads(argv[1])
    if not _die_with(job["parent"]):
        return 0
    try:
        fetch(job, HubLimits())
        answer: dict[str, Any] = {"ok": True}
    except Exception as exc:
        error = classify(exc)
        answer = {"code": error.code, "message": error.message}
    sys.stdout.write(json.dumps(answer) + "\n")
    sys.stdout.flush()
    return 0 if answer.get("ok") else 3


if __name__ == "__main__":
    sys.exit(main(sys.argv))
