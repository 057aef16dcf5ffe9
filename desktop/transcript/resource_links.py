"""What a click on a resource a tool step's result linked to does: the server reads it through
that step (only a URI that step's result gave, only from the server that gave it: the window
names neither a server nor a file), and Parley shows it — its text in a viewer
(resource_viewer.py), an image in the image viewer (Save… keeps it). Nothing is handed to the
system to open: the link is the tool server's word."""

from __future__ import annotations

import asyncio
import base64
import binascii
import mimetypes
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.client.events import with_inner_steps
from desktop.controller import Context, Controller
from desktop.errors import ClientError
from desktop.file_folders import SAVED, FileFolders
from desktop.file_names import file_name_for
from desktop.image_decoding import decoded
from desktop.transcript.image_viewer import ImageViewer, screen_room
from desktop.transcript.resource_viewer import ResourceViewer
from desktop.transcript.surface import LIVE_REPLY, TranscriptSurface
from server.types import ResourceLinkJSON, ToolPartJSON
from server.types.tools import ResourceContentJSON, ResourceJSON

NOT_SAVED_YET = "its reply has not been saved yet; open it again in a moment"


class ResourceLinks(Controller):
    # "Attach to message": the step's server and the resource (its URI as the link gave it).
    attach_wanted = Signal(str, list)

    def __init__(self, context: Context, parent: QWidget, transcript: TranscriptSurface) -> None:
        super().__init__(context, parent)
        self.folders = FileFolders()
        self.viewer: ResourceViewer | None = None  # the text shown (one at a time)
        self.image_viewer: ImageViewer | None = None  # the last image shown (closes itself)
        self._transcript = transcript
        transcript.step_link_activated.connect(self._on_transcript_step_link_activated)

    def _on_transcript_step_link_activated(self, message_id: str, step_id: str, uri: str) -> None:
        step, link = self._link(message_id, step_id, uri)
        name = (link["title"] or link["name"]) if link is not None else uri
        if self.viewer is not None:
            self.viewer.close()
            self.viewer.deleteLater()
        viewer = ResourceViewer(name or uri, uri, self._parent)
        if step is not None and link is not None:
            made: ResourceJSON = {
                "uri": uri, "name": link["name"] or uri, "title": link["title"],
                "description": link["description"], "mime": link["mime"], "size": link["size"],
            }  # fmt: skip
            server = step["server"]
            viewer.attach_requested.connect(lambda: self.attach_wanted.emit(server, [made]))
        self.viewer = viewer
        viewer.open()  # never exec() under qasync
        conversation = self._context.current_id
        if conversation is None or message_id == LIVE_REPLY:
            viewer.show_failure(NOT_SAVED_YET)
            return
        self._context.tasks.spawn(self._read(viewer, conversation, message_id, step_id, name))

    def _link(
        self, message_id: str, step_id: str, uri: str
    ) -> tuple[ToolPartJSON | None, ResourceLinkJSON | None]:
        """The step of that reply, and its link to `uri`, as the transcript holds them."""
        row = self._transcript.rows.row(message_id)
        for top in row.parts if row is not None else []:
            if isinstance(top, str) or top["type"] != "tool":
                continue
            for step in with_inner_steps(top):
                for link in step.get("links", []) if step["id"] == step_id else []:
                    if link["uri"] == uri:
                        return step, link
        return None, None

    async def _read(
        self, viewer: ResourceViewer, conversation: str, message: str, step: str, name: str
    ) -> None:
        try:
            client = self._context.require_client()
            contents = await client.resources.open_link(conversation, message, step, viewer.uri)
        except ClientError as exc:
            if viewer is self.viewer:
                viewer.show_failure(exc.message)
            return
        if viewer is not self.viewer:
            return  # another link was opened meanwhile
        image = len(contents) == 1 and contents[0]["kind"] == "image"
        if image and await self._show_image(contents[0], name):
            viewer.close()
            return
        viewer.show_contents(contents)

    async def _show_image(self, content: ResourceContentJSON, name: str) -> bool:
        """The image in the image viewer (fitted to the screen); False if it is none Qt
        decodes (the text viewer says what it is)."""
        try:
            data = base64.b64decode(content["data"] or "", validate=True)
        except (binascii.Error, ValueError):
            return False
        picture = await decoded(data, screen_room(self._parent))
        if picture.image is None and not picture.too_large:
            return False
        said = f"{name} is too large to show here ({picture.size_text()})."
        image_viewer = ImageViewer(name, picture.image, self._parent, said)
        image_viewer.save_requested.connect(lambda: self.save(name, content["mime"], data))
        self.image_viewer = image_viewer
        image_viewer.open()
        return True

    def save(self, name: str, mime: str, data: bytes) -> None:
        """Ask where to keep the image (its name, with its type's extension, to start with)."""
        suggested = file_name_for(name)
        extension = mimetypes.guess_extension(mime) or ""
        if extension and not suggested.endswith(extension):
            suggested += extension
        start = self.folders.start_file(SAVED, suggested)
        path, _ = QFileDialog.getSaveFileName(self._parent, f"Save {name}", start)
        if path:
            self.folders.chosen(SAVED, path)
            self._context.tasks.spawn(self._save(path, data))

    async def _save(self, path: str, data: bytes) -> None:
        try:
            await asyncio.to_thread(Path(path).write_bytes, data)
        except OSError as exc:
            raise ClientError(f"Could not save {path}: {exc.strerror or exc}") from exc
