"""The JSON of getting a model: the GGUF files already on disk
(server/routes/found_models.py) and Hugging Face's catalog and downloads
(server/routes/hub.py)."""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict

from server.types import FitJSON

# -- models already on disk (GET /api/models/found: server/routes/found_models.py) -------------


class FoundPlaceJSON(TypedDict):
    source: str  # "lmstudio" | "ollama" | "hf_cache" | "folder"
    place: str  # "publisher/repo", "llama3.2:3b", "owner/repo", or the folder
    path: str


class FoundModelJSON(TypedDict):
    name: str
    path: str  # the one to add: a readable path rather than an Ollama blob's, if any
    found_in: list[FoundPlaceJSON]
    size_bytes: int
    parts: int
    quantization: str | None
    architecture: str | None
    context_length: int | None
    model: str | None  # the Parley model that already is this file


class ModelFolderJSON(TypedDict):
    path: str
    exists: bool


# -- Hugging Face: the catalog and downloads (server/models/hub/, server/routes/hub.py) --------


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
    fit: NotRequired[FitJSON]  # from its size alone (its header is not read before download)


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
