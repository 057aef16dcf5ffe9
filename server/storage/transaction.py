"""One logical write = one SQLite transaction, for the store and the migrations alike.

Its own module because server/storage/db.py imports the migrations, which need it too.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error (including a failed COMMIT).

    The connection must be in autocommit mode (`isolation_level=None`), so that this is the
    only transaction there is.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled back (e.g. SQLITE_FULL); a second ROLLBACK would
        # raise and hide the real error.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
