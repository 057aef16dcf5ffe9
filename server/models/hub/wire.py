"""The JSON the hub routes serve (to move to server/types once the desktop reads it)."""

from __future__ import annotations

from typing import Literal, TypedDict


class HubRepoJSON(TypedDict):
    id: str  # owner/name
    downloads: int
    likes: int
    gated: bool  # the hub asks to accept terms (and a token) before a download


class HubFileJSON(TypedDict):
    file: str
    size_bytes: int | None
    sha256: str | None  # None: nothing to verify against; not offered for download
    quantization: str | None  # from the file name: "Q4_K_M"
    split: bool  # one part of a GGUF split in several files (not offered yet)


class HubRepoFilesJSON(TypedDict):
    repo: str
    revision: str  # the commit these files were listed at; a download is pinned to it
    gated: bool
    files: list[HubFileJSON]


# queued -> downloading -> verifying -> completed; paused (by the user, a shutdown, a crash);
# failed (error_code and error say why; `resumable` whether its bytes were kept).
DownloadState = Literal["queued", "downloading", "paused", "verifying", "completed", "failed"]


class DownloadJSON(TypedDict):
    id: str
    repo: str
    file: str
    revision: str
    state: DownloadState
    size_bytes: int
    bytes_done: int  # on disk
    rate_bytes_per_s: float | None
    seconds_left: float | None
    error_code: str | None
    error: str | None
    resumable: bool
    model: str | None  # the model it was added as
    path: str  # where it is (or will be) on disk
