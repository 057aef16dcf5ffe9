"""The wire of projects: chats grouped with their own instructions and library folders."""

from __future__ import annotations

from typing import Literal, TypedDict


class ProjectJSON(TypedDict):
    """A project (`GET /api/projects`). Its chats are the conversations whose `project_id`
    is its id."""

    id: str
    name: str
    instructions: str  # added to the system prompt of each of its chats ('' : none)
    # The library folders its chats' "Use my documents" searches (absolute paths, each one
    # of the library's folders); empty: the whole library.
    folders: list[str]
    chats: int  # how many conversations it holds
    created_at: float
    updated_at: float


class ProjectListJSON(TypedDict):
    projects: list[ProjectJSON]


# What deleting a project does to its chats: `refuse` while it has any (the default),
# `move` them out of every project, or `delete` them with it.
ProjectChats = Literal["refuse", "move", "delete"]
