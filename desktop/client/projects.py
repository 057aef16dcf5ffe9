"""Projects: chats grouped with their own instructions and library folders
(server/routes/projects.py). Composed into ParleyClient as `client.projects`; calls go
through its one HTTP client. A chat is made in a project, listed and searched within one,
and moved between them here too: those are the project's side of a chat."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from desktop.client.answers import CONVERSATION_KEYS, shaped
from desktop.client.paths import segment
from desktop.errors import ClientError
from server.types import ConversationJSON
from server.types.keys import required_keys
from server.types.projects import ProjectChats, ProjectJSON

Call = Callable[[str, str, object], Awaitable[object]]
PROJECT_KEYS = required_keys(ProjectJSON)
OUTSIDE = "none"  # `?project=` for the chats outside every project


class ProjectsApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def all(self) -> list[ProjectJSON]:
        """Every project, by name, each with how many chats it holds."""
        answer = await self._call("GET", "/api/projects", None)
        found = answer.get("projects") if isinstance(answer, dict) else None
        if not isinstance(found, list):
            raise ClientError("the server's list of projects is malformed")
        return [shaped(ProjectJSON, PROJECT_KEYS, project) for project in found]

    async def create(self, name: str) -> ProjectJSON:
        """A new project (ClientError names a bad name)."""
        answer = await self._call("POST", "/api/projects", {"name": name})
        return shaped(ProjectJSON, PROJECT_KEYS, answer)

    async def update(
        self,
        project_id: str,
        *,
        name: str | None = None,
        instructions: str | None = None,
        folders: list[str] | None = None,
        confirm: bool = False,
    ) -> ProjectJSON:
        """Rename it, set its instructions or its library folders (each given one); every
        field is checked before anything changes. A folder that holds secrets is refused
        (ClientError code "sensitive_folder") unless `confirm`."""
        body: dict[str, object] = {}
        if name is not None:
            body["name"] = name
        if instructions is not None:
            body["instructions"] = instructions
        if folders is not None:
            body["folders"] = folders
            body["confirm"] = confirm
        path = f"/api/projects/{segment(project_id)}"
        return shaped(ProjectJSON, PROJECT_KEYS, await self._call("PATCH", path, body))

    async def delete(self, project_id: str, chats: ProjectChats = "refuse") -> None:
        """Delete it; its chats are refused (ClientError code "project_not_empty" while it
        has any), moved out of every project, or deleted with it."""
        path = f"/api/projects/{segment(project_id)}?{urlencode({'chats': chats})}"
        await self._call("DELETE", path, None)

    async def move_chat(self, conversation_id: str, project_id: str | None) -> ConversationJSON:
        """Move a chat into a project, or out of every project (None)."""
        path = f"/api/conversations/{segment(conversation_id)}/project"
        answer = await self._call("PUT", path, {"project_id": project_id})
        return shaped(ConversationJSON, CONVERSATION_KEYS, answer)

    async def chats(
        self, project_id: str | None, query: str | None = None, limit: int | None = None
    ) -> list[ConversationJSON]:
        """A project's chats (None: those outside every project), most recently active first
        (the first `limit`), or a search's within them."""
        params = {"project": project_id or OUTSIDE}
        if query:
            params["q"] = query
        elif limit is not None:
            params["limit"] = str(limit)
        answer = await self._call("GET", "/api/conversations?" + urlencode(params), None)
        found = answer.get("conversations") if isinstance(answer, dict) else None
        if not isinstance(found, list):
            raise ClientError("the server's list of conversations is malformed")
        return [shaped(ConversationJSON, CONVERSATION_KEYS, chat) for chat in found]
