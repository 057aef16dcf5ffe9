"""The desktop entry and AppStream file are well-formed and point at what exists."""

from __future__ import annotations

import configparser
import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from desktop.desktop_entry import installed_paths

ROOT = Path(__file__).resolve().parent.parent


def test_desktop_entry_launches_the_installed_command() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(ROOT / "packaging" / "io.github.parley.Parley.desktop", encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert section["Exec"].split()[0] in scripts
    assert section["Icon"] == "io.github.parley.Parley"  # installed from resources/parley.svg
    assert (ROOT / "resources" / "parley.svg").is_file()


def test_metainfo_is_valid_xml_naming_the_desktop_entry() -> None:
    root = ET.parse(ROOT / "packaging" / "io.github.parley.Parley.metainfo.xml").getroot()
    assert root.tag == "component"
    assert root.findtext("launchable") == "io.github.parley.Parley.desktop"
    # Screenshots by URL (AppStream requires it), each one a file in this repository.
    images = root.findall("screenshots/screenshot/image")
    assert images
    for image in images:
        url = str(image.text)
        assert url.startswith("https://raw.githubusercontent.com/parley/parley/main/")
        assert (ROOT / url.split("/main/", 1)[1]).is_file()


@pytest.mark.skipif(shutil.which("desktop-file-validate") is None, reason="desktop-file-utils")
def test_the_desktop_entry_passes_desktop_file_validate() -> None:
    done = subprocess.run(
        ["desktop-file-validate", str(ROOT / "packaging" / "io.github.parley.Parley.desktop")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0 and done.stdout + done.stderr == "", done.stdout


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstream")
def test_the_metainfo_passes_appstreamcli_validate() -> None:
    done = subprocess.run(
        ["appstreamcli", "validate", "--no-net", "--explain",
         str(ROOT / "packaging" / "io.github.parley.Parley.metainfo.xml")],
        capture_output=True,
        text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout
    # No errors, warnings or infos; only pedantic notes (a reverse-DNS id has capitals).
    for line in done.stdout.splitlines():
        assert not line.startswith(("E:", "W:", "I:")), done.stdout


def test_the_desktop_entry_installs_and_uninstalls_in_the_users_data_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "share"
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    parley = shutil.which("parley") or str(Path(sys.executable).parent / "parley")
    done = subprocess.run(
        [parley, "--install-desktop-entry"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    written = installed_paths(home)
    assert all(path.is_file() for path in written)
    assert done.stdout.count("installed ") == len(written)
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(written[0], encoding="utf-8")
    command = entry["Desktop Entry"]["Exec"]
    assert Path(command).is_absolute() and os.access(command, os.X_OK)  # the menu's PATH
    png = home / "icons" / "hicolor" / "256x256" / "apps" / "io.github.parley.Parley.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    if shutil.which("desktop-file-validate"):
        check = subprocess.run(["desktop-file-validate", str(written[0])], capture_output=True)
        assert check.returncode == 0 and not check.stdout, check.stdout

    done = subprocess.run(
        [parley, "--uninstall-desktop-entry"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout.count("removed ") == len(written)
    assert not any(path.exists() for path in written)
    again = subprocess.run(
        [parley, "--uninstall-desktop-entry"], capture_output=True, text=True, timeout=60
    )
    assert again.returncode == 0 and "nothing to remove" in again.stdout
