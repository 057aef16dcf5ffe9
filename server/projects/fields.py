"""A project's fields as a request gives them: read once, checked, bounded by `ProjectLimits`.

A name is one line of text (its white space collapsed); instructions are text of their own
(kept as written, trimmed); folders are absolute paths, checked further by `folders`. Each
problem is a 400 naming the field, and nothing is written.
"""

from __future__ import annotations

from pathlib import Path

from server.errors import BadRequestError
from server.http.jsonbody import JSONObject, check_text, string_list, text_field
from server.limits import Limits, ProjectLimits
from server.storage.projects import InProject
from server.types.projects import ProjectChats

CHATS: tuple[ProjectChats, ...] = ("refuse", "move", "delete")


def name(body: JSONObject, limits: ProjectLimits, *, required: bool) -> str | None:
    """`name`: 1 to `max_name_chars` characters once its white space is collapsed."""
    # Read with room for white space that collapses, but never unbounded.
    raw = text_field(body, "name", max_chars=limits.max_name_chars * 4, required=required)
    if raw is None:
        return None
    collapsed = " ".join(raw.split())
    if not collapsed:
        raise BadRequestError("'name' must not be empty", code="invalid_field")
    if len(collapsed) > limits.max_name_chars:
        raise BadRequestError(
            f"'name' is longer than {limits.max_name_chars} characters", code="invalid_field"
        )
    return collapsed


def instructions(body: JSONObject, limits: ProjectLimits) -> str | None:
    """`instructions`: what the project's chats are told, trimmed ("" or null: none);
    None when the body does not set them."""
    if "instructions" not in body:
        return None
    raw = text_field(body, "instructions", max_chars=limits.max_instructions_chars)
    return (raw or "").strip()


def folders(body: JSONObject, limits: ProjectLimits) -> list[Path] | None:
    """`folders`: absolute paths of library folders (at most `max_folders`; [] or null:
    the whole library); None when the body does not set them."""
    if "folders" not in body:
        return None
    value = body["folders"]
    if value is None:
        return []
    expected = f"a list of at most {limits.max_folders} absolute paths of folders"
    paths = string_list(
        value,
        "folders",
        most=limits.max_folders,
        max_chars=Limits.max_path_chars,
        expected=expected,
    )
    found = [Path(path) for path in dict.fromkeys(paths)]
    if not all(path.is_absolute() for path in found):
        raise BadRequestError(f"'folders' must be {expected}", code="invalid_field")
    return found


def chats(value: str | None) -> ProjectChats:
    """`?chats=` of a DELETE: what becomes of the project's chats (default: refuse)."""
    for choice in CHATS:
        if value == choice:
            return choice
    if value is None:
        return "refuse"
    raise BadRequestError("'chats' must be 'refuse', 'move' or 'delete'", code="invalid_field")


def confirm(body: JSONObject) -> bool:
    """`confirm`: the user was told a folder is sensitive and adds it anyway."""
    value = body.get("confirm", False)
    if not isinstance(value, bool):
        raise BadRequestError("'confirm' must be true or false", code="invalid_field")
    return value


def listed(raw: str | None) -> InProject | None:
    """`?project=` of a listing or a search: `<id>`, one project's chats only; `none`, those
    outside every project; absent, every chat."""
    if raw is None:
        return None
    check_text(raw, "project")
    if not 0 < len(raw) <= ProjectLimits.max_id_chars:
        raise BadRequestError("'project' must be a project's id or 'none'", code="invalid_field")
    return InProject(None if raw == "none" else raw)
