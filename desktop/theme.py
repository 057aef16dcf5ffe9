"""View → Theme: the system's colours (the default: the window follows the platform's light
or dark palette), or light or dark whatever the system says. The transcript redraws itself
in the new colours when the palette changes (its code colours and badges are baked in)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

THEMES = ("system", "light", "dark")

DARK = {
    QPalette.ColorRole.Window: "#2b2b2e",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1e1e20",
    QPalette.ColorRole.AlternateBase: "#2b2b2e",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#3a3a3d",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.Highlight: "#3d6fb6",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.PlaceholderText: "#9a9a9a",
    QPalette.ColorRole.Link: "#8ab4f8",
    QPalette.ColorRole.Mid: "#5a5a5e",
    QPalette.ColorRole.ToolTipBase: "#3a3a3d",
    QPalette.ColorRole.ToolTipText: "#e6e6e6",
}
DISABLED_TEXT = "#808080"


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in DARK.items():
        palette.setColor(role, QColor(colour))
    for role in (
        QPalette.ColorRole.Text,
        QPalette.ColorRole.WindowText,
        QPalette.ColorRole.ButtonText,
    ):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(DISABLED_TEXT))
    return palette


class Theme:
    """Applies a theme to the application; remembers the system's palette to go back to."""

    def __init__(self, app: QApplication) -> None:
        self._app = app
        self._system = QPalette(app.palette())
        self.name = "system"

    def apply(self, name: str) -> None:
        if name not in THEMES or name == self.name:
            return
        self.name = name
        scheme = {
            "light": Qt.ColorScheme.Light,
            "dark": Qt.ColorScheme.Dark,
        }.get(name, Qt.ColorScheme.Unknown)
        self._app.styleHints().setColorScheme(scheme)  # where the platform honours it
        if name == "dark":
            self._app.setPalette(dark_palette())
        elif name == "light":
            style = self._app.style()
            self._app.setPalette(style.standardPalette() if style else QPalette())
        else:
            self._app.setPalette(self._system)
