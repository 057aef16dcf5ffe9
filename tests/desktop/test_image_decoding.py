"""Images from outside decoded within bounds (desktop/image_decoding.py): an image whose
pixels would not fit the allocation limit is refused from its header, with no memory spent;
a big photo is decoded at the size it is shown, under the limit; decodes asked for at once
wait their turn, so their memory is never added up."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QImage

from desktop.image_decoding import ALLOCATION_LIMIT_MB, decode, decoded
from tests.support.pixels import big_png, memory_mb, reset_peak_memory

BOX = QSize(144, 144)


@pytest.mark.qt_log_ignore("exceeds the current allocation limit")
def test_an_image_too_large_for_the_limit_is_refused_from_its_header(
    qapp: Any, tmp_path: Path
) -> None:
    data = big_png(tmp_path / "huge.png").read_bytes()  # 265 KB, 256 MB decoded
    before = reset_peak_memory()
    picture = decode(data, BOX)
    peak = memory_mb()["VmHWM"] - before
    assert picture.image is None and picture.too_large
    assert picture.size == QSize(8000, 8000)
    assert picture.size_text() == "8000 × 8000 pixels"
    assert peak <= 20, f"+{peak:.0f} MB to refuse it"  # measured: +1


def test_a_big_photo_is_decoded_at_the_size_it_is_shown(qapp: Any, tmp_path: Path) -> None:
    photo = QImage(8000, 6000, QImage.Format.Format_RGB32)  # 183 MB as pixels
    photo.fill(QColor("orange"))
    assert photo.save(str(tmp_path / "photo.jpg"), "JPEG")
    del photo
    data = (tmp_path / "photo.jpg").read_bytes()
    before = reset_peak_memory()
    picture = decode(data, BOX)
    peak = memory_mb()["VmHWM"] - before
    assert picture.image is not None and not picture.too_large
    assert (picture.image.width(), picture.image.height()) == (144, 108)
    assert picture.image.pixelColor(72, 54).red() > 200  # orange, not a placeholder
    assert peak <= 50, f"+{peak:.0f} MB to decode it"  # measured: +3 (decoded at an eighth)


def test_no_image_is_neither_decoded_nor_too_large(qapp: Any) -> None:
    picture = decode(b"# notes\n\nnot a picture", BOX)
    assert picture.image is None and not picture.too_large


def test_decodes_asked_for_at_once_wait_their_turn(qapp: Any, tmp_path: Path) -> None:
    # Just under the limit (61 MB as pixels): each is decoded, and Qt's PNG reader holds
    # the whole image and a copy while it scales, about twice the limit at its peak.
    data = big_png(tmp_path / "under.png", side=4000).read_bytes()

    async def ten_at_once() -> list[Any]:
        return await asyncio.gather(*(decoded(data, BOX) for _ in range(10)))

    before = reset_peak_memory()
    pictures = asyncio.run(ten_at_once())
    peak = memory_mb()["VmHWM"] - before
    assert all(p.image is not None and p.image.size() == BOX for p in pictures)
    # measured: +124 MB, one at a time; at once, on a pool of threads, several times that
    assert peak <= 2 * ALLOCATION_LIMIT_MB + 50, f"+{peak:.0f} MB for ten"
