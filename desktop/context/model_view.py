"""The model's view of the chat on screen, in the window: its context meter, kept up
to date (a chat opened, a reply ended, a summary made, edited or undone, another model or
other tool servers chosen; never on the GUI's thread), the summaries' markers acted on, and
"Compact now". The window makes one, puts its meter in the chat's column, and hands it the
window's parts it listens to."""

from __future__ import annotations

import asyncio

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from desktop.client import ParleyClient
from desktop.context.compaction import CompactNow
from desktop.context.meter import ContextMeter
from desktop.context.summaries import SummaryActions
from desktop.controller import Context
from desktop.errors import ClientError
from desktop.models.model_picker import ModelPicker
from desktop.replies.controller import ReplyController
from desktop.transcript.surface import TranscriptSurface


class ModelView(QObject):
    failed = Signal(str)  # for the user

    def __init__(
        self,
        context: Context,
        reply: ReplyController,
        transcript: TranscriptSurface,
        picker: ModelPicker,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._context = context
        self._reply = reply
        self._picker = picker
        self.meter = ContextMeter(parent)
        self.summaries = SummaryActions(context, transcript, parent)
        self.compaction = CompactNow(context, transcript, parent)
        self._asked = 0  # the newest meter asked for (an older answer is dropped)
        self._measured: str | None = None  # the chat whose figure the meter shows
        self._measuring: asyncio.Task[None] | None = None  # the newest measure, on its way
        transcript.summary_action.connect(self.summaries.act)
        self.summaries.failed.connect(self.failed)
        self.compaction.failed.connect(self.failed)
        for changed in (reply.compacted, self.summaries.changed, self.compaction.compacted):
            changed.connect(self.chat_changed)
        reply.reply_finished.connect(lambda _id: self.refresh())
        reply.busy_changed.connect(self._show_compacting)
        picker.model_chosen.connect(lambda _name: self.refresh())
        self.meter.compact_requested.connect(self.compact_now)
        self.meter.stop_requested.connect(self.stop)
        self.compaction.running_changed.connect(self._show_compacting)

    @property
    def can_compact(self) -> bool:
        """The chat on screen may be compacted now (none is, and it has no reply streaming)."""
        current = self._context.current_id
        return (
            current is not None and not self.compaction.running and not self._reply.busy_in(current)
        )

    @property
    def compacting_here(self) -> bool:
        """The chat on screen is being compacted (the window's Stop, and Esc, end it)."""
        running = self.compaction.conversation_id
        return running is not None and running == self._context.current_id

    def compact_now(self) -> None:
        if self.can_compact and self._context.current_id is not None:
            self.compaction.start(self._context.current_id, self._picker.current())

    def stop(self) -> None:
        """Stop the summary being made (the chat stays as it was)."""
        self._context.tasks.spawn(self.compaction.stop())

    def refresh(self) -> None:
        """Measure the chat on screen again (in the background), with the client there is
        now; with none (the server restarting, the app closing), clear the meter: a measure
        on its way is superseded."""
        self._asked += 1
        if self._measuring is not None:
            self._measuring.cancel()  # its answer would be dropped: its request is closed
        current = self._context.current_id
        client = self._context.client
        self._show_compacting()
        if current is None or client is None:
            self._measured = None
            self.meter.clear()
            return
        if current != self._measured:  # another chat: the figure shown is not this one's
            self._measured = None
            self.meter.show_pending()
        model = self._picker.current()
        self._measuring = self._context.tasks.spawn(
            self._measure(self._asked, client, current, model)
        )

    async def _measure(
        self, asked: int, client: ParleyClient, conversation_id: str, model: str | None
    ) -> None:
        try:
            meter = await client.context.meter(conversation_id, model)
        except ClientError as exc:
            # Superseded, its failure is as moot as its answer would be: a server restart
            # closes the client under it (the note that new backends wait for the reply was
            # left up, replaced by "cannot reach Parley's server"). A 404: a model gone, a
            # chat deleted: no meter, no error.
            if asked == self._asked and exc.status != 404:
                raise
            return
        if asked == self._asked and conversation_id == self._context.current_id:
            self._measured = conversation_id
            self.meter.show_meter(meter)

    def chat_changed(self, conversation_id: str) -> None:
        """Something the model is given of this chat changed: measure it again if shown."""
        if conversation_id == self._context.current_id:
            self.refresh()

    def _show_compacting(self) -> None:
        note = self.compaction.note if self.compacting_here else ""
        self.meter.show_compacting(self.compacting_here, self.can_compact, note)
