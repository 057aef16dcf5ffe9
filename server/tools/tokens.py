"""Where remote MCP servers' OAuth tokens are kept: the system keyring, keyed by the server and
the issuer that granted them; never in mcp.json, logs or exports.

One keyring item per (server, issuer) holds the tokens and the client registration that issuer
made; one item per server names the issuer of its current sign-in (and every issuer it has
had, so a sign-out forgets them all). A record keeps when its access token expires (`expires_at`,
a time, not the token's relative `expires_in`) and its issuer's metadata (public: where its
token endpoint is): tokens read back at the next launch are known to have expired, so the SDK
refreshes them at their issuer first, instead of sending one the server refuses and asking
the user for a sign-in a refresh makes needless.

The SDK binds a registration to its issuer (SEP-2352: `OAuthClientInformationFull.issuer`) and
drops it, with the tokens, when a server's metadata points at another issuer; the record keeps
that binding, so it holds across launches too.

Without a usable keyring (none on this system, locked, refused) the tokens are kept in memory
for this launch only, and the log says so once.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken
from pydantic import ValidationError

from server.limits import ToolLimits
from server.logs import keep_secret

log = logging.getLogger(__name__)

SERVICE = "parley-mcp-oauth"


class TokenStore:
    """The keyring (else this launch's memory) for every server's sign-in."""

    def __init__(self) -> None:
        self._memory: dict[str, str] = {}
        self._keyring_broken = False

    # -- raw items ----------------------------------------------------------------------

    async def _get(self, user: str) -> str | None:
        if not self._keyring_broken:
            try:
                with anyio.fail_after(ToolLimits.keyring_wait):
                    found: str | None = await anyio.to_thread.run_sync(
                        _keyring_get, user, abandon_on_cancel=True
                    )
                return found
            except Exception as exc:  # no backend, locked, refused, hung
                self._broken(exc)
        return self._memory.get(user)

    async def _set(self, user: str, value: str | None) -> None:
        if value is None:
            self._memory.pop(user, None)
        else:
            self._memory[user] = value
        if self._keyring_broken:
            return
        try:
            with anyio.fail_after(ToolLimits.keyring_wait):
                await anyio.to_thread.run_sync(_keyring_set, user, value, abandon_on_cancel=True)
        except Exception as exc:
            self._broken(exc)
            return
        self._memory.pop(user, None)  # the keyring has it

    def _broken(self, exc: Exception) -> None:
        if not self._keyring_broken:
            log.warning(
                "no usable keyring (%s): MCP sign-ins are kept for this launch only",
                type(exc).__name__,
            )
        self._keyring_broken = True

    # -- a server's records -------------------------------------------------------------

    async def _index(self, server: str) -> dict[str, Any]:
        raw = await self._get(server)
        try:
            index = json.loads(raw) if raw else {}
        except ValueError:
            index = {}
        return index if isinstance(index, dict) else {}

    async def current_issuer(self, server: str) -> str | None:
        issuer = (await self._index(server)).get("issuer")
        return issuer if isinstance(issuer, str) else None

    async def record(self, server: str, issuer: str) -> dict[str, Any]:
        raw = await self._get(_record_key(server, issuer))
        try:
            record = json.loads(raw) if raw else {}
        except ValueError:
            record = {}
        return record if isinstance(record, dict) else {}

    async def put(self, server: str, issuer: str, **fields: Any) -> None:
        """Merge `fields` into the (server, issuer) record; that issuer becomes the current."""
        record = await self.record(server, issuer)
        record.update(fields)
        await self._set(_record_key(server, issuer), json.dumps(record))
        index = await self._index(server)
        issuers = [i for i in index.get("issuers", []) if isinstance(i, str) and i != issuer]
        await self._set(server, json.dumps({"issuer": issuer, "issuers": [*issuers, issuer]}))

    async def signed_in(self, server: str) -> bool:
        """Whether the server has tokens from a sign-in (its current issuer's)."""
        issuer = await self.current_issuer(server)
        return issuer is not None and "tokens" in await self.record(server, issuer)

    async def forget(self, server: str) -> None:
        """Sign out: every issuer's tokens and registration for the server, gone."""
        index = await self._index(server)
        for issuer in index.get("issuers", []):
            if isinstance(issuer, str):
                await self._set(_record_key(server, issuer), None)
        await self._set(server, None)

    async def forget_tokens(self, server: str) -> None:
        """The current issuer's tokens gone, its registration kept: the next connect signs
        in through the browser (to ask for more scope than those tokens were granted)."""
        issuer = await self.current_issuer(server)
        if issuer is not None and "tokens" in (record := await self.record(server, issuer)):
            del record["tokens"]
            await self._set(_record_key(server, issuer), json.dumps(record))

    def storage(
        self,
        server: str,
        issuer: Callable[[], str | None],
        redirect_uri: str | None,
        registered: OAuthClientInformationFull | None = None,
    ) -> ServerTokens:
        return ServerTokens(self, server, issuer, redirect_uri, registered)


class ServerTokens:
    """The SDK's `TokenStorage` for one server's connection: what it reads is the current
    issuer's record; what it writes goes to the record of the issuer the flow is talking to
    (`issuer()`: from the metadata the SDK discovered). A client the user registered
    beforehand (`registered`, from mcp.json) is the registration, always."""

    def __init__(
        self,
        store: TokenStore,
        server: str,
        issuer: Callable[[], str | None],
        redirect_uri: str | None,
        registered: OAuthClientInformationFull | None = None,
    ) -> None:
        self._store = store
        self._server = server
        self._issuer = issuer
        self._redirect_uri = redirect_uri
        self._registered = registered
        # The issuer's metadata the flow found (set by the provider): kept with the tokens.
        self.metadata: Callable[[], OAuthMetadata | None] = lambda: None

    async def _current(self) -> dict[str, Any]:
        issuer = await self._store.current_issuer(self._server)
        return await self._store.record(self._server, issuer) if issuer else {}

    async def get_tokens(self) -> OAuthToken | None:
        found = (await self._current()).get("tokens")
        try:
            tokens = OAuthToken.model_validate(found) if found else None
        except ValidationError:
            return None
        if tokens is not None:
            _keep_secret(tokens)
        return tokens

    async def expiry(self) -> tuple[float, OAuthMetadata] | None:
        """When the current access token expires (a time.time()), with the metadata of the
        issuer that granted it (where its refresh goes), if both were kept."""
        record = await self._current()
        expires_at, metadata = record.get("expires_at"), record.get("metadata")
        if not isinstance(expires_at, int | float) or not isinstance(metadata, dict):
            return None
        try:
            return float(expires_at), OAuthMetadata.model_validate(metadata)
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        _keep_secret(tokens)
        issuer = self._issuer()
        if issuer is None:  # the SDK always discovers one first; never guess
            return
        expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        metadata = self.metadata()
        await self._store.put(
            self._server,
            issuer,
            tokens=tokens.model_dump(mode="json"),
            expires_at=expires_at,
            metadata=metadata.model_dump(mode="json") if metadata is not None else None,
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._registered is not None:
            return self._registered
        found = (await self._current()).get("client")
        try:
            client = OAuthClientInformationFull.model_validate(found) if found else None
        except ValidationError:
            return None
        # The authorization server compares redirect URIs exactly, and another launch listened
        # on another port: a registration for another URI is useless to a sign-in, so the SDK
        # registers anew. A connect with no sign-in under way (`redirect_uri` None) sends
        # nobody to the browser: the registration still refreshes the tokens it was given.
        uris = {str(u) for u in client.redirect_uris or []} if client is not None else set()
        if client is None or (self._redirect_uri is not None and self._redirect_uri not in uris):
            return None
        keep_secret(client.client_secret)
        return client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        if self._registered is not None:
            return  # the user's registration is in mcp.json; the keyring holds no copy
        keep_secret(client_info.client_secret)
        issuer = client_info.issuer or self._issuer()
        if issuer is None:
            return
        # `issuer` is in the record: the SDK's binding of the registration to its issuer.
        await self._store.put(self._server, issuer, client=client_info.model_dump(mode="json"))


def _keep_secret(tokens: OAuthToken) -> None:
    keep_secret(tokens.access_token)
    keep_secret(tokens.refresh_token)


def _record_key(server: str, issuer: str) -> str:
    return f"{server} {issuer}"


def _keyring_get(user: str) -> str | None:
    import keyring

    found: str | None = keyring.get_password(SERVICE, user)
    return found


def _keyring_set(user: str, value: str | None) -> None:
    import keyring
    import keyring.errors

    if value is not None:
        keyring.set_password(SERVICE, user, value)
        return
    with contextlib.suppress(keyring.errors.PasswordDeleteError):  # nothing kept there
        keyring.delete_password(SERVICE, user)
