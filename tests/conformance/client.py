"""Parley's MCP client under the official conformance suite (`@modelcontextprotocol/conformance`).

The suite starts this once per client scenario, with its mock server's URL as the last
argument and the scenario's name in `MCP_CONFORMANCE_SCENARIO` (some scenarios give data in
`MCP_CONFORMANCE_CONTEXT`: arguments to send, a client ID registered beforehand).

Everything MCP is Parley's own code, as the app runs it: the URL is written to an `mcp.json`
as a remote server, Parley's tool manager connects to it (the protocol's negotiation, the
listing of tools, a sign-in when the server wants one), and its tools are called through a
turn's toolbox. This file plays only the parts that are not Parley's:

- the model, which picks the tools to call and their arguments (per scenario, below);
- the user, who answers a server's question by accepting the form as Parley draws it (the
  schema's defaults filled), and who signs in when a server asks for it;
- the browser, which opens the authorization URL and comes back to Parley's own redirect
  route (server/routes/sign_in.py), where an authorization server would send it.

It exits 0 when the script ran; whether Parley did right is the suite's verdict.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import urlparse

import anyio
import httpx
import keyring
from starlette.applications import Starlette

from server.agent.toolbox import Answer, Question
from server.errors import ToolCallError
from server.routes import sign_in as sign_in_routes
from server.tools.config import McpConfigFile
from server.tools.manager import ToolManager
from server.tools.mcp_server import McpServer
from server.tools.redirects import CALLBACK_PATH
from tests.support.oauth_keyring import FileKeyring

log = logging.getLogger("conformance")

NAME = "conformance"  # the server's name in mcp.json
READY_WAIT_S = 25.0  # under the suite's 30 s per scenario
# Where Parley's redirect route is served for this run (its host is Parley's loopback address;
# the "browser" below reaches it in-process).
PARLEY = "http://127.0.0.1:8765"
SETTLED = ("ready", "needs_sign_in", "error")
# The client ID metadata document the suite's authorization servers know Parley by (a user
# would give the URL where their Parley's document is published).
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"


async def main(url: str) -> int:
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    log.info("scenario %r at %s (protocol %s)", scenario, url, _version())
    with tempfile.TemporaryDirectory(prefix="parley-conformance-") as tmp:
        # Tokens go to a keyring of this run's own, never the user's.
        keyring.set_keyring(FileKeyring(Path(tmp) / "keyring.json"))
        config = Path(tmp) / "mcp.json"
        entry: dict[str, Any] = {"url": url, "trust": "allow", "oauth": _oauth(context)}
        config.write_text(json.dumps({"mcpServers": {NAME: entry}}), encoding="utf-8")
        manager = ToolManager(McpConfigFile(config))
        async with manager.running():
            server = manager.servers[NAME]
            await _settled(server)
            if server.state == "needs_sign_in":
                await _sign_in(manager, server)
            if server.state != "ready":
                log.error("the server is %s: %s", server.state, server.error)
                return 0
            await _play_model(manager, scenario, context)
            row = server.json()["sign_in"]  # what the server's row in Settings shows
            if row is not None and row["status"] == "needs_sign_in":
                # A call said "Sign in to conformance" (the server wants more scope): the
                # user signs in again from the server's row, and asks again.
                await _settled(server, ("needs_sign_in", "error"))
                await _sign_in(manager, server)
                if server.state == "ready":
                    await _play_model(manager, scenario, context)
    return 0


def _oauth(context: dict[str, Any]) -> dict[str, str]:
    """The entry's sign-in settings, as the user would write them: a client registered with
    the authorization server beforehand, when the scenario gives one."""
    oauth = {"clientMetadataUrl": CLIENT_METADATA_URL}
    if context.get("client_id"):
        oauth["clientId"] = context["client_id"]
        if context.get("client_secret"):
            oauth["clientSecret"] = context["client_secret"]
    return oauth


async def _settled(server: McpServer, states: tuple[str, ...] = SETTLED) -> None:
    with anyio.move_on_after(READY_WAIT_S):
        while server.state not in states:
            await anyio.sleep(0.02)
    log.info("server %s (%s)", server.state, server.error or "no error")


# -- the user and the browser ------------------------------------------------------------


async def _sign_in(manager: ToolManager, server: McpServer) -> None:
    """Sign in as the user would from Settings: Parley gives the authorization URL, the
    browser opens it and follows the authorization server back to Parley's redirect route."""
    flow = manager.sign_in(NAME, PARLEY + CALLBACK_PATH)
    if flow is None:
        log.error("Parley offers no sign-in for %s", NAME)
        return
    with anyio.move_on_after(READY_WAIT_S):
        async with anyio.create_task_group() as group:

            async def until(event: anyio.Event) -> None:
                await event.wait()
                group.cancel_scope.cancel()

            group.start_soon(until, flow.url_ready)
            group.start_soon(until, flow.done)
    if flow.authorization_url is None:
        log.error("no authorization URL: %s", server.sign_in and server.sign_in.error)
        return
    redirect = await _browser(flow.authorization_url)
    if redirect is None:
        return
    await _back_to_parley(manager, redirect)
    await _settled(server)


async def _browser(authorization_url: str) -> str | None:
    """Open the authorization URL; the authorization server (the suite's) consents at once
    and redirects. Returns where it sends the browser: Parley's redirect route."""
    async with httpx.AsyncClient(trust_env=False, timeout=10.0) as browser:
        page = await browser.get(authorization_url)
        for _ in range(10):
            location = page.headers.get("location")
            if not page.is_redirect or location is None:
                log.error("the authorization server answered %s", page.status_code)
                return None
            target = str(page.url.join(location))
            if target.startswith(PARLEY):
                return target
            page = await browser.get(target)
    return None


async def _back_to_parley(manager: ToolManager, redirect: str) -> None:
    """The browser's request to Parley's redirect route, served by that route's own code."""
    app = Starlette(routes=sign_in_routes.routes)
    app.state.services = SimpleNamespace(tools=manager)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=PARLEY) as browser:
        parsed = urlparse(redirect)
        page = await browser.get(f"{parsed.path}?{parsed.query}")
        log.info("Parley's redirect page: %s", page.status_code)


async def _answer(question: Question) -> Answer:
    """The user accepts the form as Parley shows it: the schema's defaults filled in."""
    log.info("asked (%s): %s", question.mode, question.message)
    if question.mode != "form":
        return Answer("accept")
    properties = (question.schema or {}).get("properties")
    content: dict[str, object] = {}
    if isinstance(properties, dict):
        for field, schema in properties.items():
            if isinstance(schema, dict) and "default" in schema:
                content[field] = schema["default"]
            elif isinstance(schema, dict) and schema.get("type") == "boolean":
                content[field] = True  # a confirmation: the user ticks it
    return Answer("accept", content)


# -- the model ---------------------------------------------------------------------------


async def _play_model(manager: ToolManager, scenario: str, context: dict[str, Any]) -> None:
    """Call the tools the scenario's server expects, as a model would: by the functions a
    turn offers, with the arguments it reads from their definitions."""
    tools = manager.toolbox()
    offered = {}
    for spec in tools.specs():
        function = spec["function"]["name"]
        target = tools.target(function)
        if target is not None:
            offered[target.tool] = (function, spec["function"].get("parameters") or {})
    log.info("offered: %s", sorted(offered))
    for tool, arguments in _calls(scenario, context, offered):
        if tool not in offered:
            log.info("%s is not offered", tool)
            continue
        try:
            outcome = await tools.call(offered[tool][0], arguments, ask=_answer)
            log.info("%s -> %s%s", tool, outcome.text[:200], " (error)" * outcome.is_error)
        except ToolCallError as exc:
            log.info("%s failed: %s", tool, exc)
        except Exception:  # a turn's step ends in an error the same way (server/agent)
            log.exception("%s failed", tool)


def _calls(
    scenario: str, context: dict[str, Any], offered: dict[str, tuple[str, dict[str, Any]]]
) -> list[tuple[str, dict[str, Any]]]:
    first = next(iter(offered), None)
    if scenario in ("tools_call", "request-metadata", "http-standard-headers"):
        return [("add_numbers", {"a": 5, "b": 3})]
    if scenario == "sse-retry":
        return [("test_reconnection", {})]
    if scenario == "elicitation-sep1034-client-defaults":
        return [("test_client_elicitation_defaults", {})]
    if scenario == "sep-2322-client-request-state":
        names = ["test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state"]
        return [(name, {}) for name in [*names, "test_mrtr_no_result_type"]]
    if scenario == "json-schema-2020-12-preservation":
        focal = offered.get("json_schema_2020_12_tool")
        return [("json_schema_echo", {"schema": focal[1] if focal else {}})]
    if scenario == "http-custom-headers":
        return [(c["name"], c.get("arguments") or {}) for c in context.get("toolCalls", [])]
    if scenario == "http-invalid-tool-headers":
        return [(tool, _stub_arguments(schema)) for tool, (_, schema) in offered.items()]
    if scenario in ("initialize", "json-schema-ref-no-deref"):
        return []  # connecting and listing the tools is the scenario
    return [(first, {})] if first is not None else []


def _stub_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """What a model would fill in for the required parameters of a tool it knows nothing of."""
    by_type = {"string": "x", "integer": 0, "number": 0, "boolean": False, "object": {}}
    properties = schema.get("properties") or {}
    return {
        name: by_type.get((properties.get(name) or {}).get("type"), "x")
        for name in schema.get("required") or []
    }


def _version() -> str:
    return os.environ.get("MCP_CONFORMANCE_PROTOCOL_VERSION", "the suite's default")


if __name__ == "__main__":
    logging.basicConfig(
        level=logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )
    sys.exit(anyio.run(main, sys.argv[-1]))
