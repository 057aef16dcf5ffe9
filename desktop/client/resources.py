"""A tool server's resources (MCP), for the window: listed to browse, read to be shown, and
attached to a message like a file (the server uploads them as it uploads a file: the
attachments come back, sent with the message by id); and a resource a tool's result linked
to, read through the step that gave it (never through a server the window names). Composed
into ParleyClient as `client.resources`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from desktop.client.answers import shaped
from desktop.client.attachments import ATTACHMENT_KEYS
from desktop.client.paths import segment
from desktop.errors import ClientError
from server.types import AttachmentJSON
from server.types.keys import required_keys
from server.types.tools import (
    AttachedResourcesJSON,
    ResourceContentJSON,
    ResourceJSON,
    ResourceReadJSON,
    ResourcesJSON,
    ResourceTemplateJSON,
)

Call = Callable[[str, str, object], Awaitable[object]]

RESOURCE_KEYS = required_keys(ResourceJSON)
TEMPLATE_KEYS = required_keys(ResourceTemplateJSON)
CONTENT_KEYS = required_keys(ResourceContentJSON)


def _contents(answer: object) -> list[ResourceContentJSON]:
    read = shaped(ResourceReadJSON, ("contents",), answer)
    if not isinstance(read["contents"], list):
        raise ClientError("the server's answer is not a resource's contents")
    contents = [shaped(ResourceContentJSON, CONTENT_KEYS, c) for c in read["contents"]]
    for content in contents:
        if content["kind"] == "text" and not isinstance(content["text"], str):
            raise ClientError("the server sent a text resource without its text")
        if content["kind"] == "image" and not isinstance(content["data"], str):
            raise ClientError("the server sent an image resource without its bytes")
    return contents


class ResourcesApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def listing(self, server: str) -> ResourcesJSON:
        """The resources `server` offers, and its templates of URIs (ClientError 503
        `server_not_ready` when it is not running, 404 for no such server)."""
        path = f"/api/tools/servers/{segment(server)}/resources"
        found = shaped(ResourcesJSON, ("resources",), await self._call("GET", path, None))
        templates = found.get("templates", [])
        if not isinstance(found["resources"], list) or not isinstance(templates, list):
            raise ClientError("the server's list of resources is malformed")
        return {
            "resources": [shaped(ResourceJSON, RESOURCE_KEYS, r) for r in found["resources"]],
            "templates": [shaped(ResourceTemplateJSON, TEMPLATE_KEYS, t) for t in templates],
        }

    async def read(self, server: str, uri: str) -> list[ResourceContentJSON]:
        """The resource as it is now, to be shown (text bounded, `note` saying what was left
        out; an image's bytes in base64)."""
        path = f"/api/tools/servers/{segment(server)}/resources/read?" + urlencode({"uri": uri})
        return _contents(await self._call("GET", path, None))

    async def attach(self, server: str, uri: str, name: str | None = None) -> list[AttachmentJSON]:
        """The resource made into attachments (its text as one, each image as its own), to
        send with the next message by id. ClientError in the server's words when it cannot
        be (resource_too_large, resource_unsupported, resource_unreadable...)."""
        path = f"/api/tools/servers/{segment(server)}/resources/attach"
        body = {"uri": uri, "name": name} if name else {"uri": uri}
        attached = shaped(
            AttachedResourcesJSON, ("attachments",), await self._call("POST", path, body)
        )
        if not isinstance(attached["attachments"], list):
            raise ClientError("the server's answer is not a list of attachments")
        return [shaped(AttachmentJSON, ATTACHMENT_KEYS, a) for a in attached["attachments"]]

    async def open_link(
        self, conversation_id: str, message_id: str, step_id: str, uri: str
    ) -> list[ResourceContentJSON]:
        """A resource the tool step `step_id` of that reply linked to, read through the
        server that returned it (ClientError 404 `link_not_found` for a URI its result did
        not give)."""
        conversation, message = segment(conversation_id), segment(message_id)
        query = urlencode({"step": step_id, "uri": uri})
        path = f"/api/conversations/{conversation}/messages/{message}/links?{query}"
        return _contents(await self._call("GET", path, None))
