"""Building the local backend from settings: the bundled GGUF unless one is named."""

from __future__ import annotations

from pathlib import Path

from server.models.bundled import BUNDLED_MODEL_NAME, BundledModelMissingError, bundled_gguf
from server.models.local import LocalBackend, LocalModelConfig
from server.settings import LocalSettings


def local_backend(settings: LocalSettings) -> LocalBackend:
    """A LocalBackend; if its file is missing it reports state "error" with the reason."""
    unavailable = None
    if settings.gguf is not None:
        path = settings.gguf
        name = path.stem
        if not path.is_file():
            unavailable = f"no GGUF file at {path}"
    else:
        name = BUNDLED_MODEL_NAME
        try:
            path = bundled_gguf()
        except BundledModelMissingError as exc:
            path, unavailable = Path("missing.gguf"), str(exc)
    config = LocalModelConfig(
        path=path,
        name=name,
        n_ctx=settings.n_ctx,
        n_threads=settings.n_threads,
        n_threads_batch=settings.n_threads_batch,
    )
    return LocalBackend(config, unavailable=unavailable)
