"""The real parts of a sign-in test, started together: an authorization server, the MCP server
it protects, and a keyring file in the test's temp dir set as the process's keyring (see
oauth_server.py and oauth_keyring.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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
