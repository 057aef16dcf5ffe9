"""A Stop that lands while compaction's last summarising call gives its model back saves no
summary: the stop's cancellation reaches compaction only at its next await, and the summary's
write is queued to the database thread before one. The summarising loop is made through the
Spawn function compaction is handed (server/agent/tree.py), so the stop can be placed exactly
there; the end-to-end stops are in test_compaction.py and test_compaction_local.py."""

from __future__ import annotations

import anyio
import anyio.lowlevel

from server.agent.approvals import Approvals, ChatGrants
from server.agent.buffer import ReplyBuffer
from server.agent.compaction import Compactor
from server.agent.delegate import Delegation
from server.agent.toolbox import ToolBox
from server.agent.tree import Node
from server.models.base import ChatRequest, StreamEnd
from server.models.registry import ModelEntry
from server.settings import Limits
from server.types import ChatMessage, SummaryJSON


class Backend:
    context_length = 8192
    images_unsupported = None

    async def count_tokens(self, texts: list[str]) -> tuple[list[int], bool]:
        return [max(1, len(text) // 3) for text in texts], True


class Model:
    name = "m"
    backend = Backend()


class History:
    """A stored turn's history; `saved` is what was written (Store.save_summary queues the
    write before its first await, as this does)."""

    system = None
    summary = None

    def __init__(self, count: int) -> None:
        self.prompt_ids = [f"r{index}" for index in range(count)]
        self.saved: list[str] = []

    async def save_summary(self, through_id: str, content: str) -> SummaryJSON | None:
        self.saved.append(through_id)
        await anyio.lowlevel.checkpoint()
        return {
            "id": "s1", "through_id": through_id, "content": content, "model": "m",
            "created_at": 0.0, "updated_at": 0.0,
        }  # fmt: skip


def test_a_stop_as_the_last_round_gives_its_model_back_saves_no_summary() -> None:
    async def scenario() -> list[str]:
        root = Node.root(
            "run1", ReplyBuffer(100_000, lambda: None), Limits(), Approvals("c1", ChatGrants())
        )
        scope = anyio.CancelScope()

        class SummarisingLoop:
            """The round's loop: its stream finished; the Stop comes in its shielded release."""

            def __init__(
                self, node: Node, model: ModelEntry, delegation: Delegation | None
            ) -> None:
                self.buffer = node.buffer
                self.model = model
                self.in_call = False
                self.stats = None
                self.out_of_steps = False
                node.tree.join(self)

            def halt(self) -> None:
                return None

            async def run(self, request: ChatRequest, toolbox: ToolBox | None) -> StreamEnd | None:
                self.buffer.append("The user's name is Ada.")
                with anyio.CancelScope(shield=True):
                    await anyio.lowlevel.checkpoint()
                    root.tree.stop()
                    scope.cancel()
                return StreamEnd("stop")

        said: list[ChatMessage] = [
            {"role": "user" if n % 2 == 0 else "assistant", "content": f"m{n} " * 50}
            for n in range(6)
        ]
        history = History(len(said))
        with scope:
            compactor = Compactor(root, Model(), SummarisingLoop)  # type: ignore[arg-type]
            await compactor.fit(ChatRequest(said), history, [], context=8192, force=True)
        return history.saved

    assert anyio.run(scenario) == []
