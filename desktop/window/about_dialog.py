"""Help → About Parley: its version, what it runs on (Python, Qt, PySide6, the local engine),
the models it can use, and where it keeps its data, settings and log."""

from __future__ import annotations

import html
import importlib.metadata
import platform

import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QVBoxLayout, QWidget


def version_of(distribution: str) -> str:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def about_rows(models: list[str], paths: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [
        ("Parley", version_of("parley")),
        ("Python", platform.python_version()),
        ("Qt", qVersion()),
        ("PySide6", PySide6.__version__),
        ("Local engine", f"llama.cpp (xllamacpp {version_of('xllamacpp')})"),
        ("Models", ", ".join(models) or "none reported yet"),
        *paths,
    ]


class AboutDialog(QDialog):
    def __init__(self, rows: list[tuple[str, str]], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Parley")
        self.setObjectName("about-dialog")
        cells = "".join(
            f"<tr><td style='padding-right:12px;'><b>{html.escape(k)}</b></td>"
            f"<td>{html.escape(v)}</td></tr>"
            for k, v in rows
        )
        self.text = QLabel(
            "<h3>Parley</h3><p>A desktop chat for the language models you run yourself. "
            "A reply is never lost.</p>"
            f"<table>{cells}</table>",
            self,
        )
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAccessibleName("About Parley")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text)
        layout.addWidget(buttons)
