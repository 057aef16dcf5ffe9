"""Projects in Parley's export: read from the file, checked, and staged with the import.

Parley writes its `projects` before its `conversations` (server/transfer/export.py), each with
the id it had where it was exported; a conversation names its project by that id
(`project_id`). An import never merges into a project of this database: each project of the
file becomes a new one, with an id of its own, staged hidden with the import's chats and shown
(or deleted) with them (server/transfer/staging.py). A project is imported with those of its
chats the import keeps; one no chat of the file names is imported empty.

What a file may hold is bounded (`ProjectLimits`): a name too long is cut (it is a label, and
the project stays recognisable); instructions too long, too many projects or folders, or a
field of the wrong kind are refused with where and why, and nothing is imported. Folders are
kept as written (absolute paths) and never read or added to the library here: a chat's search
keeps to the passages the library has indexed below them, so a folder of another machine
finds nothing rather than reaching anything new.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ijson

from server.errors import BadImport
from server.limits import Limits, ProjectLimits, TransferLimits
from server.storage.transaction import transaction
from server.transfer.parley import is_number
from server.transfer.text import checked_text

SCALARS = ("null", "boolean", "integer", "double", "number", "string")


@dataclass
class Project:
    """A project of the file; `id` is its new id here once staged (None before)."""

    ref: str  # its id in the file
    name: str
    instructions: str
    folders: list[str]
    created_at: float
    updated_at: float
    id: str | None = None
    named: bool = False  # a conversation of the file names it


def read(path: Path, limits: ProjectLimits | None = None) -> dict[str, Project]:
    """The file's projects by their id in the file, checked. Raises BadImport. Read up to
    the start of `conversations` (where Parley has written them); a syntax error is left to
    the main pass, which says where it is."""
    limits = limits or ProjectLimits()
    found: dict[str, Project] = {}
    builder: ijson.ObjectBuilder | None = None
    with path.open("rb") as raw:
        try:
            for prefix, event, value in ijson.parse(raw, use_float=True):
                if prefix == "conversations":
                    break
                if prefix == "projects" and event not in ("start_array", "end_array"):
                    raise BadImport("projects", "must be a list")
                if prefix != "projects.item" and builder is None:
                    continue
                if builder is None:
                    if event in SCALARS:
                        raise BadImport(f"projects[{len(found)}]", "must be an object")
                    builder = ijson.ObjectBuilder()
                builder.event(event, value)
                if prefix == "projects.item" and event in ("end_map", "end_array"):
                    where = f"projects[{len(found)}]"
                    if len(found) == limits.max_imported:
                        raise BadImport("projects", f"holds more than {limits.max_imported:,}")
                    project = checked(builder.value, where, limits)
                    if project.ref in found:
                        raise BadImport(f"{where}.id", "appears twice")
                    found[project.ref] = project
                    builder = None
        except ijson.JSONError:
            pass
    return found


def checked(item: object, where: str, limits: ProjectLimits) -> Project:
    if not isinstance(item, dict):
        raise BadImport(where, "must be an object")
    ref = _string(item, "id", where, TransferLimits.id_chars)
    if not ref:
        raise BadImport(f"{where}.id", "must not be empty")
    # A name is a label: one line, cut to the limit (with a mark that it was), never refused.
    name = " ".join(_string(item, "name", where, None).split()) or "Imported project"
    if len(name) > limits.max_name_chars:
        name = name[: limits.max_name_chars - 1].rstrip() + "…"
    instructions = item.get("instructions") or ""
    if not isinstance(instructions, str):
        raise BadImport(f"{where}.instructions", "must be a string")
    checked_text(instructions, f"{where}.instructions", limits.max_instructions_chars)
    return Project(
        ref=ref,
        name=name,
        instructions=instructions.strip(),
        folders=_folders(item.get("folders"), f"{where}.folders", limits),
        created_at=_time(item, "created_at", where, None),
        updated_at=_time(item, "updated_at", where, _time(item, "created_at", where, None)),
    )


def _string(item: dict[str, Any], key: str, where: str, max_chars: int | None) -> str:
    value = item.get(key)
    if not isinstance(value, str):
        raise BadImport(f"{where}.{key}", "must be a string")
    # The name is cut later, not refused: checked here against the file's bound only.
    return checked_text(value, f"{where}.{key}", max_chars or len(value))


def _folders(value: object, where: str, limits: ProjectLimits) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > limits.max_folders:
        raise BadImport(where, f"must be a list of at most {limits.max_folders} folders")
    folders: list[str] = []
    for index, item in enumerate(value):
        if not isinstance(item, str) or not item.startswith("/"):
            raise BadImport(f"{where}[{index}]", "must be an absolute path")
        folders.append(checked_text(item, f"{where}[{index}]", Limits.max_path_chars))
    return list(dict.fromkeys(folders))


def _time(item: dict[str, Any], key: str, where: str, default: float | None) -> float:
    value = item.get(key)
    if value is None:
        if default is not None:
            return default
        raise BadImport(f"{where}.{key}", "must be a time (seconds since 1970)")
    if not is_number(value):
        raise BadImport(f"{where}.{key}", "must be a time (seconds since 1970)")
    assert isinstance(value, int | float)
    return float(value)


def named(ref: str | None, projects: dict[str, Project], where: str) -> Project | None:
    """The project a conversation of the file names (`project_id`); None: none."""
    if ref is None:
        return None
    project = projects.get(ref)
    if project is None:
        raise BadImport(where, "names no project of the file's 'projects'")
    project.named = True
    return project


# -- run on the database thread, inside a staging transaction ---------------------------


def insert(conn: sqlite3.Connection, project: Project, import_id: str) -> str:
    """The project's row, hidden under `import_id`, with a new id (once: its id after)."""
    if project.id is None:
        project.id = uuid.uuid4().hex
        conn.execute(
            "INSERT INTO projects (id, name, instructions, folders, created_at, updated_at, "
            "import_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                project.id,
                project.name,
                project.instructions,
                json.dumps(project.folders, ensure_ascii=False),
                project.created_at,
                project.updated_at,
                import_id,
            ),
        )
    return project.id


def insert_empty(conn: sqlite3.Connection, import_id: str, projects: list[Project]) -> None:
    """The projects no conversation of the file names, hidden like the rest (in one short
    transaction: at most `ProjectLimits.max_imported` rows)."""
    with transaction(conn):
        for project in projects:
            if not project.named:
                insert(conn, project, import_id)
