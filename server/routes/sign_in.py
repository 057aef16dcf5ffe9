"""Signing in to remote MCP servers (OAuth 2.1; server/tools/sign_in.py).

    POST /api/tools/servers/{name}/sign-in    start: 202 with the server, its `sign_in`
                                              holding the `authorization_url` for the client
                                              to open in the system browser; 200 if it
                                              connected without the browser; 502 if it failed
    DELETE /api/tools/servers/{name}/sign-in  give up a sign-in waiting for the browser (its
                                              redirect is refused from then on); 200 with
                                              the server, also when none was under way
    POST /api/tools/servers/{name}/sign-out   forget its tokens, end its session; 200
    GET  /oauth/callback                      where the browser comes back (no token: the
                                              browser has none; bound to the flow by `state`,
                                              once, within minutes): an HTML page

The callback is a route of this same loopback server rather than a listener of its own: the
browser comes back to an address that already exists, is checked for a local Host like every
other, and needs nothing started or stopped per flow.
"""

from __future__ import annotations

import html

import anyio
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from server.errors import BadGatewayError, NotFoundError
from server.limits import ToolLimits
from server.routes.services import services
from server.tools.redirects import CALLBACK_PATH, Redirect

URL_WAIT_S = ToolLimits.start_timeout  # discovery and registration before the URL exists


async def sign_in(request: Request) -> JSONResponse:
    svc = services(request)
    name: str = request.path_params["name"]
    host = request.url.hostname or "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    redirect_uri = f"http://{host}:{request.url.port}{CALLBACK_PATH}"
    flow = svc.tools.sign_in(name, redirect_uri)
    server = svc.tools.servers.get(name)
    if flow is None or server is None:
        raise NotFoundError(f"no remote MCP server named {name!r} that can sign in")
    with anyio.move_on_after(URL_WAIT_S):
        async with anyio.create_task_group() as group:

            async def until(event: anyio.Event) -> None:
                await event.wait()
                group.cancel_scope.cancel()

            group.start_soon(until, flow.url_ready)
            group.start_soon(until, flow.done)
    body = server.json()
    status = body["sign_in"]["status"] if body["sign_in"] is not None else None
    if status == "failed":
        error = body["sign_in"]["error"] if body["sign_in"] is not None else None
        raise BadGatewayError(f"signing in to {name} failed: {error}", code="sign_in_failed")
    return JSONResponse(body, status_code=202 if status == "waiting_for_browser" else 200)


async def cancel_sign_in(request: Request) -> JSONResponse:
    svc = services(request)
    name: str = request.path_params["name"]
    server = svc.tools.servers.get(name)
    if server is None or server.sign_in is None:
        raise NotFoundError(f"no remote MCP server named {name!r}")
    if server.sign_in.cancel():
        server.reconnect()  # the attempt that waited for the browser ends; a fresh one asks
    return JSONResponse(server.json())


async def sign_out(request: Request) -> JSONResponse:
    svc = services(request)
    name: str = request.path_params["name"]
    server = await svc.tools.sign_out(name)
    if server is None:
        raise NotFoundError(f"no remote MCP server named {name!r}")
    return JSONResponse(server.json())


async def callback(request: Request) -> HTMLResponse:
    svc = services(request)
    query = request.query_params
    state = query.get("state")
    waiting = None
    if state:
        redirect = Redirect(
            state=state,
            code=query.get("code"),
            iss=query.get("iss"),
            error=query.get("error"),
            error_description=query.get("error_description"),
        )
        waiting = svc.tools.redirects.take(redirect)
    if waiting is None:
        return _page(
            "Sign-in link not valid",
            "This sign-in link is not valid: it was used already, it expired, or Parley did "
            "not start it. Start the sign-in again from Parley.",
            400,
        )
    with anyio.move_on_after(URL_WAIT_S):
        await waiting.finished.wait()
    server = waiting.server
    if not waiting.finished.is_set():
        return _page("Signing in", f"Parley is still connecting to {server}.", 202)
    if waiting.failure is not None:
        return _page("Sign-in failed", f"Signing in to {server} failed: {waiting.failure}", 502)
    return _page("Signed in", f"Signed in to {server}. You can close this window.", 200)


def _page(title: str, text: str, status: int) -> HTMLResponse:
    body = (
        '<!doctype html><html><head><meta charset="utf-8">'
        f"<title>{html.escape(title)} — Parley</title></head>"
        f"<body><h1>{html.escape(title)}</h1><p>{html.escape(text)}</p></body></html>"
    )
    # The page's URL carries the code: it is not cached, nor sent on as a referrer.
    headers = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
    return HTMLResponse(body, status_code=status, headers=headers)


routes = [
    Route("/api/tools/servers/{name}/sign-in", sign_in, methods=["POST"]),
    Route("/api/tools/servers/{name}/sign-in", cancel_sign_in, methods=["DELETE"]),
    Route("/api/tools/servers/{name}/sign-out", sign_out, methods=["POST"]),
    Route(CALLBACK_PATH, callback, methods=["GET"]),
]
