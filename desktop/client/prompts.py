"""A tool server's prompts (MCP), for the window: the composer's slash commands, listed with
their arguments and filled in by their server with the user's values (text for the composer,
files as attachments sent with the message by id). Composed into ParleyClient as
`client.prompts`; calls go through its one HTTP client."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from desktop.client.answers import shaped
from desktop.client.attachments import ATTACHMENT_KEYS
from desktop.client.paths import segment
from desktop.errors import ClientError
from server.types.keys import required_keys
from server.types.tools import (
    PromptArgumentJSON,
    PromptJSON,
    PromptMessageJSON,
    PromptResultJSON,
    PromptsJSON,
)

Call = Callable[[str, str, object], Awaitable[object]]

PROMPT_KEYS = required_keys(PromptJSON)
ARGUMENT_KEYS = required_keys(PromptArgumentJSON)


class PromptsApi:
    def __init__(self, call: Call) -> None:
        self._call = call

    async def listing(self, server: str) -> list[PromptJSON]:
        """The prompts `server` offers (ClientError 503 `server_not_ready` when it is not
        running)."""
        path = f"/api/tools/servers/{segment(server)}/prompts"
        found = shaped(PromptsJSON, ("prompts",), await self._call("GET", path, None))
        if not isinstance(found["prompts"], list):
            raise ClientError("the server's list of prompts is malformed")
        prompts = [shaped(PromptJSON, PROMPT_KEYS, p) for p in found["prompts"]]
        for prompt in prompts:
            if not isinstance(prompt["arguments"], list):
                raise ClientError("the server's list of prompts is malformed")
            for argument in prompt["arguments"]:
                shaped(dict, ARGUMENT_KEYS, argument)
        return prompts

    async def fill(self, server: str, prompt: str, arguments: dict[str, str]) -> PromptResultJSON:
        """The prompt filled in by its server with `arguments`: its messages' text, its files
        as attachments, and a note of what was left out. ClientError 400 naming an argument
        missing or not taken."""
        path = f"/api/tools/servers/{segment(server)}/prompts/{segment(prompt)}"
        body = {"arguments": arguments}
        keys = ("description", "messages", "attachments", "note")
        result = shaped(PromptResultJSON, keys, await self._call("POST", path, body))
        if not isinstance(result["messages"], list) or not isinstance(result["attachments"], list):
            raise ClientError("the server's answer is not a filled-in prompt")
        for message in result["messages"]:
            shaped(PromptMessageJSON, ("role", "text"), message)
        for attachment in result["attachments"]:
            shaped(dict, ATTACHMENT_KEYS, attachment)
        return result
