"""File → Export and Import: the open chat as Markdown or JSON, every chat as JSON, and
importing Parley's or ChatGPT's export (conversations.json).

An export is written to a `.part` file beside the chosen one as it arrives, then renamed
over it: a failure or a crash never leaves a half-written file under the chosen name. An
import is all or nothing on the server's side; a big one shows a progress dialog (the server's
progress in /api/status) whose Cancel hangs up the request, which cancels the import. An import
first asks the server to import nothing if chats of the file are already here; the user then
chooses (copies, skip, cancel) and it is sent again with the choice. Each ends with a notice
the user dismisses: the import's summary; the export's file, with a way to show its folder."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QFileDialog, QMessageBox, QProgressDialog, QWidget

from desktop.chats.history_notices import (
    COPY,
    SHOW_FOLDER,
    SKIP,
    count,
    duplicates_question,
    export_confirmation,
    import_summary,
)
from desktop.client import ParleyClient
from desktop.controller import Context, Controller
from desktop.errors import AlreadyHereError, ClientError
from desktop.file_folders import CHATS, FileFolders
from desktop.file_names import file_name_for

MARKDOWN = "Markdown (*.md)"
JSON = "Parley JSON (*.json)"
IMPORTS = "Parley or ChatGPT export (*.json);;All files (*)"
PROGRESS_STEPS = 1000
PROGRESS_POLL_SECONDS = 0.5


class HistoryFiles(Controller):
    """The file dialogs open where `folders` says for chats (desktop/file_folders.py: the
    folder of the last export or import, else Documents to export to and home to import
    from)."""

    done = Signal(str)  # what was exported or imported, for the status line and tests
    imported = Signal()  # new chats: the list needs refreshing

    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.folders = FileFolders()
        self.notice: QMessageBox | None = None  # the last question or notice shown

    def _in_folder(self, name: str) -> str:
        return self.folders.start_file(CHATS, name)

    def _chosen(self, path: str) -> None:
        self.folders.chosen(CHATS, path)

    # -- commands (menu actions) ----------------------------------------------------------

    def export_chat(self, title: str | None) -> None:
        """Export the chat on screen; `title`: its title, the file's name to start from."""
        conversation_id = self._context.current_id
        if conversation_id is None:
            return
        path, kind = QFileDialog.getSaveFileName(
            self._parent,
            "Export this chat",
            self._in_folder(f"{file_name_for(title)}.md"),
            f"{MARKDOWN};;{JSON}",
        )
        if path:
            self._chosen(path)
            self._context.tasks.spawn(
                self._export(conversation_id, "json" if kind == JSON else "md", path)
            )

    def export_all(self) -> None:
        path, _ = QFileDialog.getSaveFileName(
            self._parent, "Export every chat", self._in_folder("parley-chats.json"), JSON
        )
        if path:
            self._chosen(path)
            self._context.tasks.spawn(self._export(None, "json", path))

    def import_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self._parent, "Import chats", self.folders.start(CHATS), IMPORTS
        )
        if path:
            self._chosen(path)
            self._context.tasks.spawn(self._import(path))

    # -- the work ---------------------------------------------------------------------------

    async def _export(self, conversation_id: str | None, kind: str, path: str) -> None:
        client = self._context.require_client()
        target = Path(path)
        partial = target.with_name(target.name + ".part")
        try:
            with partial.open("wb") as file:
                written = await client.export_to(conversation_id, kind, file)
                file.flush()
                os.fsync(file.fileno())
            os.replace(partial, target)
        except (ClientError, OSError) as exc:
            with contextlib.suppress(OSError):
                partial.unlink()
            raise ClientError(f"Could not export to {target}: {exc}") from exc
        text = export_confirmation(target, written)
        notice = self._notice("export-done", "Exported", text)
        notice.addButton(QMessageBox.StandardButton.Ok)
        show = notice.addButton(SHOW_FOLDER, QMessageBox.ButtonRole.ActionRole)
        # The folder opens and the notice stays (a button's own click would close it).
        show.clicked.disconnect()
        show.clicked.connect(lambda: self.show_folder(target.parent))
        notice.open()
        self.done.emit(text)

    def show_folder(self, folder: Path) -> None:
        """The folder in the system's file manager."""
        if not QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder))):
            self.done.emit(f"Could not open {folder}")

    def _notice(self, name: str, title: str, text: str) -> QMessageBox:
        """A message the user dismisses (OK), in place of the one before."""
        if self.notice is not None:
            self.notice.close()
        notice = QMessageBox(QMessageBox.Icon.Information, title, text, parent=self._parent)
        notice.setObjectName(name)
        notice.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.notice = notice
        notice.destroyed.connect(lambda: self._forget(notice))
        return notice

    def _forget(self, notice: QMessageBox) -> None:
        if self.notice is notice:
            self.notice = None

    def _ask_duplicates(self, path: str, found: AlreadyHereError) -> None:
        """N of M chats are already here: import them again as copies, skip them, or cancel
        (nothing imported). Never exec(): its own round of events inside a coroutine."""
        ask = self._notice(
            "import-duplicates", "Import chats",
            duplicates_question(found.already_here, found.conversations),
        )  # fmt: skip
        ask.setIcon(QMessageBox.Icon.Question)
        copies = ask.addButton(COPY, QMessageBox.ButtonRole.AcceptRole)
        skip = ask.addButton(SKIP, QMessageBox.ButtonRole.AcceptRole)
        ask.addButton(QMessageBox.StandardButton.Cancel)
        ask.setDefaultButton(skip)
        name = Path(path).name

        def finished(_result: int) -> None:
            chosen = ask.clickedButton()
            if chosen is copies or chosen is skip:
                choice = "copy" if chosen is copies else "skip"
                self._context.tasks.spawn(self._import(path, choice))
            else:
                self.done.emit(f"Import of {name} cancelled: nothing was imported")

        ask.finished.connect(finished)
        ask.open()

    async def _import(self, path: str, duplicates: str = "ask") -> None:
        client = self._context.require_client()
        source = Path(path)
        try:
            raw = await asyncio.to_thread(source.read_bytes)
        except OSError as exc:
            raise ClientError(f"Could not read {source}: {exc}") from exc
        progress = QProgressDialog(
            f"Importing {source.name} ({len(raw) / 1e6:.1f} MB)…", "Cancel", 0, PROGRESS_STEPS,
            self._parent,
        )  # fmt: skip
        # Not modal: a modal one's setValue() runs a nested round of Qt events inside this
        # coroutine; and the window stays usable, the server answers it meanwhile.
        progress.setWindowModality(Qt.WindowModality.NonModal)
        progress.setMinimumDuration(300)  # a small file never flashes a dialog
        sending = asyncio.ensure_future(client.import_history(raw, duplicates))
        # Cancel hangs up the request: the server stops the import and keeps nothing of it.
        progress.canceled.connect(sending.cancel)
        watching = asyncio.ensure_future(_show_progress(client, progress, source.name))
        try:
            result = await sending
        except asyncio.CancelledError:
            if not sending.cancelled():
                raise  # this task itself was cancelled (the window closes)
            self.done.emit(f"Import of {source.name} cancelled: nothing was imported")
            return
        except AlreadyHereError as found:
            self._ask_duplicates(path, found)
            return
        except ClientError as exc:
            raise ClientError(f"Nothing was imported from {source.name}: {exc}") from exc
        finally:
            watching.cancel()
            sending.cancel()
            progress.close()
        summary = import_summary(result, duplicates, source.name)
        self.imported.emit()
        notice = self._notice("import-summary", "Imported", summary)
        notice.addButton(QMessageBox.StandardButton.Ok)
        notice.open()
        self.done.emit(summary)


async def _show_progress(client: ParleyClient, progress: QProgressDialog, name: str) -> None:
    """The server's progress of the import (GET /api/status `imports`), twice a second."""
    while True:
        await asyncio.sleep(PROGRESS_POLL_SECONDS)
        with contextlib.suppress(ClientError):
            running = (await client.status()).get("imports") or []
            if running and running[0]["bytes_total"] and not progress.wasCanceled():
                now = running[0]
                progress.setValue(PROGRESS_STEPS * now["bytes_read"] // now["bytes_total"])
                progress.setLabelText(
                    f"Importing {name}: {count(now['conversations'], 'chat')}, "
                    f"{count(now['messages'], 'message')} so far…"
                )
