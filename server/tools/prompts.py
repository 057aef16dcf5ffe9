"""An MCP server's prompts: listed with their arguments (the composer's slash commands), and
one filled in (`prompts/get`) with the user's values, as text for the composer and files to
attach.

What the server answers is hostile input: its text is made valid Unicode and cut at what an
attached file gives the model; its images (and embedded resources) are checked as a read
resource is (server/tools/resources.py) and then go through the attachments' own checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mcp_types
from mcp import Client

from server.errors import BadRequestError, NotFoundError, PayloadTooLargeError
from server.limits import ToolLimits
from server.text import valid_unicode
from server.tools.listing import Listing, all_pages
from server.tools.resources import (
    ResourceFile,
    answering,
    checked,
    size,
)
from server.types.tools import PromptArgumentJSON, PromptJSON, PromptMessageJSON, PromptsJSON


@dataclass
class FilledPrompt:
    """A prompt as the server filled it in: its messages' text, its files (checked), and
    what was left out."""

    description: str | None
    messages: list[PromptMessageJSON]
    files: list[ResourceFile] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)


class ServerPrompts:
    """One server's prompts for its session: listed once, again after it says they changed."""

    def __init__(self, server: str) -> None:
        self._server = server
        self._listing: Listing[list[PromptJSON]] = Listing()

    def changed(self) -> None:
        self._listing.changed()

    async def listing(self, client: Client, limits: ToolLimits) -> PromptsJSON:
        """Its prompts (none when it offers none). Raises ApiError."""
        if client.server_capabilities.prompts is None:
            return {"prompts": []}

        async def fetch() -> list[PromptJSON]:
            async def page(cursor: str | None) -> tuple[list[PromptJSON], str | None]:
                listed = await client.list_prompts(cursor=cursor)
                return [_prompt(p) for p in listed.prompts], listed.next_cursor

            return await all_pages(page, limits.listed_most)

        with answering(self._server, limits.resource_time, "list its prompts"):
            return {"prompts": await self._listing.get(fetch)}

    async def get(
        self,
        client: Client,
        name: str,
        arguments: dict[str, str],
        limits: ToolLimits,
        max_chars: int,
    ) -> FilledPrompt:
        """The prompt `name` filled in with `arguments` (checked against its listing first).
        Its text at most `max_chars` in all. Raises ApiError."""
        listed = await self.listing(client, limits)
        prompt = next((p for p in listed["prompts"] if p["name"] == name), None)
        if prompt is None:
            raise NotFoundError(f"{self._server} offers no prompt named {name!r}")
        check_arguments(prompt, arguments)
        with answering(self._server, limits.resource_time, f"fill in its prompt {name!r}"):
            result = await client.get_prompt(name, arguments)
        return await _filled(result, limits, max_chars, self._server)


def check_arguments(prompt: PromptJSON, arguments: dict[str, str]) -> None:
    """The user's values: only the prompt's own arguments, every required one given."""
    known = {argument["name"] for argument in prompt["arguments"]}
    unknown = sorted(set(arguments) - known)
    if unknown:
        raise BadRequestError(
            f"the prompt {prompt['name']!r} takes no argument {unknown[0]!r}",
            code="invalid_field",
        )
    missing = [
        a["name"] for a in prompt["arguments"] if a["required"] and not arguments.get(a["name"])
    ]
    if missing:
        raise BadRequestError(
            f"the prompt {prompt['name']!r} needs {', '.join(repr(m) for m in missing)}",
            code="missing_field",
        )


async def _filled(
    result: mcp_types.GetPromptResult, limits: ToolLimits, max_chars: int, server: str
) -> FilledPrompt:
    filled = FilledPrompt(_short(result.description, ToolLimits.description_chars), [])
    room = max_chars
    for message in result.messages:
        content = message.content
        text: str | None = None
        if isinstance(content, mcp_types.TextContent):
            text = content.text
        elif isinstance(content, mcp_types.ImageContent):
            # An image is a blob resource by another name: the same checks.
            blob = mcp_types.BlobResourceContents(
                uri=f"{server} prompt image", mime_type=content.mime_type, blob=content.data
            )
            filled.files.extend(await checked([blob], limits, server))
        elif isinstance(content, mcp_types.EmbeddedResource):
            files = await checked([content.resource], limits, server)
            for file in files:
                if file.kind == "text" and file.text is not None:
                    text = file.text if text is None else f"{text}\n\n{file.text}"
                else:
                    filled.files.append(file)
        else:
            kind = "audio" if isinstance(content, mcp_types.AudioContent) else "a resource link"
            filled.left_out.append(f"{kind} ({message.role}'s message)")
            continue
        if text is None:
            continue
        text = valid_unicode(text)
        if len(text) > room:
            filled.left_out.append(f"{len(text) - room:,} characters of text past {max_chars:,}")
            text = text[:room]
        room -= len(text)
        if text:
            filled.messages.append({"role": message.role, "text": text})
    _check_size(filled.files, limits, server)
    return filled


def _check_size(files: list[ResourceFile], limits: ToolLimits, server: str) -> None:
    """All a prompt's files together within a resource's bound (each was, alone)."""
    if sum(len(f.data) for f in files) > limits.resource_bytes:
        raise PayloadTooLargeError(
            f"the files of {server}'s prompt are larger than the "
            f"{size(limits.resource_bytes)} a resource may be",
            code="resource_too_large",
        )


def _prompt(prompt: mcp_types.Prompt) -> PromptJSON:
    arguments: list[PromptArgumentJSON] = [
        {
            "name": valid_unicode(a.name)[: ToolLimits.name_chars],
            "title": _short(a.title, ToolLimits.name_chars),
            "description": _short(a.description, ToolLimits.description_chars),
            "required": bool(a.required),
        }
        for a in (prompt.arguments or [])[: ToolLimits.prompt_arguments]
    ]
    return {
        "name": valid_unicode(prompt.name)[: ToolLimits.name_chars],
        "title": _short(prompt.title, ToolLimits.name_chars),
        "description": _short(prompt.description, ToolLimits.description_chars),
        "arguments": arguments,
    }


def _short(text: str | None, most: int) -> str | None:
    return None if text is None else valid_unicode(text)[:most]
