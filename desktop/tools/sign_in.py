"""Signing in to a remote MCP server from the window (OAuth; the server does the protocol:
server/tools/sign_in.py): what a server's sign-in says in words, and the start of one — the
server gives the authorization page's address, the window opens it in the system browser,
and the browser comes back to Parley's own server. The window then only follows the
server's row (its `sign_in.status`) until it says signed in or failed."""

from __future__ import annotations

from urllib.parse import urlparse

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices

from desktop.client import ParleyClient
from desktop.errors import ClientError
from server.types import ToolPartJSON
from server.types.tools import SignInStatus, ToolServerJSON

SIGN_IN = "Sign in to use its tools"
WAITING = "Waiting for the browser…"
SIGNED_IN = "Signed in"


def sign_in_status(server: ToolServerJSON) -> SignInStatus | None:
    """Where the server's sign-in is (None: it asks for none, or it is not a remote one)."""
    sign_in = server.get("sign_in")
    if sign_in is None:
        return None
    if sign_in["status"] is None and server["state"] == "needs_sign_in":
        return "needs_sign_in"
    return sign_in["status"]


def sign_in_words(server: ToolServerJSON) -> str:
    """The server's sign-in in words, for its row ("" when it needs none)."""
    status = sign_in_status(server)
    if status == "needs_sign_in":
        return SIGN_IN
    if status == "waiting_for_browser":
        return WAITING
    if status == "signed_in":
        return SIGNED_IN
    if status == "failed":
        sign_in = server["sign_in"]
        why = sign_in["error"] if sign_in is not None else None
        return f"Sign-in failed: {why}" if why else "Sign-in failed"
    return ""


def needs_sign_in(step: ToolPartJSON) -> bool:
    """A tool step that ended because its server needs a sign-in: the server's words for it
    (server/tools/mcp_server.py, signed_out_words), a call the model made to the stand-in
    offered in place of such a server's tools, or a call whose sign-in lapsed."""
    return step["status"] == "error" and step["result"] == (
        f"Sign in to {step['server']} to use its tools"
    )


def open_in_browser(url: str) -> bool:
    """Open the authorization page in the system browser. The address comes from the
    remote server's authorization server, so only a web page's is opened: a `file:` or an
    app's own scheme would have the desktop run something else."""
    if urlparse(url).scheme not in ("https", "http"):
        return False
    return bool(QDesktopServices.openUrl(QUrl(url)))


async def begin_sign_in(client: ParleyClient, name: str) -> ToolServerJSON:
    """Start signing in to `name` and open its page in the browser: the server as it is
    now. A ClientError in plain words when the server refused or the page cannot be opened
    (then with its address, for the user to open by hand)."""
    server = await client.tool_servers.sign_in(name)
    sign_in = server["sign_in"]
    url = sign_in["authorization_url"] if sign_in is not None else None
    if url and not open_in_browser(url):
        raise ClientError(
            f"Parley could not open your browser to sign in to {name}. Open this address "
            f"in it yourself: {url}"
        )
    return server
