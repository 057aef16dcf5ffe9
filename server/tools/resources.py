"""An MCP server's resources: listed (with its URI templates), read within a bound of bytes
and time, and checked the way an uploaded file is before anything is shown or attached; and
the resources a tool's result links to (`resource_link`), kept on its step.

What a server sends is hostile input, like an upload: its text is made valid Unicode; a
binary content is what its bytes say it is (server/attachments/kinds.py), and it must agree
with the type the server declares: a blob that says it is a PNG and is not one, or that is
neither text, an image nor a PDF, is refused. Parley reads a resource only through
`resources/read` of the server that offers it (or whose result links to it): never a file
or URL of its own.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import anyio
import anyio.to_thread
import mcp_types
from mcp import Client
from mcp.shared.exceptions import MCPError

from server.attachments.kinds import Kind, kind_of
from server.errors import (
    BadGatewayError,
    BadRequestError,
    NotFoundError,
    PayloadTooLargeError,
    UnavailableError,
)
from server.limits import ToolLimits
from server.text import valid_unicode
from server.tools.listing import Listing, all_pages
from server.types import ResourceLinkJSON
from server.types.tools import ResourceJSON, ResourcesJSON, ResourceTemplateJSON

# A URI the server does not know: -32002 until 2025-11-25, "invalid params" since.
NOT_FOUND_CODES = (-32002, mcp_types.INVALID_PARAMS)
# Declared types a text file may carry besides text/*.
TEXT_TYPES = ("application/json", "application/xml", "application/javascript",
              "application/yaml", "application/toml", "application/x-sh")  # fmt: skip


@dataclass(frozen=True)
class ResourceFile:
    """One content of a read resource, checked: text (valid Unicode), or the bytes of an
    image or a PDF that are what they say."""

    uri: str
    kind: str  # "text", "image" or "pdf" (server/attachments/kinds.py)
    mime: str
    data: bytes  # the text as UTF-8, or the file's bytes
    text: str | None = None


class ServerResources:
    """One server's resources for its session: listed once, again after it says they
    changed."""

    def __init__(self, server: str) -> None:
        self._server = server
        self._listing: Listing[ResourcesJSON] = Listing()

    def changed(self) -> None:
        self._listing.changed()

    async def listing(self, client: Client, limits: ToolLimits) -> ResourcesJSON:
        """Its resources and templates (none when it offers none). Raises ApiError."""
        if client.server_capabilities.resources is None:
            return {"resources": [], "templates": []}

        async def fetch() -> ResourcesJSON:
            async def resources(cursor: str | None) -> tuple[list[ResourceJSON], str | None]:
                page = await client.list_resources(cursor=cursor)
                return [_resource(r) for r in page.resources], page.next_cursor

            async def templates(
                cursor: str | None,
            ) -> tuple[list[ResourceTemplateJSON], str | None]:
                try:
                    page = await client.list_resource_templates(cursor=cursor)
                except MCPError as exc:  # templates are optional: a server may have no method
                    if exc.code == mcp_types.METHOD_NOT_FOUND:
                        return [], None
                    raise
                return [_template(t) for t in page.resource_templates], page.next_cursor

            return {
                "resources": await all_pages(resources, limits.listed_most),
                "templates": await all_pages(templates, limits.listed_most),
            }

        with self._answers(limits, "list its resources"):
            return await self._listing.get(fetch)

    async def read(self, client: Client, uri: str, limits: ToolLimits) -> list[ResourceFile]:
        """The resource's contents, checked (at most `resource_bytes` in all, within
        `resource_time`). Raises ApiError saying what is wrong."""
        check_uri(uri)
        with self._answers(limits, f"read {uri}", unknown="resource_not_found"):
            result = await client.read_resource(uri)
        if not result.contents:
            raise BadGatewayError(
                f"{self._server} gave nothing for {uri}", code="resource_unreadable"
            )
        return await checked(result.contents, limits, self._server)

    def _answers(
        self, limits: ToolLimits, doing: str, unknown: str | None = None
    ) -> contextlib.AbstractContextManager[None]:
        return answering(self._server, limits.resource_time, doing, unknown)


@contextlib.contextmanager
def answering(
    server: str, seconds: float, doing: str, unknown: str | None = None
) -> Iterator[None]:
    """A request to `server` within its time, its failures said as API errors (a 404 with
    the code `unknown`, when given, for what the server does not know). The SDK tells the
    server when one is given up (MCP `notifications/cancelled`)."""
    try:
        with anyio.fail_after(seconds):
            yield
    except TimeoutError as exc:
        raise UnavailableError(
            f"{server} did not {doing} within {seconds:g} s", code="resource_timeout"
        ) from exc
    except MCPError as exc:
        raise failure(exc, server, doing, unknown) from exc
    except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
        raise UnavailableError(
            f"{server} stopped before it could {doing}", code="server_not_ready"
        ) from exc


def failure(
    exc: MCPError, server: str, doing: str, unknown: str | None
) -> BadGatewayError | NotFoundError:
    """A server's refusal as the API says it."""
    said = valid_unicode(exc.message)[: ToolLimits.description_chars]
    if exc.code in NOT_FOUND_CODES and unknown is not None:
        return NotFoundError(f"{server} could not {doing}: {said}", code=unknown)
    return BadGatewayError(f"{server} could not {doing}: {said}", code="resource_unreadable")


def check_uri(uri: str) -> None:
    if not uri or len(uri) > ToolLimits.uri_chars or any(ord(c) < 32 or c == "\x7f" for c in uri):
        raise BadRequestError(
            f"'uri' must be a resource's URI of at most {ToolLimits.uri_chars} characters, "
            "without control characters",
            code="invalid_field",
        )


async def checked(
    contents: list[mcp_types.TextResourceContents | mcp_types.BlobResourceContents],
    limits: ToolLimits,
    server: str,
) -> list[ResourceFile]:
    """Contents as Parley takes them, or an ApiError: over `resource_bytes` in all, a blob
    that is not base64, or whose bytes are not what it says."""
    total = 0
    found: list[ResourceFile] = []
    for content in contents:
        mime = _short(content.mime_type, ToolLimits.mime_chars)
        if isinstance(content, mcp_types.TextResourceContents):
            text = valid_unicode(content.text)
            data = text.encode("utf-8")
            total += len(data)
            _within(total, limits, server, content.uri)
            found.append(ResourceFile(content.uri, "text", "text/plain; charset=utf-8", data, text))
            continue
        total += len(content.blob) * 3 // 4  # refused before it is decoded
        _within(total, limits, server, content.uri)
        try:
            data = base64.b64decode(content.blob, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise BadRequestError(
                f"{server} sent {content.uri} as a blob that is not base64",
                code="resource_unsupported",
            ) from exc
        kind = await anyio.to_thread.run_sync(_kind, content.uri, data, mime)
        # No NUL in it (kinds.py), but not always UTF-8: decoded safely.
        said = valid_unicode(data.decode("utf-8", "replace")) if kind.kind == "text" else None
        found.append(ResourceFile(content.uri, kind.kind, kind.mime, data, said))
    return found


def _within(total: int, limits: ToolLimits, server: str, uri: str) -> None:
    if total > limits.resource_bytes:
        raise PayloadTooLargeError(
            f"{uri} from {server} is larger than the {size(limits.resource_bytes)} "
            "a resource may be",
            code="resource_too_large",
        )


def size(count: int) -> str:
    """A bound in bytes, as a person reads it."""
    return f"{count >> 20} MB" if count % (1 << 20) == 0 else f"{count:,} bytes"


def _kind(uri: str, data: bytes, declared: str | None) -> Kind:
    """What a blob's bytes are, which must agree with the type its server declares."""
    try:
        kind = kind_of(uri, data)
    except BadRequestError as exc:
        raise BadRequestError(
            f"{uri} cannot be taken: {exc.message.split(': ', 1)[-1]}"
            + (f" (its server says it is {declared})" if declared else ""),
            code="resource_unsupported",
        ) from exc
    said = (declared or "").split(";")[0].strip().lower()
    said = "image/jpeg" if said == "image/jpg" else said
    if kind.kind == "text":
        agrees = not said or said.startswith("text/") or said in TEXT_TYPES
    else:
        agrees = not said or said == kind.mime
    if not agrees:
        what = "text" if kind.kind == "text" else kind.mime
        raise BadRequestError(
            f"{uri} cannot be taken: its server says it is {declared}, but it is {what}",
            code="resource_unsupported",
        )
    if kind.kind == "text":
        return Kind("text", "text/plain; charset=utf-8")
    return kind


def result_links(result: mcp_types.CallToolResult, most: int) -> tuple[ResourceLinkJSON, ...]:
    """The resources a tool's result links to, as its step keeps them (at most `most`;
    a link whose URI Parley would not read is left out)."""
    links: list[ResourceLinkJSON] = []
    for block in result.content:
        if not isinstance(block, mcp_types.ResourceLink):
            continue
        try:
            check_uri(block.uri)
        except BadRequestError:
            continue
        links.append(_resource(block))
        if len(links) >= most:
            break
    return tuple(links)


def _resource(resource: mcp_types.Resource) -> ResourceJSON:
    return {
        "uri": valid_unicode(resource.uri),
        "name": _short(resource.name, ToolLimits.name_chars)
        or resource.uri[: ToolLimits.name_chars],
        "title": _short(resource.title, ToolLimits.name_chars),
        "description": _short(resource.description, ToolLimits.description_chars),
        "mime": _short(resource.mime_type, ToolLimits.mime_chars),
        "size": resource.size if isinstance(resource.size, int) and resource.size >= 0 else None,
    }


def _template(template: mcp_types.ResourceTemplate) -> ResourceTemplateJSON:
    return {
        "uri_template": valid_unicode(template.uri_template)[: ToolLimits.uri_chars],
        "name": _short(template.name, ToolLimits.name_chars) or "",
        "title": _short(template.title, ToolLimits.name_chars),
        "description": _short(template.description, ToolLimits.description_chars),
        "mime": _short(template.mime_type, ToolLimits.mime_chars),
    }


def _short(text: str | None, most: int) -> str | None:
    """A server's text as the API gives it: valid Unicode, at most `most` characters."""
    return None if text is None else valid_unicode(text)[:most]
