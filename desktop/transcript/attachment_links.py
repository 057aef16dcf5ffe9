"""The files of the messages in the transcript: their images' thumbnails, fetched from the
server when the transcript first shows one, one file at a time, and decoded at their size in
the window's queue of images (desktop/image_decoding.py); and what a click on a file's chip
does. An image opens in a viewer (decoded at the size of the screen in the window's queue of images,
desktop/image_decoding.py, with Save…); any other file is saved where the user chooses (the
save dialog starts with its name)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from PySide6.QtCore import QSize, QTimer
from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.file_folders import SAVED, FileFolders
from desktop.file_names import file_name_for
from desktop.image_decoding import decoded
from desktop.look.scale import THUMBNAIL as THUMBNAIL_PX
from desktop.transcript.image_viewer import ImageViewer, screen_room
from desktop.transcript.surface import TranscriptSurface


class AttachmentLinks(Controller):
    """`folders`: where the save dialog opens (the app's: desktop/file_folders.py)."""

    def __init__(self, context: Context, transcript: TranscriptSurface, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.folders = FileFolders()
        self.viewer: ImageViewer | None = None  # the last one opened
        self._thumbnails = transcript.thumbnails
        # One thumbnail's file fetched and decoded at a time: a chat of many images holds
        # one file's bytes while it waits, not all of them.
        self._one_thumbnail = asyncio.Lock()
        self._thumbnails.wanted.connect(self._on_thumbnails_wanted)
        transcript.attachment_clicked.connect(self._on_transcript_attachment_clicked)

    def _on_thumbnails_wanted(self, attachment_id: str) -> None:
        self._context.tasks.spawn(self._fetch_thumbnail(attachment_id))

    async def _fetch_thumbnail(self, attachment_id: str) -> None:
        async with self._one_thumbnail:
            try:
                data = await self._context.require_client().attachments.content(attachment_id)
            except ClientError:
                self._thumbnails.add(attachment_id, None)  # gone or unreadable: a plain tile
                return
            side = THUMBNAIL_PX * 2  # for a high-density screen
            picture = await decoded(data, QSize(side, side))
        self._thumbnails.add(attachment_id, picture.image)

    def _on_transcript_attachment_clicked(self, attachment: dict[str, object]) -> None:
        attachment_id, name = str(attachment["id"]), str(attachment["name"])
        if attachment.get("kind") == "image":
            self._context.tasks.spawn(self._view(attachment_id, name))
        else:
            self.save(attachment_id, name)

    def save(self, attachment_id: str, name: str, data: bytes | None = None) -> None:
        """Ask where to save the file (its own name to start with), then save it there."""
        suggested = _safe_name(name)
        start = self.folders.start_file(SAVED, suggested)
        path, _ = QFileDialog.getSaveFileName(self._parent, f"Save {name}", start)
        if path:
            self.folders.chosen(SAVED, path)
            self._context.tasks.spawn(self._save(attachment_id, path, data))

    async def _save(self, attachment_id: str, path: str, data: bytes | None) -> None:
        if data is None:
            data = await self._context.require_client().attachments.content(attachment_id)
        try:
            await asyncio.to_thread(Path(path).write_bytes, data)
        except OSError as exc:
            raise ClientError(f"Could not save {path}: {exc.strerror or exc}") from exc

    async def _view(self, attachment_id: str, name: str) -> None:
        data = await self._context.require_client().attachments.content(attachment_id)
        picture = await decoded(data, screen_room(self._parent))
        if picture.image is None and not picture.too_large:
            # Not an image Qt shows: offered to save (the dialog not in here).
            QTimer.singleShot(0, lambda: self.save(attachment_id, name, data))
            return
        if picture.image is not None:
            viewer = ImageViewer(name, picture.image, self._parent)
        else:
            said = f"{name} is too large to show here ({picture.size_text()})."
            viewer = ImageViewer(name, None, self._parent, said)
        viewer.save_requested.connect(lambda: self.save(attachment_id, name, data))
        self.viewer = viewer
        viewer.open()


def _safe_name(name: str) -> str:
    """A file name another system accepts, keeping its extension."""
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem:
        return file_name_for(name)
    return f"{file_name_for(stem)}.{file_name_for(extension)}"
