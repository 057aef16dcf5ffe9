"""The local server's front door: Host and Origin checks, then the bearer token.

Any web page the user opens can send requests to a loopback port. Checking `Host` defeats
DNS rebinding (a hostile name resolving to 127.0.0.1 still sends its own name as Host);
checking `Origin` refuses cross-site requests from pages; the per-launch token refuses
everything else. No CORS headers are ever sent, so browsers never expose a response to a
page. The token is compared in constant time and never logged or echoed.
"""

from __future__ import annotations

import hmac

from starlette.types import ASGIApp, Receive, Scope, Send

from server.errors import ApiError, ForbiddenError, UnauthorizedError
from server.http.error_response import ErrorResponse

# The OAuth redirect comes from the user's browser, which has no token: the flow's one-time
# `state` is what admits it (server/tools/redirects.py).
PUBLIC_PATHS = frozenset({"/healthz", "/oauth/callback"})
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def allowed_hosts(bind_host: str, port: int) -> frozenset[str]:
    """The `Host` header values this server answers to."""
    names = set(LOOPBACK_NAMES)
    if bind_host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
        # The user opted in to listening on a specific non-loopback address.
        names.add(f"[{bind_host}]" if ":" in bind_host else bind_host)
    return frozenset(f"{name}:{port}" for name in names)


class SecurityMiddleware:
    def __init__(self, app: ASGIApp, *, token: str, bind_host: str) -> None:
        self.app = app
        self._token = token.encode()
        self._bind_host = bind_host
        self._hosts: dict[int, tuple[frozenset[str], frozenset[str]]] = {}

    def _allowed(self, port: int) -> tuple[frozenset[str], frozenset[str]]:
        """(Host values, Origin values) for the port this request arrived on."""
        if port not in self._hosts:
            hosts = allowed_hosts(self._bind_host, port)
            self._hosts[port] = (hosts, frozenset(f"http://{host}" for host in hosts))
        return self._hosts[port]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        error = self._check(scope)
        if error is not None:
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
                return
            await ErrorResponse(error)(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _check(self, scope: Scope) -> ApiError | None:
        headers: dict[bytes, list[bytes]] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name, []).append(value)
        server = scope.get("server") or (None, 0)
        hosts_ok, origins_ok = self._allowed(int(server[1] or 0))
        hosts = headers.get(b"host", [])
        if len(hosts) != 1 or hosts[0].decode("latin-1").lower() not in hosts_ok:
            return ForbiddenError(
                "this server answers only to its own local address", code="bad_host"
            )
        origins = headers.get(b"origin")
        if origins is not None and (
            len(origins) != 1 or origins[0].decode("latin-1").lower() not in origins_ok
        ):
            return ForbiddenError("cross-origin requests are not allowed", code="bad_origin")
        if scope["path"] in PUBLIC_PATHS:
            return None
        auths = headers.get(b"authorization", [])
        if len(auths) != 1 or not self._token_matches(auths[0]):
            return UnauthorizedError(
                "a valid 'Authorization: Bearer <token>' header is required", code="bad_token"
            )
        return None

    def _token_matches(self, header: bytes) -> bool:
        scheme, _, credential = header.partition(b" ")
        if scheme.lower() != b"bearer":
            return False
        return hmac.compare_digest(credential.strip(), self._token)
