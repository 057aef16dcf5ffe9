"""A prompt's images read for one model call: each becomes a data: URL the backend sends as
an OpenAI `image_url` part, newest first within the request's image budget. An image the
model cannot be given (it takes no images, the budget is spent, its file is gone) is named
to it in the message's text instead, so the chat still reads right."""

from __future__ import annotations

import base64

from server.attachments.service import Attachments
from server.errors import StorageError
from server.types import ChatMessage, ImageJSON


async def with_images(
    prompt: list[ChatMessage], attachments: Attachments, refusal: str | None
) -> list[ChatMessage]:
    """`prompt` with its images read (`refusal`: why this model takes none, or None)."""
    if not any(message.get("images") for message in prompt):
        return prompt
    budget = attachments.limits.max_request_image_bytes
    done: list[ChatMessage] = []
    for message in reversed(prompt):
        images = message.get("images")
        if not images:
            done.append(message)
            continue
        sent: list[ImageJSON] = []
        left_out: list[str] = []
        for image in images:
            why = refusal
            data = b""
            if why is None:
                data, why = await _read(attachments, image["id"])
            if why is None and len(data) > budget:
                why = "the request's images are over their size limit; newer ones came first"
            if why is None:
                budget -= len(data)
                url = f"data:{image['mime']};base64,{base64.b64encode(data).decode('ascii')}"
                sent.append({**image, "url": url})
            else:
                left_out.append(f'[image "{image["name"]}" not shown: {why}]')
        changed: ChatMessage = {**message, "images": sent}
        if not sent:
            del changed["images"]
        if left_out:
            changed["content"] = "\n\n".join(filter(None, [message["content"], *left_out]))
        done.append(changed)
    return done[::-1]


async def _read(attachments: Attachments, attachment_id: str) -> tuple[bytes, str | None]:
    try:
        data = await attachments.read(attachment_id, attachments.limits.max_image_bytes)
    except (OSError, StorageError):  # a TimeoutError is an OSError
        return b"", "its file could not be read from the data folder"
    return data, None
