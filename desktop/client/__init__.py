"""The only way the desktop talks to the server: an async HTTP client over loopback.

Stop is a hang-up: `ReplyStream.aclose()` closes the HTTP response before its body ends,
which closes the socket; the server notices within milliseconds, stops the generation, saves
the partial reply and frees the model. Nothing else is needed, and nothing else is done.

Answers become the wire types of `server.types` here, once, after a check of their shape.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import BinaryIO, TypeVar
from urllib.parse import quote, urlencode

import httpx

from desktop.client.answers import (
    CONVERSATION_KEYS,
    DECISION_KEYS,
    MESSAGE_KEYS,
    OVERDUE_ANSWER_KEYS,
    STEP_KEYS,
    error_from,
    shaped,
)
from desktop.client.attachments import AttachmentsApi
from desktop.client.context import ContextApi
from desktop.client.events import (
    OverdueAction,
    ReplyApproval,
    ReplyCitation,
    ReplyCompaction,
    ReplyEnd,
    ReplyEvent,
    ReplyOverdue,
    ReplyQuestion,
    ReplySaveProblem,
    ReplyStep,
    ReplyText,
    has_steps,
)
from desktop.client.found import FoundApi
from desktop.client.hub import HubApi
from desktop.client.memory import MemoryApi
from desktop.client.models import ModelsApi
from desktop.client.paths import segment
from desktop.client.projects import ProjectsApi
from desktop.client.prompts import PromptsApi
from desktop.client.questions import QuestionsApi
from desktop.client.resources import ResourcesApi
from desktop.client.status_updates import status_updates
from desktop.client.stream import ReplyStream, open_stream
from desktop.client.tool_servers import ToolServersApi
from desktop.client.tool_settings import ToolSettingsApi
from desktop.errors import AlreadyHereError, ClientError
from server.types import (
    NEW_MESSAGE_KINDS,
    BackendCheckJSON,
    ConversationJSON,
    ConversationListJSON,
    Decision,
    FoundServerJSON,
    MessageJSON,
    Remember,
    StatusJSON,
    ToolPartJSON,
    TurnKind,
)
from server.types.chunks import DecisionJSON
from server.types.library import FolderJSON, LibraryJSON, SourceJSON
from server.types.tools import ToolServerJSON, ToolsJSON

T = TypeVar("T")


__all__ = [
    "OverdueAction",
    "ParleyClient",
    "ReplyApproval",
    "ReplyCitation",
    "ReplyCompaction",
    "ReplyEnd",
    "ReplyEvent",
    "ReplyOverdue",
    "ReplyQuestion",
    "ReplySaveProblem",
    "ReplyStep",
    "ReplyStream",
    "ReplyText",
    "TurnKind",
    "has_steps",
]


REPLY_PACE_MS = 16  # the most often a reply's stream carries text (about a frame)


class ParleyClient:
    """The server's API for the window: conversations, status, and replies as streams."""

    def __init__(self, base_url: str, token: str) -> None:
        self.base_url = base_url
        self._http = httpx.AsyncClient(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"},
            # Streaming reads may be silent for a long prefill, and the settled-message
            # long-poll waits for a settle: no read timeout there.
            timeout=httpx.Timeout(10.0, read=None),
            trust_env=False,  # loopback: never through a proxy
        )
        self.models = ModelsApi(self._call)  # the models: list, add, configure, default
        self.hub = HubApi(self._call)  # Hugging Face: the catalog and downloads
        self.found = FoundApi(self._call)  # models already on this disk
        self.tool_servers = ToolServersApi(self._call)  # other apps' MCP servers
        self.tool_settings = ToolSettingsApi(self._call)  # grants, effects, the guard
        self.context = ContextApi(self._call, self._http)  # the model's view
        self.attachments = AttachmentsApi(self._http)  # files sent with a message
        self.questions = QuestionsApi(self._call)  # MCP servers' questions to the user
        self.resources = ResourcesApi(self._call)  # MCP servers' resources and results' links
        self.prompts = PromptsApi(self._call)  # MCP servers' prompts: slash commands
        self.projects = ProjectsApi(self._call)  # projects, and chats made and listed in them
        self.memory = MemoryApi(self._call)  # what the assistant remembers, a file per scope

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _call(self, method: str, path: str, body: object = None) -> object:
        try:
            response = await self._http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach Parley's server: {exc}") from exc
        if response.status_code >= 400:
            raise error_from(response.status_code, response.content)
        if not response.content:
            return None
        try:
            result: object = response.json()
        except ValueError as exc:
            raise ClientError("the server's answer was not JSON") from exc
        return result

    async def _object(self, kind: type[T], keys: tuple[str, ...], method: str, path: str,
                      body: object = None) -> T:  # fmt: skip
        return shaped(kind, keys, await self._call(method, path, body))

    # -- status and conversations ------------------------------------------------------

    async def status(self) -> StatusJSON:
        return await self._object(
            StatusJSON, ("models", "default_model", "active_turns"), "GET", "/api/status"
        )

    def status_updates(self) -> AsyncIterator[StatusJSON]:
        """The status now, then again at each change (one read that stays open)."""
        return status_updates(self._http)

    async def conversations(
        self, query: str | None = None, limit: int | None = None
    ) -> list[ConversationJSON]:
        """Every conversation, most recently active first (the first `limit`), or a search's."""
        path = "/api/conversations"
        if query:
            path += "?q=" + quote(query, safe="")
        elif limit is not None:
            path += f"?limit={limit}"
        found = await self._object(ConversationListJSON, ("conversations",), "GET", path)
        return found["conversations"]

    async def create_conversation(
        self,
        model: str | None = None,
        system: str | None = None,
        tools: bool = True,
        documents: bool = False,
        project_id: str | None = None,
    ) -> ConversationJSON:
        """A new chat, in `project_id` (None: outside every project): made in it at once, so
        its first turn already has the project's instructions and documents."""
        body: dict[str, str | bool] = {}
        if project_id:
            body["project_id"] = project_id
        if model:
            body["model"] = model
        if system:
            body["system"] = system
        if not tools:
            body["tools"] = False
        if documents:
            body["documents"] = True
        return await self._object(
            ConversationJSON, CONVERSATION_KEYS, "POST", "/api/conversations", body
        )

    async def conversation(
        self, conversation_id: str, *, limit: int | None = None, before: str | None = None
    ) -> ConversationJSON:
        """The conversation with the messages of its selected branch: all of them, or the
        newest `limit` (before the message `before`); `earlier` counts those before."""
        path = f"/api/conversations/{segment(conversation_id)}"
        query = {key: str(value) for key, value in (("limit", limit), ("before", before)) if value}
        if query:
            path += "?" + urlencode(query)
        return await self._object(ConversationJSON, (*CONVERSATION_KEYS, "messages"), "GET", path)

    async def rename(self, conversation_id: str, title: str) -> ConversationJSON:
        path = f"/api/conversations/{segment(conversation_id)}"
        return await self._object(
            ConversationJSON, CONVERSATION_KEYS, "PATCH", path, {"title": title}
        )

    async def set_model(self, conversation_id: str, model: str) -> ConversationJSON:
        """The model the conversation's next replies use."""
        path = f"/api/conversations/{segment(conversation_id)}"
        return await self._object(
            ConversationJSON, CONVERSATION_KEYS, "PATCH", path, {"model": model}
        )

    async def set_switch(
        self, conversation_id: str, switch: str, enabled: bool
    ) -> ConversationJSON:
        """A per-chat switch of the next replies: "tools" (the model may call tools) or
        "documents" (passages of the Library go into the prompt)."""
        path = f"/api/conversations/{segment(conversation_id)}"
        body = {switch: enabled}
        return await self._object(ConversationJSON, CONVERSATION_KEYS, "PATCH", path, body)

    async def select(
        self, conversation_id: str, message_id: str, *, limit: int | None = None
    ) -> ConversationJSON:
        """Show the branch through this version of a message; the conversation as shown
        (its newest `limit` messages)."""
        path = f"/api/conversations/{segment(conversation_id)}/select"
        if limit:
            path += f"?limit={limit}"
        body = {"message_id": message_id}
        return await self._object(
            ConversationJSON, (*CONVERSATION_KEYS, "messages"), "POST", path, body
        )

    async def update(self, conversation_id: str, fields: dict[str, object]) -> ConversationJSON:
        """Change the chat's settings (`system`, `params`, `model`...; the server names a bad
        field in the ClientError)."""
        path = f"/api/conversations/{segment(conversation_id)}"
        return await self._object(ConversationJSON, CONVERSATION_KEYS, "PATCH", path, fields)

    async def export_to(self, conversation_id: str | None, kind: str, file: BinaryIO) -> int:
        """Write an export into `file` as it comes: one chat (`kind` "json" or "md") or, for
        None, every chat (JSON). Returns the bytes written."""
        if conversation_id is None:
            path = "/api/export"
        else:
            path = f"/api/conversations/{segment(conversation_id)}/export?format={kind}"
        written = 0
        try:
            async with self._http.stream("GET", path) as response:
                if response.status_code >= 400:
                    raise error_from(response.status_code, await response.aread())
                async for chunk in response.aiter_bytes():
                    file.write(chunk)
                    written += len(chunk)
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach Parley's server: {exc}") from exc
        return written

    async def import_history(self, raw: bytes, duplicates: str = "ask") -> dict[str, object]:
        """Import Parley's or ChatGPT's export (all or nothing: ClientError says where the
        file is wrong). `duplicates`: what to do with chats already here ("skip", "copy", or
        "ask": AlreadyHereError says how many, and nothing is imported). Returns {source,
        conversations, messages, skipped, already_here}."""
        try:
            response = await self._http.post(
                f"/api/import?{urlencode({'duplicates': duplicates})}",
                content=raw,
                headers={"Content-Type": "application/json"},
            )
        except httpx.HTTPError as exc:
            raise ClientError(f"cannot reach Parley's server: {exc}") from exc
        if response.status_code >= 400:
            error = error_from(response.status_code, response.content)
            if error.code == "already_here":
                counts = shaped(dict, ("already_here", "conversations"), response.json())
                here, total = counts["already_here"], counts["conversations"]
                if isinstance(here, int) and isinstance(total, int):
                    raise AlreadyHereError(error.message, here, total)
            raise error
        return shaped(dict, ("source", "conversations", "messages"), response.json())

    async def delete(self, conversation_id: str) -> None:
        await self._call("DELETE", f"/api/conversations/{segment(conversation_id)}")

    async def check_backend(self, base_url: str, api_key: str) -> BackendCheckJSON:
        """Whether an OpenAI-compatible backend answers (and takes the key), and its models;
        the server asks it (bounded), nothing is stored."""
        body = {"base_url": base_url, "api_key": api_key} if api_key else {"base_url": base_url}
        return await self._object(
            BackendCheckJSON, ("reachable",), "POST", "/api/backends/check", body
        )

    # -- the library (the user's documents) ---------------------------------------------------

    async def library(self) -> LibraryJSON:
        """The library's folders (counts, skipped files) and the indexing's progress."""
        return await self._object(LibraryJSON, ("folders", "progress"), "GET", "/api/library")

    async def add_library_folder(self, path: str, *, confirm: bool = False) -> FolderJSON:
        """Add a folder (indexed in the background; ClientError says why not: its code is
        "sensitive_folder" for a folder that holds secrets, added only with `confirm`)."""
        body = {"path": path, "confirm": confirm}
        return await self._object(FolderJSON, ("id", "path"), "POST", "/api/library/folders", body)

    async def library_source(self, path: str, lines: list[int] | None) -> SourceJSON:
        """A cited file's lines as read now, if a folder of the library holds it."""
        query: dict[str, str | int] = {"path": path}
        if lines is not None:
            query.update(first=lines[0], last=lines[1])
        found = await self._call("GET", "/api/library/source?" + urlencode(query))
        return shaped(SourceJSON, ("path", "in_library", "lines", "reason"), found)

    async def remove_library_folder(self, folder_id: str) -> None:
        await self._call("DELETE", f"/api/library/folders/{segment(folder_id)}")

    # -- tools (MCP servers) -----------------------------------------------------------------

    async def tools(self) -> ToolsJSON:
        """The MCP configuration, each server's state, tools and last stderr lines."""
        return await self._object(ToolsJSON, ("config_path", "servers"), "GET", "/api/tools")

    async def put_tool_server(self, name: str, config: dict[str, object]) -> ToolServerJSON:
        """Add or change a server (the server checks the entry: ClientError names the field)."""
        path = f"/api/tools/servers/{segment(name)}"
        return await self._object(ToolServerJSON, ("name", "state"), "PUT", path, config)

    async def remove_tool_server(self, name: str) -> None:
        await self._call("DELETE", f"/api/tools/servers/{segment(name)}")

    async def set_tool_trust(self, server: str, tool: str, trust: str | None) -> ToolServerJSON:
        """One tool's trust ("ask", "chat", "allow", "never"; None: its server's), kept in
        the MCP configuration; used from the next call on."""
        path = f"/api/tools/servers/{segment(server)}/tools/{segment(tool)}"
        return await self._object(ToolServerJSON, ("name", "state"), "PUT", path, {"trust": trust})

    async def decide_tool_call(
        self,
        conversation_id: str,
        call_id: str,
        decision: Decision,
        remember: Remember = "once",
        under: tuple[str, str] | None = None,
    ) -> DecisionJSON:
        """The user's answer to a call awaiting approval (a ReplyApproval): "allow" or
        "deny", once or (allow) for the rest of this chat: the tool, its whole server, or
        with `under` = (argument, folder) its calls whose argument lies in that folder.
        Returns the step as it is now. ClientError with status 409 when the call no longer
        waits (decided, or its turn ended: nothing runs then), 404 for an unknown call."""
        path = f"/api/conversations/{segment(conversation_id)}/tool-calls/{segment(call_id)}"
        body: dict[str, str] = {"decision": decision, "remember": remember}
        if under is not None:
            body.update(argument=under[0], under=under[1])
        return await self._object(DecisionJSON, DECISION_KEYS, "POST", path, body)

    async def answer_overdue(
        self, conversation_id: str, call_id: str, action: OverdueAction
    ) -> ToolPartJSON:
        """The user's answer on a call that has run for its timeout (a ReplyOverdue): "wait"
        for it (asked again a timeout later) or "stop" it (its step ends as an error the
        model reads; the turn goes on). Returns the step as it is now. ClientError with
        status 409 when the call is no longer asked about (it ended, or was answered)."""
        conversation, call = segment(conversation_id), segment(call_id)
        path = f"/api/conversations/{conversation}/tool-calls/{call}/overdue"
        answer = await self._object(dict, OVERDUE_ANSWER_KEYS, "POST", path, {"action": action})
        return shaped(ToolPartJSON, STEP_KEYS, answer["step"])

    async def detect_local_servers(self) -> list[FoundServerJSON]:
        """Ollama or LM Studio running here now, with their models (offered, never added)."""
        found = await self._call("GET", "/api/backends/detect")
        servers = found.get("found") if isinstance(found, dict) else None
        if not isinstance(servers, list):
            raise ClientError("the server's list of local servers is malformed")
        return [shaped(FoundServerJSON, ("name", "base_url", "models"), s) for s in servers]

    async def settled_message(self, conversation_id: str, message_id: str) -> MessageJSON:
        """The message as stored once its reply has settled (the server waits for that,
        bounded): one request, where a hang-up left no final chunk to read."""
        conversation, message = segment(conversation_id), segment(message_id)
        path = f"/api/conversations/{conversation}/messages/{message}?wait=settled"
        return await self._object(MessageJSON, MESSAGE_KEYS, "GET", path)

    # -- replies ---------------------------------------------------------------------------

    async def send(
        self,
        conversation_id: str,
        content: str,
        model: str | None = None,
        max_tokens: int | None = None,
        attachments: list[str] | None = None,
    ) -> ReplyStream:
        """Send a message (with the files uploaded as `attachments`, by id); returns once
        the server has stored it and the reply has begun."""
        return await self.start_turn(
            conversation_id, "send", None, content, model, max_tokens, attachments
        )

    async def start_turn(
        self,
        conversation_id: str,
        kind: TurnKind,
        target: str | None,
        content: str = "",
        model: str | None = None,
        max_tokens: int | None = None,
        attachments: list[str] | None = None,
    ) -> ReplyStream:
        """A reply: to a new message (`send`), to a new version of the user message `target`
        (`edit`, with `content`), a new version of the reply `target` (`regenerate`), or the
        reply `target` going on (`continue`). Returns once the server has stored what it
        begins with and the reply has begun. `attachments`: the message's files, by id (an
        edit given None keeps the original's). ClientError before anything is stored when
        the server refuses them (attachment_not_found, images_not_supported)."""
        # Text at most once a frame: the window draws no faster, and each event is work on
        # its thread (and the server's) while the model streams.
        body: dict[str, object] = {"pace_ms": REPLY_PACE_MS}
        if kind in NEW_MESSAGE_KINDS:
            body["content"] = content
            if attachments is not None:
                body["attachments"] = attachments
        if model:
            body["model"] = model
        if max_tokens:
            body["max_tokens"] = max_tokens
        path = f"/api/conversations/{segment(conversation_id)}/messages"
        if kind != "send":
            path += f"/{segment(target or '')}/{kind}"
        first, response, lines = await open_stream(self._http, path, body)
        return ReplyStream(first, response, lines)
