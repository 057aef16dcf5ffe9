"""What File → Export and Import tell the user, as plain text (no widgets): the question an
import asks when chats of its file are already here, the summary it ends with, and the
confirmation of an export. desktop/chats/history_files.py shows them."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

# The answers to the question, as its buttons say them.
COPY = "Import them again as copies"
SKIP = "Skip them"
SHOW_FOLDER = "Show in folder"


def count(number: int, thing: str) -> str:
    return f"{number:,} {thing}" if number == 1 else f"{number:,} {thing}s"


def duplicates_question(already_here: int, conversations: int) -> str:
    verb = "is" if already_here == 1 else "are"
    return f"{already_here:,} of {count(conversations, 'chat')} {verb} already here."


def import_summary(result: Mapping[str, object], duplicates: str, source: str) -> str:
    """ "Imported 12 chats from x.json (3 skipped as already here).", from the server's
    answer and what was chosen for chats already here ("skip" or "copy")."""
    chats = result.get("conversations")
    imported = len(chats) if isinstance(chats, list) else 0
    here = result.get("already_here")
    here = here if isinstance(here, int) else 0
    skipped = result.get("skipped")
    empty = (len(skipped) if isinstance(skipped, list) else 0) - (
        here if duplicates == "skip" else 0
    )
    notes = []
    if here:
        notes.append(f"{here:,} skipped as already here" if duplicates == "skip" else
                     f"{here:,} already here, imported again as copies")  # fmt: skip
    if empty > 0:
        notes.append(f"{empty:,} with no message to keep skipped")
    said = f" ({'; '.join(notes)})" if notes else ""
    return f"Imported {count(imported, 'chat')} from {source}{said}."


def export_confirmation(path: Path, written: int) -> str:
    size = f"{written / 1e6:.1f} MB" if written >= 100_000 else count(written, "byte")
    return f"Exported to {path.name} ({size}), in {path.parent}."
