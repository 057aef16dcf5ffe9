"""The real parts of a sign-in test, started together: an authorization server, the MCP server
it protects, and a keyring file in the test's temp dir set as the process's keyring (see
oauth_server.py and oauth_keyring.py); and the window's browser (`Browser`)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import keyring

from tests.support.oauth_keyring import FileKeyring
from tests.support.oauth_server import AuthServer, ProtectedServer


@dataclass
class OAuthParts:
    auth: AuthServer
    remote: ProtectedServer
    ring: FileKeyring


@contextlib.contextmanager
def oauth_parts(tmp_path: Path) -> Iterator[OAuthParts]:
    previous = keyring.get_keyring()
    ring = FileKeyring(tmp_path / "keyring.json")
    keyring.set_keyring(ring)
    auth = AuthServer()
    auth.start()
    remote = ProtectedServer(auth)
    remote.start()
    try:
        yield OAuthParts(auth, remote, ring)
    finally:
        remote.stop()
        auth.stop()
        keyring.set_keyring(previous)


class Browser:
    """QDesktopServices.openUrl as the test's browser: the authorization server approves at
    once and redirects back to Parley; the page Parley answers is kept. `follows` False: it
    only notes the address (the user has not finished in the browser yet)."""

    def __init__(self, follows: bool = True) -> None:
        self.follows = follows
        self.opened: list[str] = []
        self.pages: list[httpx.Response] = []

    def open_url(self, url: Any) -> bool:
        address = url.toString()
        self.opened.append(address)
        if self.follows:  # off the GUI thread: Parley's page waits for its server's connect
            threading.Thread(target=self.visit, args=(address,), daemon=True).start()
        return True

    def visit(self, address: str) -> httpx.Response:
        with httpx.Client(trust_env=False, timeout=30, follow_redirects=True) as browser:
            page = browser.get(address)
        self.pages.append(page)
        return page
