"""Signing in to one remote (streamable HTTP) MCP server with OAuth 2.1: the SDK's
`OAuthClientProvider` does the protocol (protected-resource metadata discovery, authorization
server metadata, dynamic client registration, PKCE, the code exchange, refresh, the resource
indicator, the issuer binding); Parley gives it a place for tokens (server/tools/tokens.py), a
way to show the authorization URL (the API returns it; the client opens the browser: the server
never does) and the redirect (server/tools/redirects.py).

A connect that needs the user cannot go on by itself: a 401 with no sign-in under way, or a
flow that failed, *blocks* the attempt (McpServer cancels it and waits for a sign-in, instead
of retrying). Errors are never raised inside the SDK's HTTP auth flow for that: the streamable
HTTP transport logs and swallows them, and the connect would then wait out its timeout.

Until the user has signed in once, a connect goes without the provider, only watching for a
401: the provider would register a client (with a redirect URI) before it could stop.

A server that wants more scope than a call's token has (a 403 `insufficient_scope`: a step-up)
blocks the attempt like a 401, and the SDK's request for the wider scope (what the tokens were
granted and what the server asks now) is kept: the user's next sign-in drops the tokens that
do not do and asks for it through the browser.

The entry's `oauth` (server/tools/config.py) may name a client the user registered
beforehand, or a client ID metadata document; without either, Parley registers dynamically.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp.client._transport import TransportStreams
from mcp.client.auth import OAuthClientProvider, OAuthFlowError
from mcp.client.auth.utils import (
    build_protected_resource_metadata_discovery_urls,
    create_oauth_metadata_request,
    extract_resource_metadata_from_www_auth,
    handle_protected_resource_response,
    union_scopes,
)
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
)
from mcp.shared.auth_utils import resource_url_from_server_url
from pydantic import AnyUrl

from server.limits import ToolLimits
from server.logs import keep_secret
from server.tools.client import HTTP_TIMEOUT, http_transport
from server.tools.redirects import CALLBACK_PATH, PendingRedirects, Redirect, Waiting
from server.tools.tokens import ServerTokens, TokenStore
from server.types.tools import SignInJSON, SignInStatus, ToolServerOAuthJSON

log = logging.getLogger(__name__)

# A client ID metadata document (CIMD) needs an HTTPS URL Parley serves it from; until there is
# one the SDK registers Parley dynamically (RFC 7591) wherever the server allows it.
CLIENT_METADATA_URL: str | None = None
PLACEHOLDER_REDIRECT = f"http://127.0.0.1{CALLBACK_PATH}"


class Flow:
    """One sign-in the user started: from the authorization URL to the server's reconnect."""

    def __init__(self, redirect_uri: str) -> None:
        self.redirect_uri = redirect_uri
        self.authorization_url: str | None = None
        self.state = ""  # the SDK's, read from the authorization URL
        self.url_ready = anyio.Event()
        self.done = anyio.Event()
        self.waiting: Waiting | None = None


class SignIn:
    """The sign-in of one remote server; McpServer's connect goes through `transport()`."""

    def __init__(
        self,
        server: str,
        url: str,
        tokens: TokenStore,
        redirects: PendingRedirects,
        oauth: ToolServerOAuthJSON | None = None,
    ) -> None:
        self.server = server
        self.url = url
        self._oauth: ToolServerOAuthJSON = oauth or {}
        keep_secret(self._oauth.get("clientSecret"))
        # The scope a step-up asked for, until a sign-in gets it.
        self._wanted_scope: str | None = None
        self._tokens = tokens
        self._redirects = redirects
        self.status: SignInStatus | None = None
        self.issuer: str | None = None
        self.resource: str | None = None
        self.error: str | None = None
        self._flow: Flow | None = None
        self._www_authenticate: httpx2.Response | None = None
        self._provider: _Provider | None = None
        # Set by McpServer: end the attempt (it waits for a sign-in); pause its start deadline.
        self.block: Callable[[], None] = lambda: None
        self.waiting_on_person: Callable[[bool], None] = lambda waiting: None

    def json(self) -> SignInJSON:
        flow = self._flow
        return {
            "status": self.status,
            "issuer": self.issuer,
            "resource": self.resource,
            "authorization_url": flow.authorization_url if flow is not None else None,
            "error": self.error,
        }

    @property
    def blocked(self) -> bool:
        """The last attempt cannot go on without the user."""
        return self.status in ("needs_sign_in", "failed") and self._flow is None

    # -- what the API does --------------------------------------------------------------

    def begin(self, redirect_uri: str) -> Flow:
        """Start a sign-in (McpServer then reconnects through it); one already waiting for
        the browser is the one returned."""
        if self._flow is not None and not self._flow.done.is_set():
            return self._flow
        self._flow = Flow(redirect_uri)
        self.error = None
        return self._flow

    def cancel(self) -> bool:
        """The user gave up the sign-in waiting for the browser: its redirect is refused from
        now on (False: none was under way). The server then connects as it would have."""
        if self._flow is None:
            return False
        self._end_flow("the sign-in was cancelled")
        self.status = "needs_sign_in"
        return True

    async def sign_out(self) -> None:
        self._end_flow("signed out")
        self.status, self._wanted_scope = None, None
        await self._tokens.forget(self.server)

    # -- the connect --------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def transport(self, headers: dict[str, str]) -> AsyncIterator[TransportStreams]:
        self._www_authenticate = None
        self._provider = None
        if self._flow is None and not await self._tokens.signed_in(self.server):
            hooks = {"response": [self._watch_for_401]}
            http = httpx2.AsyncClient(headers=headers, timeout=HTTP_TIMEOUT, event_hooks=hooks)
        else:
            if self._flow is not None and self._wanted_scope is not None:
                await self._tokens.forget_tokens(self.server)  # they lack the scope wanted
            self._provider = self._new_provider()
            http = _FlowWatchingClient(
                self._failed, headers=headers, timeout=HTTP_TIMEOUT, auth=self._provider
            )
        async with http_transport(self.url, http) as streams:
            yield streams

    def connected(self) -> None:
        """The server is ready: through a sign-in when the provider was used."""
        if self._provider is not None:
            self.status, self.error = "signed_in", None
            self._wanted_scope = None
            self._learn_from_provider()
        else:
            self.status = None
        self._end_flow(None)

    def ended(self, stopping: bool) -> None:
        """The attempt ended without connecting (a stop, a reconnect, a failure): the flow
        it was serving ends too (its pending redirect discarded); at a stop, any flow."""
        flow = self._flow
        if flow is not None and (stopping or flow.waiting is not None):
            self._end_flow("the sign-in was cancelled")

    async def discover(self) -> None:
        """After a 401 with no sign-in: which issuer and resource the server wants (its
        protected-resource metadata, RFC 9728), for the user to see before signing in."""
        response = self._www_authenticate
        if response is None:
            return
        self.resource = resource_url_from_server_url(self.url)
        urls = build_protected_resource_metadata_discovery_urls(
            extract_resource_metadata_from_www_auth(response), self.url
        )
        with anyio.move_on_after(ToolLimits.sign_in_discovery):
            async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT) as http:
                for url in urls:
                    try:
                        found = await http.send(create_oauth_metadata_request(url))
                    except httpx2.HTTPError:
                        continue
                    metadata = await handle_protected_resource_response(found)
                    if metadata is not None:
                        self.resource = str(metadata.resource) if metadata.resource else None
                        servers = metadata.authorization_servers
                        self.issuer = str(servers[0]) if servers else None
                        return

    async def _watch_for_401(self, response: httpx2.Response) -> None:
        if response.status_code == 401 and self._www_authenticate is None:
            self._www_authenticate = response
            self.status = "needs_sign_in"
            log.info("MCP server %r needs a sign-in", self.server)
            self.block()

    # -- the SDK's provider -------------------------------------------------------------

    def _new_provider(self) -> _Provider:
        redirect_uri = self._flow.redirect_uri if self._flow is not None else PLACEHOLDER_REDIRECT
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(redirect_uri)],
            client_name="Parley",
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        )
        registered = None
        if client_id := self._oauth.get("clientId"):
            secret = self._oauth.get("clientSecret")
            registered = OAuthClientInformationFull(
                client_id=client_id,
                client_secret=secret,
                redirect_uris=[AnyUrl(redirect_uri)],
                token_endpoint_auth_method="client_secret_basic" if secret else "none",
            )
        browser = self._flow.redirect_uri if self._flow is not None else None
        storage = self._tokens.storage(self.server, self._flow_issuer, browser, registered)
        provider = _Provider(
            self.url,
            metadata,
            storage,
            redirect_handler=self._show_authorization_url,
            callback_handler=self._wait_for_redirect,
            client_metadata_url=self._oauth.get("clientMetadataUrl", CLIENT_METADATA_URL),
        )
        provider.wanted_scope = self._wanted_scope
        return provider

    def _flow_issuer(self) -> str | None:
        context = self._provider.context if self._provider is not None else None
        if context is None:
            return None
        if context.oauth_metadata is not None:
            return str(context.oauth_metadata.issuer)
        return context.auth_server_url

    def _learn_from_provider(self) -> None:
        if self._provider is None:
            return
        issuer = self._flow_issuer()
        self.issuer = issuer or self.issuer
        self.resource = self._provider.context.get_resource_url()

    async def _show_authorization_url(self, url: str) -> None:
        """The SDK's redirect handler: the URL is given to the API's client (POST sign-in)."""
        self._learn_from_provider()
        flow = self._flow
        state = parse_qs(urlparse(url).query).get("state", [""])[0]
        if flow is None or flow.done.is_set() or not state:
            # Stored tokens no longer do (revoked, the issuer changed, a step-up wants more
            # scope): the user must sign in, for the scope the SDK asks for now.
            self._wanted_scope = parse_qs(urlparse(url).query).get("scope", [None])[0]
            self.status = "needs_sign_in"
            self.block()
            await anyio.sleep_forever()
            return
        if flow.waiting is not None:
            # This flow's browser came back already: the tokens it got did not do.
            self._failed("the server refused the tokens its authorization server gave")
            await anyio.sleep_forever()
        flow.state = state
        flow.waiting = self._redirects.expect(state, self.server)
        flow.authorization_url = url
        self.status = "waiting_for_browser"
        self.waiting_on_person(True)
        flow.url_ready.set()

    async def _wait_for_redirect(self) -> AuthorizationCodeResult:
        """The SDK's callback handler: the redirect the browser brings back (or none, when
        the flow expires or is cancelled: the attempt is then blocked, not failed)."""
        flow = self._flow
        waiting = flow.waiting if flow is not None else None
        if flow is None or waiting is None:
            await anyio.sleep_forever()
            raise AssertionError  # not reached
        redirect: Redirect | None = None
        try:
            with anyio.move_on_after(self._redirects.ttl):
                await waiting.came.wait()
            redirect = waiting.redirect
        finally:
            self.waiting_on_person(False)
            if redirect is None:
                self._redirects.discard(flow.state)
        if redirect is None:
            self._failed(f"no answer from the browser within {self._redirects.ttl / 60:g} min")
        elif redirect.error is not None or not redirect.code:
            why = redirect.error_description or redirect.error or "no authorization code"
            self._failed(f"the authorization server said: {why}")
        if redirect is None or not redirect.code or redirect.error is not None:
            await anyio.sleep_forever()
            raise AssertionError  # not reached
        flow.authorization_url = None
        return AuthorizationCodeResult(code=redirect.code, state=redirect.state, iss=redirect.iss)

    def _failed(self, reason: str) -> None:
        log.warning("MCP server %r: sign-in failed: %s", self.server, reason)
        self.status, self.error = "failed", reason
        self._end_flow(reason)
        self.block()

    def _end_flow(self, failure: str | None) -> None:
        flow, self._flow = self._flow, None
        if flow is None:
            return
        flow.authorization_url = None
        if flow.waiting is not None:
            self._redirects.discard(flow.state)
            flow.waiting.failure = failure
            flow.waiting.finished.set()
        flow.done.set()


class _Provider(OAuthClientProvider):
    """The SDK's provider, knowing when stored tokens expire, and asking for the scope a
    step-up wanted as well as what a 401 asks for: after a step-up, the sign-in the user
    starts meets a 401 first (its tokens were dropped), whose challenge names only the
    narrower scope."""

    wanted_scope: str | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        storage = self.context.storage
        if isinstance(storage, ServerTokens):
            storage.metadata = lambda: self.context.oauth_metadata

    async def _initialize(self) -> None:
        """The stored tokens, and when they expire: the SDK only learns that from a token
        response, so tokens read back at a launch would count as valid however old. With
        it, their issuer's metadata: before any discovery the SDK would send a refresh to
        the MCP server's own origin, which is not the issuer."""
        await super()._initialize()
        storage = self.context.storage
        if not isinstance(storage, ServerTokens) or self.context.current_tokens is None:
            return
        kept = await storage.expiry()
        if kept is not None and self.context.oauth_metadata is None:
            self.context.token_expiry_time, self.context.oauth_metadata = kept

    async def _perform_authorization(self) -> httpx2.Request:
        if self.wanted_scope:
            scope = union_scopes(self.context.client_metadata.scope, self.wanted_scope)
            self.context.client_metadata.scope = scope
        return await super()._perform_authorization()


class _FlowWatchingClient(httpx2.AsyncClient):
    """An HTTP client that tells the sign-in when the SDK's OAuth flow fails (a refused
    registration, a code exchange refused, a state or issuer that does not match): the
    transport would swallow the error."""

    def __init__(self, on_failed: Callable[[str], None], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._on_failed = on_failed

    async def send(self, request: httpx2.Request, **kwargs: Any) -> httpx2.Response:
        try:
            return await super().send(request, **kwargs)
        except OAuthFlowError as exc:
            self._on_failed(str(exc)[:300])
            raise
