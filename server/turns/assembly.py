"""A stored conversation's turn put together from what a send, an edit, a regenerate or a
continue asks (a TurnRequest): the model, the new message with its files, the system message
with the project's instructions and the saved memory, the admission check, the documents, the
tools, sub-agents and the image reader; then its run is started (server/turns/manager.py).

Everything that can refuse the turn (an unknown conversation or model, images for a model
that takes none, a prompt its context cannot hold, a reply still streaming) refuses it before
anything is written. The route only parses the request and streams the run
(server/routes/conversations.py); the context meter builds the next turn's tools the same way
(server/routes/context.py).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from server.agent import prompt
from server.agent.branch import with_files
from server.agent.delegate import Delegation
from server.agent.toolbox import CombinedToolBox, ToolBox
from server.attachments.images import with_images
from server.attachments.service import Attachments
from server.errors import BadRequestError, NotFoundError
from server.library.service import Library
from server.library.tool import DocumentsTool, PromptDocuments, SourceNumbers
from server.memory.prompt import memory_block
from server.memory.tool import remember_tool
from server.models.base import ChatRequest
from server.models.registry import ModelEntry, ModelRegistry
from server.settings import Settings
from server.storage.projects import ProjectContext, system_with
from server.storage.store import Store, TurnStart
from server.tools.manager import ToolManager
from server.turns.manager import RunManager
from server.turns.run import Run
from server.turns.setup import ImageReader, TurnSetup
from server.turns.sinks import ConversationTurn
from server.types import ChatMessage, ConversationJSON


@dataclass(frozen=True)
class TurnRequest:
    """What a turn of a stored conversation is asked to be (the HTTP body, parsed)."""

    conversation_id: str
    start: TurnStart
    model: str | None = None  # a model's name; None: the conversation's, else the default
    max_tokens: int | None = None  # this reply's own limit; None: the conversation's


@dataclass(frozen=True)
class TurnAssembly:
    """The parts a conversation's turns are made of, and how a turn is made of them. Built
    once with the app (server/app.py)."""

    settings: Settings
    store: Store
    models: ModelRegistry
    runs: RunManager
    tools: ToolManager  # the MCP servers the user configured
    library: Library  # the user's documents
    attachments: Attachments  # the files messages carry

    async def start(self, request: TurnRequest) -> tuple[Run, ConversationTurn]:
        """Assemble the turn and start its run; return once the turn is open (both its
        messages written). Raises NotFoundError (the conversation, the model, a message),
        UnavailableError (no model, shutting down), BadRequestError (images the model
        cannot take), PromptTooLongError (admission), ConflictError (a reply streams), and
        what opening raises; then nothing was written."""
        cid = request.conversation_id
        limits = self.settings.limits
        # Its own fields only (the model to use): the history is read once, by opening the turn.
        conversation = await self.store.find_conversation(cid)
        if conversation is None:
            raise NotFoundError(f"no conversation with id {cid!r}")
        model = self.models.resolve(request.model, conversation["model"])
        start = request.start
        if start.kind == "continue":
            start = dataclasses.replace(start, continued=model.backend.continuation)
        # What is never dropped to fit the context: the system prompt and the new message.
        # (Its images are refused here if the model takes none, before a local engine starts.)
        kept: list[ChatMessage] = [await self.new_message(start, model)]
        project = await self.store.projects.context_of(cid)
        # Read once for the turn: its system message is the one admitted (server/agent/prompt.py).
        memory = await memory_block(
            self.settings.data_dir, conversation["project_id"], limits.memory
        )
        system = prompt.system_text(system_with(conversation["system"], project), memory)
        if system:
            kept.insert(0, {"role": "system", "content": system})
        await model.backend.admit(ChatRequest(kept, max_tokens=request.max_tokens))

        async def read_memory() -> str | None:
            return memory

        numbers = SourceNumbers()
        folders = project_folders(project)
        documents = (
            PromptDocuments(self.library, numbers, folders)
            if self.uses_documents(conversation)
            else None
        )
        remember = await self.remember(conversation)
        setup = TurnSetup(
            cid,
            start,
            model,
            max_tokens=request.max_tokens,
            tools=self.toolbox(numbers, conversation, folders, remember),
            documents=documents,
            numbers=numbers,
            delegation=Delegation(self.models.resolve, limits.agents),
            images=self.image_reader(model),
            memory=read_memory,
        )
        return await self.runs.start_turn(setup)

    async def new_message(self, start: TurnStart, model: ModelEntry) -> ChatMessage:
        """The new message as the model will see it (its files' text in it), for the context
        check before anything is saved; its images refused here if the model takes none."""
        uploads = self.attachments.uploads
        files = await uploads(start.attachments) if start.attachments else []
        why = model.backend.images_unsupported
        image = next((f for f in files if f["kind"] == "image"), None)
        if why is not None and image is not None:
            raise BadRequestError(
                f"{image['name']!r} was not sent: {why}", code="images_not_supported"
            )
        return with_files(start.content, files)

    def image_reader(self, model: ModelEntry) -> ImageReader:
        """Reads a prompt's images for `model` (their names instead, where it takes none)."""
        refusal = model.backend.images_unsupported
        attachments = self.attachments

        async def read(given: list[ChatMessage]) -> list[ChatMessage]:
            return await with_images(given, attachments, refusal)

        return read

    def uses_documents(self, conversation: ConversationJSON) -> bool:
        """Whether a turn of `conversation` is given the user's documents: its "Use my
        documents" switch, once the library has a folder. The one switch governs both ways
        the model reads them, the passages put in its prompt and the `search_documents`
        tool."""
        return conversation["documents"] and self.library.has_folders

    def toolbox(
        self,
        numbers: SourceNumbers,
        conversation: ConversationJSON,
        folders: tuple[str, ...] = (),
        remember: ToolBox | None = None,
    ) -> ToolBox:
        """What a turn of `conversation` may call, when it offers tools at all (its "Use
        tools" switch and a model that calls tools): the MCP servers' tools (of the servers it
        chose, when it chose), the search of the user's documents when it uses them, and
        `remember` when memory is on for its scope (given by `remember` below)."""
        servers = conversation["tool_servers"]
        boxes: list[ToolBox] = [self.tools.toolbox(None if servers is None else set(servers))]
        if self.uses_documents(conversation):
            # Below its project's folders, when it has some (server/projects/folders.py).
            boxes.append(DocumentsTool(self.library, numbers, folders))
        if remember is not None:
            boxes.append(remember)
        return CombinedToolBox(boxes)

    async def remember(self, conversation: ConversationJSON) -> ToolBox | None:
        """`remember` for a turn of `conversation`, when memory is on for its scope (its file
        exists: server/memory/tool.py)."""
        settings = self.settings
        return await remember_tool(
            settings.data_dir,
            conversation["project_id"],
            conversation["id"],
            settings.limits.memory,
        )


def project_folders(project: ProjectContext | None) -> tuple[str, ...]:
    """The library folders a chat's documents come from: its project's (empty: the whole
    library, for a chat outside every project or a project with no folders of its own)."""
    return project.folders if project is not None else ()
