"""A file the hub serves from its Xet storage only, fetched with Xet's own client (`hf_xet`,
a prebuilt wheel). Runs in the download's child process (fetch.py).

A repository stored in Xet still has its files served over HTTP by the hub (its bridge), and
Parley takes that path whenever it can: it resumes from the bytes on disk. Past
huggingface_hub's HTTP limit (50 GB) the hub serves a file from Xet only. Xet rebuilds the
file from chunks and writes the `.part` from its start, so a paused or failed Xet download
starts again from zero. Every failure here is a FetchError in words.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from server.errors import FetchError
from server.limits import HubLimits

if TYPE_CHECKING:
    from huggingface_hub import HfFileMetadata


def fetch_from_xet(
    meta: HfFileMetadata, part: Path, name: str, size: int, endpoint: str | None
) -> None:
    """Fetch `name` (`size` bytes) into `part` from Xet storage. Raises FetchError."""
    from huggingface_hub import constants
    from huggingface_hub.file_download import xet_get
    from huggingface_hub.utils._headers import build_hf_headers
    from huggingface_hub.utils._runtime import is_xet_available

    only_xet = (
        f"{name} is {size / 1e9:,.0f} GB: the hub serves files over "
        f"{constants.MAX_HTTP_DOWNLOAD_SIZE / 1e9:,.0f} GB only from its Xet storage"
    )
    data = meta.xet_file_data
    if data is None:
        raise FetchError("xet_required", f"{only_xet}, and it gave no Xet address for this one")
    if not is_xet_available():
        why = (
            "Xet is turned off here (HF_HUB_DISABLE_XET)"
            if constants.HF_HUB_DISABLE_XET
            else "Xet's client (the hf_xet package) is not installed with Parley here"
        )
        raise FetchError("xet_required", f"{only_xet}, and {why}")
    # The token goes to the hub only (where Xet tokens are asked for), never elsewhere.
    hub = (endpoint or constants.ENDPOINT).rstrip("/") + "/"
    asks_hub = data.refresh_route.startswith(hub)
    headers = build_hf_headers(library_name="parley") if asks_hub else {}
    try:
        xet_get(
            incomplete_path=part,
            xet_file_data=data,
            headers=headers,
            expected_size=size,
            displayed_filename=name,
        )
    except Exception as exc:  # hf_xet's own errors, the hub's refusals: said in words
        raise FetchError(
            "hub_error", f"the hub's Xet storage failed the download of {name}: {reason(exc)}"
        ) from exc


def reason(exc: BaseException) -> str:
    """The first line of a failure's own words, bounded."""
    lines = str(exc).strip().splitlines()
    first = lines[0] if lines else type(exc).__name__
    most = HubLimits.reason_chars
    return first if len(first) <= most else first[: most - 1] + "…"
