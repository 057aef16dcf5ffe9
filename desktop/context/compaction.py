""" "Compact now": the chat's earlier messages summarised on the user's word,
streamed like a turn. Stop hangs up, and the server then saves nothing: the chat stays as it
was. One at a time per window; the server refuses it (409) while a reply of the chat streams,
and the window does not offer it then."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QWidget

from desktop.client.context import CompactionStream
from desktop.client.events import ReplyCompaction
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.replies.notes import summarising_note
from desktop.transcript.surface import TranscriptSurface


class CompactNow(Controller):
    running_changed = Signal()  # began or ended
    compacted = Signal(str)  # conversation id: a summary now stands for earlier messages
    failed = Signal(str)  # for the user

    def __init__(self, context: Context, transcript: TranscriptSurface, parent: QWidget) -> None:
        super().__init__(context, parent)
        self._transcript = transcript
        self.conversation_id: str | None = None  # the chat being compacted
        self._stream: CompactionStream | None = None
        self._stopped = False
        self.note = ""  # what is said while it runs: how far it is

    @property
    def running(self) -> bool:
        return self.conversation_id is not None

    def start(self, conversation_id: str, model: str | None) -> None:
        if self.running:
            return
        self.conversation_id = conversation_id
        self._stopped = False
        self.running_changed.emit()
        self._context.tasks.spawn(self._run(conversation_id, model))

    async def stop(self) -> None:
        """Hang up: the server stops the summary and saves nothing."""
        self._stopped = True
        if self._stream is not None:
            await self._stream.aclose()

    async def _run(self, conversation_id: str, model: str | None) -> None:
        try:
            await self._follow(conversation_id, model)
        except ClientError as exc:
            self.failed.emit(f"The earlier messages could not be summarised: {exc}")
        finally:
            self._stream = None
            self.conversation_id = None
            self.note = ""
            self.running_changed.emit()

    async def _follow(self, conversation_id: str, model: str | None) -> None:
        stream = await self._context.require_client().context.compact(conversation_id, model)
        self._stream = stream
        if self._stopped:  # Stop came while it was being asked for
            await stream.aclose()
            return
        async for event in stream.events():
            if not isinstance(event, ReplyCompaction):
                if event.status == "error":
                    self.failed.emit(f"The earlier messages could not be summarised: {event.error}")
                continue
            state, summary = event.compaction["state"], event.compaction.get("summary")
            if state == "running":
                self.note = summarising_note(event.compaction)
                self.running_changed.emit()
            elif state == "done" and summary is not None:
                if conversation_id == self._context.current_id:
                    self._transcript.add_summary(summary)
                self.compacted.emit(conversation_id)
            elif state == "failed":
                self.failed.emit("The earlier messages could not be summarised.")
