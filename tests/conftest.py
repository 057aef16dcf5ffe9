from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.parley import Parley, wait_model_ready
from tests.support.process import ServerProcess
from tests.support.upstream import ScriptedUpstream


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
