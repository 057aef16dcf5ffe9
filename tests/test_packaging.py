"""The desktop entry and AppStream file are well-formed and point at what exists."""

from __future__ import annotations

import configparser
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_desktop_entry_launches_the_installed_command() -> None:
    entry = configparser.ConfigParser(interpolation=None)
    entry.optionxform = str  # type: ignore[assignment,method-assign]
    entry.read(ROOT / "packaging" / "parley.desktop", encoding="utf-8")
    section = entry["Desktop Entry"]
    assert section["Type"] == "Application"
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert section["Exec"].split()[0] in scripts
    assert (ROOT / "resources" / f"{section['Icon']}.svg").is_file()


def test_metainfo_is_valid_xml_naming_the_desktop_entry() -> None:
    root = ET.parse(ROOT / "packaging" / "io.github.parley.Parley.metainfo.xml").getroot()
    assert root.tag == "component"
    assert root.findtext("launchable") == "parley.desktop"
    image = root.find("screenshots/screenshot/image")
    assert image is not None and (ROOT / str(image.text)).is_file()
