"""Hostile files through a real Parley (issue 48): an executable behind an image's signature
is refused and never reaches the upstream; a Markdown file that mentions a PDF version is
attached as text; an attachment's file swapped for a FIFO in the data dir is refused at once,
for the window and for the model, instead of holding the request for ever."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.server.attachments.test_attachments import last_user_message, upload, uploaded
from tests.support.image_files import ELF, PNG, PNG_SIGNATURE
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")


@contextlib.contextmanager
def swapped_for_fifo(data_dir: Path, attachment_id: str) -> Iterator[None]:
    """The attachment's file replaced by a FIFO no one writes to. On the way out, a reader
    still waiting on it (what the server did before it opened files without blocking) is let
    go, so a failing test ends instead of leaving a thread stuck."""
    path = data_dir / "attachments" / attachment_id
    path.unlink()
    os.mkfifo(path)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):  # ENXIO: no reader is waiting
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))


def test_an_executable_behind_an_image_signature_never_reaches_the_upstream(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    refused = upload(parley, "cat.png", PNG_SIGNATURE + ELF)
    assert refused.status == 400, refused.body
    error = refused.json()["error"]
    assert error["code"] == "attachment_unsupported"
    assert (
        "'cat.png' cannot be attached: it starts like an image but is not one" in (error["message"])
    )
    assert upstream.records == []
    assert not any((parley.settings.data_dir / "attachments").glob("*"))  # nothing stored


def test_a_markdown_file_that_mentions_a_pdf_version_is_attached_as_text(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=1)
    text = b"# Export settings\n\nSave as %PDF-1.7 (Acrobat 8) for the printer.\n"
    notes = uploaded(parley, "export.md", text)
    assert notes["kind"] == "text" and notes["mime"].startswith("text/plain")
    cid = parley.new_conversation()
    parley.send(cid, "Which version?", attachments=[notes["id"]]).read_all()
    assert "Save as %PDF-1.7 (Acrobat 8)" in last_user_message(upstream)["content"]


def test_a_fifo_in_place_of_an_attachment_file_is_refused_at_once(
    parley: Parley, upstream: ScriptedUpstream, data_dir: Path
) -> None:
    notes = uploaded(parley, "notes.md", b"# Notes\n")
    image = uploaded(parley, "cat.png", PNG)
    upstream.script = Script(tokens=1)
    with swapped_for_fifo(data_dir, notes["id"]), swapped_for_fifo(data_dir, image["id"]):
        started = time.monotonic()
        got = parley.call("GET", f"/api/attachments/{notes['id']}", timeout=5)
        elapsed = time.monotonic() - started
        assert got.status == 503, got.body
        error = got.json()["error"]
        assert error["code"] == "attachment_file_unreadable"
        assert error["message"] == (
            f"the file of attachment {notes['id']!r} is not a regular file: it cannot be read "
            "from the data folder"
        )
        # ~10 ms measured; 5 s is what the request may take (half the read's own bound).
        assert elapsed < 5

        # A model call with the image is made without it, saying so, and is not held (each
        # read of the reply within 5 s: the image's read alone may take 10).
        cid = parley.new_conversation()
        stream = parley.send(cid, "What is this?", timeout=5, attachments=[image["id"]])
        assert stream.status == 200
        stream.read_all()
        sent = last_user_message(upstream)["content"]
        assert sent == (
            'What is this?\n\n[image "cat.png" not shown: its file could not be read from the '
            "data folder]"
        )
