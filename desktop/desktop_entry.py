"""`parley --install-desktop-entry` / `--uninstall-desktop-entry`: Parley in the desktop's
application menu, for the user who ran it.

Writes, under `$XDG_DATA_HOME` (default `~/.local/share`):
- `applications/io.github.parley.Parley.desktop`, whose `Exec` is the `parley` that ran
  this (an absolute path: a venv's `bin/` is rarely on the menu's PATH);
- the icon: `icons/hicolor/scalable/apps/io.github.parley.Parley.svg` and PNGs of every
  usual size drawn from it (`icons/hicolor/NxN/apps/…png`);
- `metainfo/io.github.parley.Parley.metainfo.xml` (AppStream, for software centres).

Uninstalling removes exactly these. Both refresh the menu's caches when the desktop's tools
for it are there (`update-desktop-database`, `gtk-update-icon-cache`), and never fail on them.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

APP_ID = "io.github.parley.Parley"
ROOT = Path(__file__).resolve().parent.parent
ENTRY = ROOT / "packaging" / f"{APP_ID}.desktop"
METAINFO = ROOT / "packaging" / f"{APP_ID}.metainfo.xml"
ICON = ROOT / "resources" / "parley.svg"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def data_home() -> Path:
    configured = os.environ.get("XDG_DATA_HOME")
    return Path(configured) if configured else Path.home() / ".local" / "share"


def installed_paths(home: Path | None = None) -> list[Path]:
    """Every file an install writes."""
    home = home or data_home()
    icons = home / "icons" / "hicolor"
    return [
        home / "applications" / f"{APP_ID}.desktop",
        home / "metainfo" / f"{APP_ID}.metainfo.xml",
        icons / "scalable" / "apps" / f"{APP_ID}.svg",
        *(icons / f"{n}x{n}" / "apps" / f"{APP_ID}.png" for n in PNG_SIZES),
    ]


def launcher() -> str:
    """How the menu starts this Parley: the `parley` script that is running, else the one on
    PATH, else this Python with `-m desktop`."""
    running = Path(sys.argv[0])
    if running.name == "parley" and running.is_file():
        return shlex.quote(str(running.resolve()))
    found = shutil.which("parley")
    if found:
        return shlex.quote(str(Path(found).resolve()))
    return f"{shlex.quote(sys.executable)} -m desktop"


def install(home: Path | None = None) -> list[Path]:
    """Write the entry, its icons and the AppStream file; returns what was written."""
    entry, metainfo, svg, *pngs = installed_paths(home)
    lines = []
    for line in ENTRY.read_text(encoding="utf-8").splitlines():
        lines.append(f"Exec={launcher()}" if line.startswith("Exec=") else line)
    _write(entry, ("\n".join(lines) + "\n").encode())
    _write(metainfo, METAINFO.read_bytes())
    _write(svg, ICON.read_bytes())
    for size, path in zip(PNG_SIZES, pngs, strict=True):
        _write_png(path, size)
    _refresh(home or data_home())
    return [entry, metainfo, svg, *pngs]


def uninstall(home: Path | None = None) -> list[Path]:
    """Remove what `install` writes; returns what was there."""
    removed = []
    for path in installed_paths(home):
        if path.exists():
            path.unlink()
            removed.append(path)
    _refresh(home or data_home())
    return removed


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.part")
    temp.write_bytes(data)
    os.replace(temp, path)


def _write_png(path: Path, size: int) -> None:
    """The icon drawn at `size` px (Qt's SVG renderer, no window needed), saved as PNG."""
    from PySide6.QtCore import QByteArray, Qt
    from PySide6.QtGui import QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    renderer = QSvgRenderer(QByteArray(ICON.read_bytes()))
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name}.part.png")
    if not image.save(str(temp)):  # PNG, from the suffix
        raise OSError(f"could not write {path}")
    os.replace(temp, path)


def _refresh(home: Path) -> None:
    for command in (
        ["update-desktop-database", "-q", str(home / "applications")],
        ["gtk-update-icon-cache", "-q", "-t", "-f", str(home / "icons" / "hicolor")],
    ):
        if shutil.which(command[0]):
            # A cache the menu rebuilds itself later if this fails.
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run(command, check=False, capture_output=True, timeout=30)


def main(flag: str) -> int:
    """Run one of the two commands; prints what it did."""
    try:
        done = install() if flag == "--install-desktop-entry" else uninstall()
    except OSError as exc:
        print(f"parley: {exc}", file=sys.stderr)
        return 1
    verb = "installed" if flag == "--install-desktop-entry" else "removed"
    for path in done:
        print(f"{verb} {path}")
    if not done:
        print("nothing to remove: Parley's desktop entry was not installed")
    return 0
