"""A reply's life in the window: send, stream, stop, show the ending, report what failed.

The window has one ReplyController. While a message is sent and its reply shown, Send is
Stop; it turns back into Send only once the reply's ending is on screen, and nothing is
awaited after that, so the next message never overlaps the end of this one.

Stop is a hang-up (`ReplyStream.aclose()`): the server stops the work and saves the reply.
The ending shown comes from the stream's final chunk; after a hang-up there is none, so the
saved message is read once (the server answers when the reply has settled).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from desktop.client import ParleyClient, ReplyEnd, ReplyStream, ReplyText
from desktop.errors import ClientError
from desktop.widgets.composer import Composer
from desktop.widgets.transcript import Transcript

STOPPING_NOTE = "Stopped — saving…"


class ReplyController(QObject):
    """Drives the composer and the transcript through one reply at a time."""

    conversation_created = Signal(str)  # a message typed in a new chat created this one
    reply_started = Signal(str)  # conversation id: the message is stored, its reply began
    reply_finished = Signal(str)  # message id: the view shows its ending
    error_reported = Signal(str)  # for the user; the reply itself is saved regardless

    def __init__(
        self,
        transcript: Transcript,
        composer: Composer,
        is_shown: Callable[[str], bool],
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.client: ParleyClient | None = None
        self._transcript = transcript
        self._composer = composer
        self._is_shown = is_shown  # whether a conversation is the one on screen
        self._stream: ReplyStream | None = None
        self._busy = False

    @property
    def busy(self) -> bool:
        """From a submit until its ending is shown (or it failed): the server must not be
        restarted under it."""
        return self._busy

    @property
    def streaming_in(self) -> str | None:
        """The conversation whose reply is streaming now, if any."""
        return None if self._stream is None else self._stream.conversation_id

    def begin(self) -> None:
        """A message was submitted: Send becomes Stop at once (a second Enter cannot send
        it twice), before anything is awaited."""
        self._busy = True
        self._composer.set_streaming(True)

    async def send(
        self, conversation_id: str | None, text: str, model: str | None, system: str | None
    ) -> None:
        """Send `text` to the conversation it was typed in (a new one if None) and follow
        the reply until its ending is shown. On failure the text stays in the composer."""
        try:
            await self._send(conversation_id, text, model, system)
        except BaseException:
            self._set_done()
            raise

    async def stop(self) -> None:
        """Stop: mark the reply at once, then hang up; the server saves what it has."""
        stream = self._stream
        if stream is None:
            return
        if self._is_shown(stream.conversation_id):
            self._transcript.end_reply(None, note=STOPPING_NOTE)
        await stream.aclose()

    async def hang_up(self) -> None:
        """Closing: hang up the reply in flight, exactly as Stop does."""
        if self._stream is not None:
            await self._stream.aclose()

    # -- one reply -------------------------------------------------------------------------

    def _set_done(self) -> None:
        self._busy = False
        self._composer.set_streaming(False)

    def _client(self) -> ParleyClient:
        if self.client is None:
            raise ClientError("Parley's server is still starting")
        return self.client

    async def _send(
        self, conversation_id: str | None, text: str, model: str | None, system: str | None
    ) -> None:
        client = self._client()
        if conversation_id is None:
            conversation_id = (await client.create_conversation(model, system))["id"]
            self.conversation_created.emit(conversation_id)
        stream = await client.send(conversation_id, text, model)
        self._stream = stream
        self._composer.clear()
        if self._is_shown(conversation_id):
            self._transcript.begin_reply(text, stream.model)
        self.reply_started.emit(conversation_id)
        end: ReplyEnd | None = None
        received: list[str] = []  # all of it, also what the view no longer took (Stop)
        broken: ClientError | None = None
        try:
            async for event in stream.events():
                if isinstance(event, ReplyText):
                    received.append(event.text)
                    if self._is_shown(conversation_id):
                        self._transcript.add_text(event.text)
                else:
                    # Completed as Stop was pressed: the view may have dropped the last text
                    # it got after Stop; the ending carries it (delivered = stored).
                    end = dataclasses.replace(event, content="".join(received))
        except ClientError as exc:
            broken = exc  # the server may still have saved it: show that, then say so
            if self._is_shown(conversation_id):
                self._transcript.end_reply(None, note="The connection to the server broke")
        finally:
            self._stream = None
        await self._show_ending(stream, end)
        if broken is not None:
            raise broken

    async def _show_ending(self, stream: ReplyStream, end: ReplyEnd | None) -> None:
        conversation_id = stream.conversation_id
        if end is None:  # hung up (Stop, close) or cut: no final chunk, read what was saved
            end = await self._saved(stream)
        if end is not None and end.save_error:
            self.error_reported.emit(f"The reply could not be saved: {end.save_error}")
        if not self._is_shown(conversation_id):
            pass  # another conversation is on screen: this one shows the reply when opened
        elif not self._transcript.showing_reply:
            # Shown again (reopened from the list, redrawn) while it streamed: the view holds
            # what was stored then; show it as it is now.
            await self._show_stored(conversation_id)
        elif end is not None:
            ended = asyncio.Event()
            self._transcript.reply_ended.connect(ended.set)
            try:
                self._transcript.end_reply(end)
                await ended.wait()  # the view may still be laying out a burst
            finally:
                self._transcript.reply_ended.disconnect(ended.set)
        # Its ending is on screen: the next message may go. Nothing is awaited after this.
        self._set_done()
        self.reply_finished.emit(stream.message_id)

    async def _saved(self, stream: ReplyStream) -> ReplyEnd | None:
        """The reply as stored once settled; None if its conversation was deleted."""
        try:
            message = await self._client().settled_message(
                stream.conversation_id, stream.message_id
            )
        except ClientError as exc:
            if exc.status == 404:
                return None
            raise
        return ReplyEnd.from_message(message)

    async def _show_stored(self, conversation_id: str) -> None:
        try:
            conversation = await self._client().conversation(conversation_id)
        except ClientError as exc:
            if exc.status == 404:
                return  # deleted meanwhile: nothing to show
            raise
        if self._is_shown(conversation_id) and not self._transcript.showing_reply:
            self._transcript.show_conversation(conversation["messages"])
