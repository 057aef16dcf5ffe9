"""A long chat is loaded a page at a time, so a 100,000-message chat opens as fast as a short
one: the window asks for its newest `PAGE` messages, and the transcript asks for the page
before them when its list is scrolled to its top (`TranscriptSurface.earlier_wanted`); what
comes is added above (`TranscriptSurface.add_earlier`), unless another chat was opened
meanwhile. A search hit or Find asks for all of them."""

from __future__ import annotations

from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.transcript.surface import TranscriptSurface

PAGE = 1_000  # messages loaded at once (~0.7 MB of JSON: ~15 ms to decode on the GUI thread)


class EarlierMessages(Controller):
    def __init__(self, context: Context, transcript: TranscriptSurface) -> None:
        super().__init__(context, transcript)
        self._transcript = transcript
        self._asked: set[str] = set()  # first ids whose earlier messages are on their way
        transcript.earlier_wanted.connect(self._on_transcript_earlier_wanted)

    def _on_transcript_earlier_wanted(self, first_id: str, everything: bool) -> None:
        conversation_id = self._context.current_id
        if conversation_id is None or first_id in self._asked:
            return
        self._asked.add(first_id)
        self._context.tasks.spawn(self._load(conversation_id, first_id, everything))

    async def _load(self, conversation_id: str, first_id: str, everything: bool) -> None:
        try:
            client = self._context.client
            if client is None:
                return
            try:
                page = await client.conversation(
                    conversation_id, limit=None if everything else PAGE, before=first_id
                )
            except ClientError as exc:
                if exc.status in (400, 404):  # the chat or its branch changed meanwhile
                    return
                raise
            if self._context.current_id == conversation_id:
                self._transcript.add_earlier(
                    first_id, page.get("messages", []), page.get("earlier", 0), everything
                )
        finally:
            self._asked.discard(first_id)
