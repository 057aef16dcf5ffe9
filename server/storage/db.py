"""The one SQLite connection and the one thread that uses it.

Every read and write runs on a single dedicated thread, so the event loop never blocks on
disk and writes never contend with each other inside the process. WAL with
`synchronous=NORMAL`: an app crash never loses a commit; a power loss may roll back the
last few (see docs/reliability.md).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import IO, ParamSpec, TypeVar

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

from server.errors import DiskFullError, StorageError
from server.settings import Limits
from server.storage.migrations import Migration, migrate

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")


def connect(
    path: Path,
    busy_timeout: float = Limits.db_busy_timeout,
    migrations: list[Migration] | None = None,
) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database at `path` (with `migrations`, else
    the conversations' own).

    A write waits up to `busy_timeout` seconds for another program's write lock.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: we issue BEGIN/COMMIT ourselves, so one logical write is
    # exactly one transaction.
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        log.warning("SQLite refused WAL mode (got %s); continuing", mode)
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(f"PRAGMA busy_timeout={round(busy_timeout * 1000)}")
    migrate(conn, migrations)
    return conn


def check_database(path: Path) -> None:
    """Open the database at `path` as the server will, then close it. Raises StorageError
    naming the file when SQLite cannot use it (e.g. a damaged file). Never changes or
    deletes a file SQLite cannot read: it fails before writing anything."""
    try:
        conn = connect(path)
    except (sqlite3.Error, OSError) as exc:
        raise unusable_database(path, exc) from exc
    conn.close()


def unusable_database(path: Path, exc: Exception) -> StorageError:
    return StorageError(
        f"cannot open the database at {path}: {exc}. It was left as it is: move it aside "
        "to start with an empty history, or put back a copy that works"
    )


class DataDirLock:
    """One server per database: an exclusive lock file beside it, held while it is open.

    Two servers on one data directory would each take the other's live replies for crashed
    ones. The OS drops the lock when the process dies, so a crash never leaves it stale.
    """

    def __init__(self, db_path: Path) -> None:
        self.path = db_path.with_name(db_path.name + ".lock")
        self._file: IO[bytes] | None = None

    def acquire(self) -> None:
        if fcntl is None:  # not POSIX: SQLite's own locking is all there is
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "wb")  # noqa: SIM115 - held open until release()
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            handle.close()
            raise StorageError(
                f"another Parley is already using {self.path.parent}; "
                "close it first, or give this one another --data-dir"
            ) from exc
        self._file = handle

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class Database:
    """Runs functions of a connection on the database thread."""

    def __init__(
        self, path: Path, *, busy_timeout: float, migrations: list[Migration] | None = None
    ) -> None:
        self.path = path
        self._busy_timeout = busy_timeout
        self._migrations = migrations
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="parley-db")
        self._conn: sqlite3.Connection | None = None
        self._lock = DataDirLock(path)

    async def open(self) -> None:
        def _open() -> None:
            self._lock.acquire()
            try:
                self._conn = connect(self.path, self._busy_timeout, self._migrations)
            except BaseException:
                self._lock.release()
                raise

        try:
            await asyncio.wrap_future(self._pool.submit(_open))
        except (sqlite3.Error, OSError) as exc:
            raise unusable_database(self.path, exc) from exc

    def _call(self, fn: Callable[..., T], *args: object) -> T:  # runs on the database thread
        if self._conn is None:
            raise StorageError("the database is not open")
        try:
            return fn(self._conn, *args)
        except sqlite3.Error as exc:
            raise storage_error(exc) from exc
        except (ValueError, OverflowError) as exc:  # unencodable text, out-of-range numbers
            raise StorageError(f"could not store the data: {exc}") from exc

    async def run(self, fn: Callable[..., T], *args: object) -> T:
        """Run `fn(conn, *args)` on the database thread and return its result.

        Raises StorageError for any SQLite failure.
        """
        return await asyncio.wrap_future(self._pool.submit(self._call, fn, *args))

    def submit(self, fn: Callable[..., object], *args: object) -> concurrent.futures.Future[object]:
        """Queue `fn(conn, *args)` without waiting (checkpoints). Failures are logged."""
        future = self._pool.submit(self._call, fn, *args)
        future.add_done_callback(_log_failure)
        return future

    async def close(self) -> None:
        def _close() -> None:
            if self._conn is not None:
                self._conn.close()
                self._conn = None
            self._lock.release()

        await asyncio.wrap_future(self._pool.submit(_close))
        self._pool.shutdown(wait=True)


def storage_error(exc: sqlite3.Error) -> StorageError:
    """The error tree's word for what SQLite said."""
    if _disk_full(exc):
        return DiskFullError(describe_error(exc))
    return StorageError(describe_error(exc))


def _disk_full(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or "full" in str(exc)


def describe_error(exc: sqlite3.Error) -> str:
    text = str(exc)
    if "locked" in text or "busy" in text:
        return f"the database is busy (another program holds it): {text}"
    if _disk_full(exc):
        return f"the disk is full; nothing was deleted: {text}"
    if "readonly" in text or "read-only" in text:
        return f"the database is read-only: {text}"
    return f"database error: {text}"


def _log_failure(future: concurrent.futures.Future[object]) -> None:
    if future.cancelled():
        return
    exc = future.exception()
    if exc is not None:
        log.error("background database write failed: %s", exc)
