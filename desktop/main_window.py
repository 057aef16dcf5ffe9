"""The window: sidebar, transcript, composer, model picker. Talks to the server via the client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ClientError, ParleyClient, ReplyStream
from desktop.widgets.composer import Composer
from desktop.widgets.conversation_list import ConversationList
from desktop.widgets.transcript import Transcript

log = logging.getLogger(__name__)

STATUS_POLL_MS = 1000
SETTLE_POLL_S = 0.02


class MainWindow(QMainWindow):
    close_requested = Signal()
    settings_requested = Signal()
    reply_finished = Signal(str)  # message id, once the view shows what the server saved
    conversations_shown = Signal()
    error_shown = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("Parley")
        self.resize(1100, 720)
        self.client: ParleyClient | None = None
        self.current_id: str | None = None
        self.stream: ReplyStream | None = None
        self.tasks: set[asyncio.Task[Any]] = set()
        self.system_prompt: str | None = None
        self._closing = False
        self._shutting_down = False
        self._list_requests = 0
        self._redraw_pending = False  # the theme changed while a reply was on screen
        self._opening = 0  # the latest request to show a conversation wins

        self.sidebar = ConversationList(self)
        self.transcript = Transcript(self)
        self.composer = Composer(self)
        self.banner = QLabel(self)
        self.banner.setObjectName("banner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet("color: #c0392b; padding: 4px;")
        self.banner.hide()
        self.model_picker = QComboBox(self)
        self.model_picker.setObjectName("model-picker")
        self.model_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.model_state = QLabel("starting…", self)
        self.settings_button = QPushButton("Settings", self)

        top = QHBoxLayout()
        top.addWidget(QLabel("Model:", self))
        top.addWidget(self.model_picker)
        top.addWidget(self.model_state, 1)
        top.addWidget(self.settings_button)
        right = QWidget(self)
        column = QVBoxLayout(right)
        column.addLayout(top)
        column.addWidget(self.banner)
        column.addWidget(self.transcript, 1)
        column.addWidget(self.composer)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self.sidebar)
        splitter.addWidget(right)
        splitter.setSizes([280, 820])
        self.setCentralWidget(splitter)

        new_chat = QAction("New chat", self)
        new_chat.setShortcut(QKeySequence("Ctrl+N"))
        new_chat.triggered.connect(self._on_new_chat_triggered)
        rename = QAction("Rename", self)
        rename.setShortcut(QKeySequence("F2"))
        rename.triggered.connect(self.sidebar.start_rename)
        for action in (new_chat, rename):
            self.addAction(action)

        self.sidebar.new_requested.connect(self._on_new_chat_triggered)
        self.sidebar.conversation_selected.connect(self._on_sidebar_conversation_selected)
        self.sidebar.rename_requested.connect(self._on_sidebar_rename_requested)
        self.sidebar.delete_confirmed.connect(self._on_sidebar_delete_confirmed)
        self.sidebar.search_changed.connect(self._on_sidebar_search_changed)
        self.composer.message_submitted.connect(self._on_composer_message_submitted)
        self.transcript.theme_changed.connect(self._on_transcript_theme_changed)
        self.composer.stop_requested.connect(self._on_composer_stop_requested)
        self.settings_button.clicked.connect(self.settings_requested)
        self._status_timer = QTimer(self)
        self._status_timer.setInterval(STATUS_POLL_MS)
        self._status_timer.timeout.connect(self._on_status_timer_timeout)
        self.composer.focus()

    # -- called by the app -------------------------------------------------------------------

    def connect_client(self, client: ParleyClient) -> None:
        self.client = client
        self._spawn(self._refresh_status())
        self._spawn(self._refresh_list())
        self._status_timer.start()

    def show_error(self, message: str) -> None:
        self.banner.setText(message)
        self.banner.show()
        self.error_shown.emit(message)

    def clear_error(self) -> None:
        self.banner.hide()

    async def hang_up(self) -> None:
        """Stop the reply in flight, the same way Stop does, and all other work (closing)."""
        self._status_timer.stop()
        self._shutting_down = True  # no new work from here on
        if self.stream is not None:
            await self.stream.aclose()
        current = asyncio.current_task()
        others = [task for task in self.tasks if task is not current]
        for task in others:
            task.cancel()
        # Let them unwind (close their HTTP requests) before the client itself is closed.
        await asyncio.gather(*others, return_exceptions=True)

    def closeEvent(self, event: QCloseEvent) -> None:
        # The app runs the async shutdown (hang up, wait for the server to settle, stop it)
        # and closes for real afterwards.
        if self._closing:
            event.accept()
            return
        event.ignore()
        self.close_requested.emit()

    def close_for_real(self) -> None:
        self._closing = True
        self.close()

    # -- slots ----------------------------------------------------------------------------

    def _on_new_chat_triggered(self) -> None:
        self._opening += 1  # a conversation still being fetched is no longer wanted
        self.current_id = None
        self.transcript.clear_conversation()
        with QSignalBlocker(self.sidebar.list):
            self.sidebar.list.clearSelection()
            self.sidebar.list.setCurrentRow(-1)
        self.composer.focus()

    def _on_sidebar_conversation_selected(self, conversation_id: str) -> None:
        if conversation_id != self.current_id:
            self._spawn(self._open(conversation_id))

    def _on_sidebar_rename_requested(self, conversation_id: str, title: str) -> None:
        self._spawn(self._rename(conversation_id, title))

    def _on_sidebar_delete_confirmed(self, conversation_id: str) -> None:
        self._spawn(self._delete(conversation_id))

    def _on_sidebar_search_changed(self, query: str) -> None:
        self._spawn(self._refresh_list(query))

    def _on_composer_message_submitted(self, text: str) -> None:
        self.composer.set_streaming(True)  # at once: a second Enter cannot send it twice
        self._spawn(self._send(text))

    def _on_transcript_theme_changed(self) -> None:
        # Shown again from what the server stored; a reply on screen is redrawn when it ends.
        if self.transcript.showing_reply:
            self._redraw_pending = True
        elif self.current_id is not None:
            self._spawn(self._redraw(self.current_id))

    def _on_composer_stop_requested(self) -> None:
        self._spawn(self._stop())

    def _on_status_timer_timeout(self) -> None:
        self._spawn(self._refresh_status())

    # -- work -----------------------------------------------------------------------------

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        if self._shutting_down:
            coroutine.close()
            return
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self._on_task_done)

    def _on_task_done(self, task: asyncio.Task[Any]) -> None:
        self.tasks.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if isinstance(error, ClientError):
            self.show_error(error.message)
        elif error is not None:
            log.error("background task failed", exc_info=error)
            self.show_error(f"Something went wrong: {error}")

    def _require_client(self) -> ParleyClient:
        if self.client is None:
            raise ClientError("Parley's server is still starting")
        return self.client

    async def _refresh_list(self, query: str | None = None) -> None:
        client = self._require_client()
        query = query if query is not None else self.sidebar.search.text().strip()
        self._list_requests += 1
        request = self._list_requests
        conversations = await client.conversations(query or None)
        if request != self._list_requests:
            return  # a newer refresh is on its way: never show an older answer over it
        self.sidebar.show_conversations(conversations, self.current_id)
        self.conversations_shown.emit()

    async def _refresh_status(self) -> None:
        if self.client is None:
            return
        try:
            status = await self.client.status()
        except ClientError as exc:
            self.model_state.setText(f"server unreachable: {exc.message}")
            return
        names = [m["name"] for m in status["models"]]
        current = self.model_picker.currentText() or status["default_model"]
        if names != [self.model_picker.itemText(i) for i in range(self.model_picker.count())]:
            self.model_picker.clear()
            self.model_picker.addItems(names)
            if current in names:
                self.model_picker.setCurrentText(current)
        chosen = next(
            (m for m in status["models"] if m["name"] == self.model_picker.currentText()), None
        )
        if chosen is not None:
            text = {"ready": "ready", "loading": "loading…", "unloaded": "loads on first use"}.get(
                chosen["state"], f"error: {chosen['error']}"
            )
            if chosen["in_use"]:
                text += " · generating"
            self.model_state.setText(text)

    async def _open(self, conversation_id: str) -> None:
        client = self._require_client()
        self._opening += 1
        request = self._opening
        conversation = await client.conversation(conversation_id)
        if request != self._opening:
            return  # a later click, or New chat, came first
        self.current_id = conversation_id
        self.transcript.show_conversation(conversation["messages"])
        if conversation.get("model"):
            self.model_picker.setCurrentText(conversation["model"])

    async def _rename(self, conversation_id: str, title: str) -> None:
        await self._require_client().rename(conversation_id, title)
        await self._refresh_list()

    async def _delete(self, conversation_id: str) -> None:
        if self.stream is not None and self.stream.conversation_id == conversation_id:
            await self.stream.aclose()
        await self._require_client().delete(conversation_id)
        if conversation_id == self.current_id:
            self.current_id = None
            self.transcript.clear_conversation()
        await self._refresh_list()

    async def _redraw(self, conversation_id: str) -> None:
        conversation = await self._require_client().conversation(conversation_id)
        if conversation_id != self.current_id:
            return  # another one was opened meanwhile, in the new colours already
        if self.transcript.showing_reply:
            self._redraw_pending = True  # a reply began meanwhile: once it has ended
            return
        self.transcript.show_conversation(conversation["messages"])

    async def _send(self, text: str) -> None:
        """Send and follow the reply until the view shows what was saved; only then can the
        next message go (on failure the text stays in the composer)."""
        try:
            await self._reply(text)
        except BaseException:
            self.composer.set_streaming(False)
            raise
        finally:
            if self._redraw_pending and not self.transcript.showing_reply:
                self._redraw_pending = False
                self._on_transcript_theme_changed()

    async def _reply(self, text: str) -> None:
        client = self._require_client()
        self.clear_error()
        model = self.model_picker.currentText() or None
        # The conversation it was typed in, even if another is opened while this is sent.
        conversation_id = self.current_id
        if conversation_id is None:
            conversation = await client.create_conversation(model, self.system_prompt)
            conversation_id = conversation["id"]
            if self.current_id is None:  # still on the new chat it was typed in
                self.current_id = conversation_id
        stream = await client.send(conversation_id, text, model)
        self.stream = stream
        self.composer.clear()
        if stream.conversation_id == self.current_id:
            self.transcript.begin_reply(text, stream.model)
        self._spawn(self._refresh_list())
        final = None
        try:
            async for event in stream.events():
                if event.final is not None:
                    final = event.final
                elif stream.conversation_id == self.current_id:
                    self.transcript.add_text(event.text)
        finally:
            self.stream = None
            await self._show_saved(stream, final)

    async def _stop(self) -> None:
        stream = self.stream
        if stream is None:
            return
        if stream.conversation_id == self.current_id:
            self.transcript.end_reply(None, note="Stopped — saving…")
        await stream.aclose()  # the hang-up: the server stops, saves and frees the model

    async def _show_saved(self, stream: ReplyStream, final: dict[str, Any] | None) -> None:
        """After the reply ends (or is stopped): show what the server stored."""
        saved = await self._wait_saved(stream)
        if stream.conversation_id == self.current_id and not self.transcript.showing_reply:
            # Shown again (reopened from the list) while it streamed: show what was saved.
            await self._open(stream.conversation_id)
        elif stream.conversation_id == self.current_id:
            ended = asyncio.Event()
            self.transcript.reply_ended.connect(ended.set)
            self.transcript.end_reply(saved)
            await ended.wait()  # the view may still be laying out a burst
            self.transcript.reply_ended.disconnect(ended.set)
        if final is not None and final.get("parley", {}).get("save_error"):
            self.show_error("The reply could not be saved: " + final["parley"]["save_error"])
        self._spawn(self._refresh_status())
        self._spawn(self._refresh_list())
        # Its ending is on screen: the next message may go. Nothing is awaited after this,
        # so the next send never overlaps the end of this one.
        self.composer.set_streaming(False)
        self.reply_finished.emit(stream.message_id)

    async def _wait_saved(self, stream: ReplyStream) -> dict[str, Any] | None:
        client = self._require_client()
        for _ in range(int(5 / SETTLE_POLL_S)):
            try:
                conversation = await client.conversation(stream.conversation_id)
            except ClientError as exc:
                if exc.status == 404:  # deleted while it was replying: nothing to show
                    return None
                raise
            message = next(
                (m for m in conversation["messages"] if m["id"] == stream.message_id), None
            )
            if message is None or message["status"] != "streaming":
                return message
            await asyncio.sleep(SETTLE_POLL_S)
        return None
