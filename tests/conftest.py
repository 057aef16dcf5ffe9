from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.client import close_open_streams
from tests.support.parley import Parley, wait_model_ready
from tests.support.process import ServerProcess
from tests.support.upstream import ScriptedUpstream


@pytest.fixture(autouse=True, scope="session")
def _log_dir(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The apps and servers the tests start keep their log files out of the user's."""
    os.environ["PARLEY_LOG_DIR"] = str(tmp_path_factory.mktemp("logs"))


@pytest.fixture(autouse=True)
def _streams_closed() -> Iterator[None]:
    """A test that fails half-way leaves its streams open: closed here, not by the garbage
    collector during a later test (a ResourceWarning there fails that test)."""
    yield
    close_open_streams()


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    scripted = ScriptedUpstream().start()
    yield scripted
    scripted.stop()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def parley(data_dir: Path, upstream: ScriptedUpstream) -> Iterator[Parley]:
    server = Parley(data_dir, upstream.base_url).start()
    yield server
    server.stop()


@pytest.fixture
def local_parley(data_dir: Path) -> Iterator[Parley]:
    """Parley on its embedded default: the bundled model, no upstream."""
    server = Parley(data_dir).start()
    wait_model_ready(server)
    yield server
    server.stop()


@pytest.fixture
def processes() -> Iterator[list[ServerProcess]]:
    """`parley-server` subprocesses a test starts; killed at teardown if still running."""
    started: list[ServerProcess] = []
    yield started
    for process in started:
        process.ensure_stopped()
