"""Giving up a sign-in to a remote MCP server, measured on real servers.

    python -m bench.sign_in [ROUNDS]

An OAuth-protected MCP server (streamable HTTP) and its authorization server
(tests/support/oauth_server.py) on loopback, Parley on a real socket. Each round begins a
sign-in (POST …/sign-in: the page the browser would open), then gives it up as the window's
Cancel does (DELETE …/sign-in). Measured: DELETE sent → answered (the flow ended: its way
back refused from then on), and → the server's row says "needs sign-in" again. Then the
browser comes back late with the old page's approval: it must be refused, every round.

A sign-in never holds a reply (the model is told at once that the server needs one), so a
reply's Stop has no sign-in to end: Cancel, and the app's shutdown, are what end one.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from bench.harness import show, summary
from tests.server.tools.test_oauth import begin, browse, start, wait_state
from tests.support.oauth_parts import oauth_parts
from tests.support.upstream import ScriptedUpstream


def main(rounds: int = 20) -> None:
    answered, row = [], []
    refused = 0
    upstream = ScriptedUpstream().start()
    try:
        with tempfile.TemporaryDirectory() as tmp, oauth_parts(Path(tmp)) as parts:
            parley = start(Path(tmp) / "data", upstream, parts.remote)
            try:
                wait_state(parley, "needs_sign_in")
                for _ in range(rounds):
                    url = begin(parley)
                    began = time.perf_counter()
                    reply = parley.call("DELETE", "/api/tools/servers/r/sign-in")
                    answered.append((time.perf_counter() - began) * 1000)
                    assert reply.status == 200, reply.body
                    wait_state(parley, "needs_sign_in")
                    row.append((time.perf_counter() - began) * 1000)
                    page, _ = browse(url)
                    refused += page.status_code == 400
            finally:
                parley.stop()
    finally:
        upstream.stop()
    show("Cancel a sign-in: DELETE sent -> answered, the flow ended (ms)", summary(answered))
    show("Cancel a sign-in: DELETE sent -> the row says needs sign-in (ms)", summary(row))
    print(f"the browser back late, after Cancel: refused {refused}/{rounds}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
