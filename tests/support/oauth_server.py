"""An OAuth-protected streamable-HTTP MCP server and its authorization servers, written with the
official SDK's server-side auth pieces (mcp.server.auth), each on uvicorn at 127.0.0.1:0 in a
thread of the test process, so a test can change them while Parley runs:

- `AuthServer`: the SDK's authorization server routes (metadata, dynamic registration,
  /authorize, /token, /revoke) over an in-memory provider that approves every authorization at
  once (no login page: the test's "browser" follows the redirect). It records every request's
  raw bytes, so a test can see which secrets reached it; `expire_first` makes the first access
  token it issues expire at once (`expires_in: 0`), so the client must refresh.
- `ProtectedServer`: an MCP server (`echo`) behind the SDK's bearer middleware, its protected-
  resource metadata naming the authorization server of the moment (`use()` switches it);
  it accepts only tokens that authorization server issued for it. It records every bearer token
  it is sent.
"""

from __future__ import annotations

import secrets
import time
from urllib.parse import urlparse

from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.routes import build_resource_metadata_url, create_auth_routes
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken, ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from server.serve import BackgroundServer, bind


class AutoApprove:
    """An in-memory OAuthAuthorizationServerProvider that says yes to every authorization."""

    def __init__(self) -> None:
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.expire_first = False
        self.grants: list[str] = []  # "authorization_code" | "refresh_token", in order
        self.issued: list[str] = []  # every access and refresh token, in order

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        self.grants.append("authorization_code")
        return self._issue(client, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        self.refresh.pop(refresh_token.token, None)
        for token, access in list(self.access.items()):  # rotated: the old access token ends
            if access.client_id == client.client_id:
                del self.access[token]
        self.grants.append("refresh_token")
        return self._issue(client, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        return self.access.get(token)

    def expire_all_access(self) -> None:
        """Every access token issued so far is past its lifetime: the resource server refuses
        them (the SDK's bearer middleware checks `expires_at`)."""
        for token, access in self.access.items():
            self.access[token] = access.model_copy(update={"expires_at": int(time.time()) - 60})

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def _issue(
        self, client: OAuthClientInformationFull, scopes: list[str], resource: str | None
    ) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self.issued += [access, refresh]
        client_id = client.client_id or ""
        # The resource server keeps accepting a token said to be expired until it is rotated:
        # what is tested is that the client refreshes when the token's lifetime says so.
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        expires_in = 0 if self.expire_first and len(self.grants) == 1 else 3600
        return OAuthToken(
            access_token=access,
            refresh_token=refresh,
            expires_in=expires_in,
            scope=" ".join(scopes) or None,
        )


class Recorded:
    """An ASGI app's HTTP requests, raw (path, query, headers, body), for finding secrets."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: list[bytes] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = b"\n".join(k + b": " + v for k, v in scope["headers"])
        self.seen.append(scope["raw_path"] + b"?" + scope["query_string"] + b"\n" + headers + body)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def text(self) -> str:
        return b"\n\n".join(self.seen).decode("latin-1")


class Served:
    def __init__(self, app: ASGIApp) -> None:
        self.recorded = Recorded(app)
        self._server = BackgroundServer(self.recorded, bind("127.0.0.1", 0))  # type: ignore[arg-type]
        self.base_url = f"http://127.0.0.1:{self._server.port}"

    def start(self) -> None:
        self._server.start(timeout=20)

    def stop(self) -> None:
        self._server.stop(timeout=10)


class AuthServer(Served):
    def __init__(self) -> None:
        self.provider = AutoApprove()
        self._routes_app = Starlette()  # replaced below, once the port (the issuer) is known
        super().__init__(self._dispatch)
        routes = create_auth_routes(
            self.provider,  # type: ignore[arg-type]
            issuer_url=AnyHttpUrl(self.base_url),
            client_registration_options=ClientRegistrationOptions(enabled=True),
            revocation_options=RevocationOptions(enabled=True),
        )
        self._routes_app = Starlette(routes=routes)

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._routes_app(scope, receive, send)

    @property
    def issuer(self) -> str:
        return str(AnyHttpUrl(self.base_url))


class ProtectedServer(Served):
    """The MCP server at `url`, trusting `auth` (until `use()` names another)."""

    def __init__(self, auth: AuthServer) -> None:
        self.auth = auth
        self.bearers: list[str] = []
        mcp = MCPServer("parley-oauth-test")

        @mcp.tool()
        async def echo(text: str) -> str:
            """Say `text` back."""
            return f"echo: {text}"

        self._mcp_app = mcp.streamable_http_app(host="127.0.0.1")
        super().__init__(self._dispatch)
        self.url = f"{self.base_url}/mcp"
        verifier = _CurrentIssuer(self)
        metadata_url = build_resource_metadata_url(AnyHttpUrl(self.url))
        self._metadata_path = urlparse(str(metadata_url)).path
        guarded = RequireAuthMiddleware(self._mcp_app, [], metadata_url)
        self._guarded = AuthenticationMiddleware(
            AuthContextMiddleware(guarded),
            backend=BearerAuthBackend(verifier, resource_server_url=AnyHttpUrl(self.url)),
        )

    def use(self, auth: AuthServer) -> None:
        self.auth = auth

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan: the MCP app's session manager
            await self._mcp_app(scope, receive, send)
            return
        if scope["path"] == self._metadata_path:
            metadata = ProtectedResourceMetadata(
                resource=AnyHttpUrl(self.url),
                authorization_servers=[AnyHttpUrl(self.auth.base_url)],
            )
            body = metadata.model_dump(mode="json", exclude_none=True)
            await JSONResponse(body)(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"authorization":
                self.bearers.append(value.decode("latin-1").removeprefix("Bearer "))
        await self._guarded(scope, receive, send)


class _CurrentIssuer:
    """Accepts the tokens of the authorization server the resource trusts now."""

    def __init__(self, resource: ProtectedServer) -> None:
        self._resource = resource

    async def verify_token(self, token: str) -> AccessToken | None:
        return await self._resource.auth.provider.load_access_token(token)


def start_all(*servers: Served) -> None:
    for each in servers:
        each.start()


def stop_all(*servers: Served) -> None:
    for each in servers:
        each.stop()


def secrets_of(provider: AutoApprove) -> set[str]:
    """Every token a provider ever issued, and its clients' secrets."""
    found = set(provider.issued)
    found |= {c.client_secret for c in provider.clients.values() if c.client_secret}
    return found
