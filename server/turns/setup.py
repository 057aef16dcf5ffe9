"""A stored conversation's turn as its run is started with it: the model, and what the turn
is given (tools, documents, images, memory, sub-agents), put together by the assembly
(server/turns/assembly.py) and started by the RunManager (server/turns/manager.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from server.agent.delegate import Delegation
from server.agent.toolbox import ToolBox
from server.library.tool import PromptDocuments, SourceNumbers
from server.models.registry import ModelEntry
from server.storage.store import TurnStart
from server.types import ChatMessage

# A prompt with its images read for the model (or named, where they cannot be given).
ImageReader = Callable[[list[ChatMessage]], Awaitable[list[ChatMessage]]]
# The part of the system message that gives the chat's saved memory, read as the turn opens
# (server/memory/prompt.py); None: there is none.
MemoryReader = Callable[[], Awaitable[str | None]]


@dataclass(frozen=True)
class TurnSetup:
    """Everything a conversation turn's run starts with."""

    conversation_id: str
    start: TurnStart  # what the turn does: a send, an edit, a regeneration, a continuation
    model: ModelEntry
    max_tokens: int | None = None  # this turn's own limit, else the conversation's
    tools: ToolBox | None = None  # offered when the conversation allows tools
    documents: PromptDocuments | None = None  # passages for the prompt ("Use my documents")
    numbers: SourceNumbers | None = None  # the turn's source numbers, shared by both above
    delegation: Delegation | None = None  # None: the agent hands no sub-tasks on
    images: ImageReader | None = None  # reads the prompt's images for the model
    memory: MemoryReader | None = None  # the chat's saved memory, for its system message
