"""A project's library folders: each one is, or lies below, a folder of the library, or is
added to the library as its own route adds one (server/routes/library.py): resolved (links
followed), a folder, refused outright where nothing but secrets or devices live, and added
after a warning only when the user confirms (a hidden folder, one that holds secrets). So a
project can never make the library read a place the Library panel would not.

The project keeps the resolved paths; its chats' search reads only passages of files below
them, from the library's index (nothing is read from disk for it).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from server.errors import BadRequestError, ConflictError
from server.library import sensitive
from server.library.reading import under
from server.library.service import Library


async def library_folders(library: Library, paths: list[Path], *, confirmed: bool) -> list[str]:
    """The project's folders, resolved, each in the library's index (added where it is not).
    Raises BadRequestError (not a folder; a place refused), ConflictError
    (`sensitive_folder`, unless `confirmed`), StorageError (the index is unusable). Every
    folder is checked before any is added: a refused one adds none."""
    resolved = [await asyncio.to_thread(_folder, path) for path in paths]
    home = await asyncio.to_thread(Path.home)
    roots = library.indexer.roots
    missing: list[str] = []
    for folder in resolved:
        text = str(folder)
        if any(under(text, root) for root in roots) or text in missing:
            continue  # its files are in the index already (or it is added below)
        refused = sensitive.refusal(folder)
        if refused is not None:
            raise BadRequestError(refused, code="invalid_field")
        warned = sensitive.warning(folder, home)
        if warned is not None and not confirmed:
            raise ConflictError(warned, code="sensitive_folder")
        missing.append(text)
    for text in missing:
        await library.add_folder(text)  # None: added meanwhile, which is as good
    return list(dict.fromkeys(str(folder) for folder in resolved))


def _folder(path: Path) -> Path:
    resolved = path.resolve()
    if not resolved.is_dir():
        raise BadRequestError(f"{path} is not a folder", code="invalid_field")
    return resolved
