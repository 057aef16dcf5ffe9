"""View → Theme: the system's colours (the default: the window follows the platform's light
or dark palette), or light or dark whatever the system says. The transcript redraws itself
in the new colours when the palette changes (its code colours and badges are baked in).

In a dark palette the platform style (Fusion) draws an unticked box's border in the window's
colour made darker, on a dark field: nearly invisible. `VisibleChecks` draws it
again in a colour between the text's and the field's; and the dark palette gives the
shades a sunken line is drawn with (light, dark), which otherwise are the light palette's
white."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPainter, QPalette
from PySide6.QtWidgets import (
    QApplication,
    QProxyStyle,
    QStyle,
    QStyleFactory,
    QStyleOption,
    QWidget,
)

from desktop.look import style

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
    # A sunken line (the chat bar's separator) and bevels: shades of the window, not white.
    QPalette.ColorRole.Light: "#505054",
    QPalette.ColorRole.Midlight: "#3f3f43",
    QPalette.ColorRole.Dark: "#1a1a1c",
    QPalette.ColorRole.Shadow: "#101011",
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


def is_dark(palette: QPalette) -> bool:
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


class VisibleChecks(QProxyStyle):
    """The platform's style, with a check box's border (also in lists and tables) drawn
    plain to see on a dark palette."""

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element in CHECKS and is_dark(option.palette):
            text = option.palette.color(QPalette.ColorRole.Text)
            base = option.palette.color(QPalette.ColorRole.Base)
            painter.save()
            painter.setPen(QColor(style.mix(base, text, 0.5)))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(option.rect.adjusted(0, 0, -1, -1))
            painter.restore()


CHECKS = (QStyle.PrimitiveElement.PE_IndicatorCheckBox,)


def install_visible_checks(app: QApplication) -> None:
    """The app's style as VisibleChecks over the platform's (once)."""
    current = app.style()
    if isinstance(current, VisibleChecks) or current is None:
        return
    base = QStyleFactory.create(current.name())
    if base is not None:
        app.setStyle(VisibleChecks(base))


class Theme:
    """Applies a theme to the application; remembers the system's palette to go back to."""

    def __init__(self, app: QApplication) -> None:
        self._app = app
        self._system = QPalette(app.palette())
        self.name = "system"
        install_visible_checks(app)

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
