"""Attaching files to the message being written: chosen in a file dialog (the
Attach button, Chat → Attach files…), dropped on the composer or the transcript, pasted
(files, or an image: sent as "Pasted image.png"). Each becomes a chip in the composer at once
and is uploaded at once: read off the window's thread (bounded: a file over the limit is
refused from its size, unread; desktop/composer/attachment_files.py), then sent to the server, whose
answer (or reason for refusing it) the chip shows. The message sent names the uploaded ones
(TurnActions reads them from the composer). An image attached for a model the server says
cannot see images is marked on its chip at once, and no longer once a model that can is
chosen; Send still goes, and the server's refusal says why.

A tool server's resource (Attach → From a tool server…, resource_choice.py) is attached the
same way, except that the server reads and uploads it: its chip waits for that, and a resource
that became several files (a text and its images) gets a chip for each. A prompt's files come
uploaded already (slash_prompts.py): their chips are ready at once."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable
from functools import partial

from PySide6.QtCore import QSize, Signal
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QFileDialog, QWidget

from desktop.composer.attachment_chips import CHIP_THUMBNAIL_PX, TOO_LARGE_TO_PREVIEW, Chip
from desktop.composer.attachment_files import PASTED_NAME, FileRead, pasted_image, read_file
from desktop.composer.composer import Composer
from desktop.composer.file_drops import FileDrops
from desktop.composer.resource_choice import ResourceChoice
from desktop.controller import Context, Controller
from desktop.errors import AttachmentError, ClientError
from desktop.file_folders import ATTACHMENTS, FileFolders
from desktop.image_decoding import decoded
from server.types import AttachmentJSON, ModelStatusJSON
from server.types.tools import ResourceJSON

THUMBNAIL_PX = 2 * CHIP_THUMBNAIL_PX  # decoded for a high-density screen
MAX_PER_MESSAGE = 10  # the server's limit (Limits.attachments.max_per_message)
FILE_TYPES = (
    "Text, code, PDF and images (*.txt *.md *.markdown *.csv *.json *.yaml *.yml *.toml "
    "*.xml *.html *.py *.js *.ts *.c *.h *.cpp *.rs *.go *.java *.sh *.sql *.log *.pdf "
    "*.png *.jpg *.jpeg *.gif *.webp);;All files (*)"
)
NO_IMAGES = "The chosen model cannot see images"


def takes_images(model: ModelStatusJSON | None) -> bool:
    """Whether a message with images may go to `model` (as the server last reported it;
    None: not known yet): only the server's own "no" counts."""
    return model is None or model.get("images") is not False


def chip_warning(chip: Chip, images: bool) -> str:
    """What a chip warns of, for a model that takes images or not: an image (as the server
    classed it; before its answer, a picture decoded from the file) for one that does not."""
    if images or chip.state == "refused":
        return ""
    if chip.attachment is not None:
        image = chip.attachment["kind"] == "image"
    else:
        image = chip.thumbnail is not None or chip.preview == TOO_LARGE_TO_PREVIEW
    return NO_IMAGES if image else ""


class Attachments(Controller):
    """The composer's files: attached, uploaded, refused. `folders`: where the file dialog
    opens (the app's, shared by its dialogs: desktop/file_folders.py)."""

    chip_settled = Signal(object)  # a Chip was uploaded or refused (tests wait on it)

    def __init__(
        self, context: Context, composer: Composer, conversation: QWidget, parent: QWidget,
    ) -> None:  # fmt: skip
        super().__init__(context, parent)
        self._composer = composer
        self._images = True  # the chosen model takes images (takes_images)
        self.folders = FileFolders()
        composer.attach_requested.connect(self.choose_files)
        composer.files_given.connect(self.add_files)
        composer.image_given.connect(self.add_image)
        self._drops = FileDrops(self)  # files dropped on the conversation go to the message
        self._drops.watch(conversation)
        self._drops.files_dropped.connect(self.add_files)
        self.resources = ResourceChoice(context, parent)  # Attach → From a tool server…
        composer.resource_requested.connect(self.resources.choose)
        self.resources.chosen.connect(self.attach_resources)

    def show_model(self, model: ModelStatusJSON | None) -> None:
        """The model the message would go to, as the server last reported it (None: not
        known): the chips shown warn of what it cannot take."""
        self._images = takes_images(model)
        self._warn()

    def _warn(self) -> bool:
        """Each chip shown warns as the chosen model calls for; drawn again if one changed
        (True)."""
        changed = False
        for chip in self._composer.chips_shown():
            warning = chip_warning(chip, self._images)
            if warning != chip.warning:
                chip.warning = warning
                changed = True
        if changed:
            self._composer.show_chips()
        return changed

    def choose_files(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(
            self._parent, "Attach files", self.folders.start(ATTACHMENTS), FILE_TYPES
        )
        if paths:
            self.folders.chosen(ATTACHMENTS, paths[0])
            self.add_files(paths)
        self._composer.focus()

    def add_files(self, paths: list[str]) -> None:
        for path in paths:
            self._add(Chip(os.path.basename(path) or path), partial(read_file, path))

    def add_image(self, image: QImage) -> None:
        # A copy of its own: the clipboard's may change while the PNG is made.
        self._add(Chip(PASTED_NAME), partial(pasted_image, image.copy()))

    def _add(self, chip: Chip, reading: Callable[[], FileRead]) -> None:
        if self._taken(chip):
            self._context.tasks.spawn(self._upload(chip, reading))

    def _taken(self, chip: Chip) -> bool:
        """The chip shown; whether the message has room for it (else it says why not)."""
        taken = sum(1 for c in self._composer.chips_shown() if c.state != "refused")
        self._composer.attach(chip)
        if taken >= MAX_PER_MESSAGE:
            self._settle(chip, f"A message takes up to {MAX_PER_MESSAGE} files")
            return False
        return True

    # -- files a tool server made ------------------------------------------------------------

    def attach_resources(self, server: str, resources: list[ResourceJSON]) -> None:
        """Resources of that tool server, attached (chosen in the picker, or a tool's link
        read in the transcript)."""
        for resource in resources:
            self.add_made(resource["name"], partial(self._attach, server, resource))
        self._composer.focus()

    async def _attach(self, server: str, resource: ResourceJSON) -> list[AttachmentJSON]:
        client = self._context.require_client()
        return await client.resources.attach(server, resource["uri"], resource["name"])

    def add_made(self, name: str, making: Callable[[], Awaitable[list[AttachmentJSON]]]) -> None:
        """Files the server makes (`making`: a resource read and uploaded), under `name`
        until it answers."""
        chip = Chip(name)
        if self._taken(chip):
            self._context.tasks.spawn(self._made(chip, making))

    async def _made(
        self, chip: Chip, making: Callable[[], Awaitable[list[AttachmentJSON]]]
    ) -> None:
        try:
            attached = await making()
        except ClientError as exc:
            self._settle(chip, exc.message)
            return
        except Exception as exc:  # a bug: said on the chip (never "uploading" forever), logged
            self._settle(chip, f"{chip.name} could not be attached: {exc}")
            raise
        if not attached:
            self._settle(chip, f"{chip.name} holds nothing that can be attached")
            return
        self._fill(chip, attached[0])
        self._settle(chip)
        self.add_uploaded(attached[1:])

    def add_uploaded(self, attachments: list[AttachmentJSON]) -> None:
        """Files the server has uploaded already (a prompt's images): ready chips."""
        for attachment in attachments:
            chip = Chip(attachment["name"])
            if self._taken(chip):
                self._fill(chip, attachment)
                self._settle(chip)

    def _fill(self, chip: Chip, attachment: AttachmentJSON) -> None:
        chip.name, chip.size, chip.attachment = attachment["name"], attachment["bytes"], attachment
        if attachment["kind"] == "image":
            self._context.tasks.spawn(self._thumbnail(chip, attachment["id"]))

    async def _thumbnail(self, chip: Chip, attachment_id: str) -> None:
        """An image the server made, shown on its chip as a file's is."""
        try:
            data = await self._context.require_client().attachments.content(attachment_id)
        except ClientError:
            return  # a plain tile, as for a file Qt cannot show: the file is attached
        picture = await decoded(data, QSize(THUMBNAIL_PX, THUMBNAIL_PX))
        chip.thumbnail = picture.image
        chip.preview = TOO_LARGE_TO_PREVIEW if picture.too_large else ""
        if chip in self._composer.chips_shown():
            self._composer.show_chips()

    async def _upload(self, chip: Chip, reading: Callable[[], FileRead]) -> None:
        try:
            read = await asyncio.to_thread(reading)  # (never on the window's thread)
            chip.size = len(read.data)
            self._composer.show_chips()
            picture = await decoded(read.data, QSize(THUMBNAIL_PX, THUMBNAIL_PX))
            chip.thumbnail = picture.image
            chip.preview = TOO_LARGE_TO_PREVIEW if picture.too_large else ""
            if not self._warn():
                self._composer.show_chips()
            client = self._context.require_client()
            chip.attachment = await client.attachments.upload(read.name, read.data, read.mime)
        except (AttachmentError, ClientError) as exc:
            self._settle(chip, exc.message)
            return
        except Exception as exc:  # a bug: said on the chip (never "uploading" forever), logged
            self._settle(chip, f"{chip.name} could not be attached: {exc}")
            raise
        self._settle(chip)

    def _settle(self, chip: Chip, refused: str = "") -> None:
        chip.state = "refused" if refused else "ready"
        chip.reason = refused
        if not self._warn():
            self._composer.show_chips()
        self.chip_settled.emit(chip)
