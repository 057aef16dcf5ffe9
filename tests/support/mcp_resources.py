"""An MCP server of resources, prompts and instructions for the tests, written with the
official SDK (over stdio):

    python -m tests.support.mcp_resources LOG_FILE [--only-2025] [--instructions-chars N]
        [--huge-bytes N] [--private]

Resources: a text (`docs://readme`), a PNG (`img://dot.png`), a text of `--huge-bytes`
(`big://huge`), a blob that says it is a PNG and is a binary of no kind Parley takes
(`bad://not-a-png`), a real PNG that says it is a JPEG (`bad://png-says-jpeg`), a text with
a NUL (`bad://nul-text`), and a template (`notes://{name}`); with --private also
`private://secret`, which no other instance has.
Tools: `link` answers with a `resource_link` to the URI it is given; `add_resource` and
`add_prompt` add one and tell the client its list changed, the way of the protocol the call
came in. Prompts: `review` (a required `code`, an optional `language`) and `picture` (a text
and an image). Its `instructions` start with INSTRUCTIONS_MARK (as in
tests/support/resources.py) and are `--instructions-chars` long. LOG_FILE gets a JSON line
for every resource read.
"""

from __future__ import annotations

import base64
import json
import sys
import time

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.server.mcpserver.resources import FunctionResource
from mcp.types import ImageContent, ResourceLink, TextContent
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from tests.support.image_files import PNG
from tests.support.mcp_2025 import serve_stdio

LOG = sys.argv[1]
ONLY_2025 = "--only-2025" in sys.argv
INSTRUCTIONS_MARK = "Resources-server instructions: always read docs://readme first."
README = "# Readme\n\nHello from the readme. ✓"
NOT_A_PNG = b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 4


def option(name: str, default: int) -> int:
    return int(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def record(event: str, **fields: object) -> None:
    with open(LOG, "a", encoding="utf-8") as file:
        file.write(json.dumps({"event": event, "at": time.monotonic(), **fields}) + "\n")


instructions = INSTRUCTIONS_MARK + " " + "x" * option("--instructions-chars", 300)
server = MCPServer(
    "parley-resources-test", instructions=instructions[: option("--instructions-chars", 300)]
)
HUGE = "h" * option("--huge-bytes", 2_000_000)


@server.resource(
    "docs://readme",
    name="readme",
    title="Read me",
    description="The project's readme.",
    mime_type="text/markdown",
)
def readme() -> str:
    record("read", uri="docs://readme")
    return README


@server.resource("img://dot.png", name="dot", mime_type="image/png")
def dot() -> bytes:
    record("read", uri="img://dot.png")
    return PNG


@server.resource("big://huge", name="huge", mime_type="text/plain")
def huge() -> str:
    record("read", uri="big://huge")
    return HUGE


@server.resource("bad://not-a-png", name="not a png", mime_type="image/png")
def not_a_png() -> bytes:
    record("read", uri="bad://not-a-png")
    return NOT_A_PNG


@server.resource("bad://png-says-jpeg", name="png says jpeg", mime_type="image/jpeg")
def png_says_jpeg() -> bytes:
    record("read", uri="bad://png-says-jpeg")
    return PNG


@server.resource("bad://nul-text", name="nul", mime_type="text/plain")
def nul_text() -> str:
    record("read", uri="bad://nul-text")
    return "before\x00after"


@server.resource("notes://{name}", name="note", mime_type="text/plain")
def note(name: str) -> str:
    record("read", uri=f"notes://{name}")
    return f"the note {name}"


if "--private" in sys.argv:

    @server.resource("private://secret", name="secret", mime_type="text/plain")
    def secret() -> str:
        record("read", uri="private://secret")
        return "a secret of this server"


@server.tool()
async def link(uri: str) -> list[TextContent | ResourceLink]:
    """Answers with a link to the resource `uri`."""
    return [
        TextContent(type="text", text=f"See {uri}."),
        ResourceLink(type="resource_link", uri=uri, name="linked", mime_type="text/markdown"),
    ]


@server.tool()
async def add_resource(name: str, ctx: Context) -> str:
    """Adds the text resource `added://NAME` and says the resources changed."""

    def added() -> str:
        return f"added {name}"

    server.add_resource(FunctionResource.from_function(added, uri=f"added://{name}", name=name))
    if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_resources_changed()
    else:
        await ctx.session.send_resource_list_changed()
    return f"added added://{name}"


@server.tool()
async def add_prompt(name: str, ctx: Context) -> str:
    """Adds a prompt `name` and says the prompts changed."""

    def added() -> str:
        return f"the prompt {name}"

    server.prompt(name=name)(added)
    if ctx.session.protocol_version in MODERN_PROTOCOL_VERSIONS:
        await ctx.notify_prompts_changed()
    else:
        await ctx.session.send_prompt_list_changed()
    return f"added the prompt {name}"


@server.prompt(title="Review code", description="Asks for a review of some code.")
def review(code: str, language: str = "python") -> list[Message]:
    return [UserMessage(f"Please review this {language} code:\n\n{code}")]


@server.prompt(description="A text and an image.")
def picture() -> list[Message]:
    image = ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png")
    return [UserMessage("What is in this picture?"), UserMessage(image)]


if __name__ == "__main__":
    anyio.run(serve_stdio, server, ONLY_2025)
