"""The window's widgets in the look's palette: flat, rounded buttons and fields instead of
the platform style's grey bevels, the composer as one rounded box with a round Send button,
and the switches as chips. One style sheet on the window's central widget, made again from
the palette when the theme changes (a style sheet does not follow a palette by itself).

Sizes come from the spacing scale (4, 8, 12, 16 px) and radii from the look (8 px for
controls, 16 px for the composer); the transcript draws itself (Qt Quick)."""

from __future__ import annotations

from PySide6.QtGui import QColor

from desktop.look.icons import icon_file
from desktop.look.palette import Palette
from desktop.look.style import mix


def window_style(p: Palette) -> str:
    outline = mix(QColor(p.border), QColor(p.muted), 0.35)  # firmer than a hairline
    return f"""
QSplitter, QSplitter > QWidget {{ background: {p.background}; color: {p.text}; }}
QWidget#sidebar {{ background: {p.surface}; }}
QWidget#sidebar QListView {{
    background: {p.surface}; color: {p.text}; border: none;
    selection-background-color: {p.raised}; selection-color: {p.text};
}}
QWidget#chat-bar {{
    background: {p.surface}; border: 1px solid {p.border}; border-radius: 12px;
}}
QWidget#chat-bar QLabel {{ color: {p.muted}; background: transparent; }}
QWidget#chat-bar QComboBox#model-picker {{
    background: {p.background}; font-weight: 600; border-radius: 12px; padding: 4px 12px;
}}
QWidget#chat-bar QComboBox#model-picker:focus {{ padding: 3px 11px; }}
QWidget#chat-bar QComboBox#model-picker::drop-down {{ width: 24px; }}
QWidget#chat-bar QComboBox#model-picker::down-arrow {{
    image: url({icon_file("chevron-down", p.muted)}); width: 14px; height: 14px;
}}
QWidget#chat-bar QToolButton {{ color: {p.muted}; }}
QWidget#chat-bar QToolButton:hover {{ background: {p.raised}; }}
QFrame#bar-separator {{ background: {p.border}; border: none; }}

QPushButton {{
    background: {p.raised}; color: {p.text}; border: 1px solid {p.border};
    border-radius: 8px; padding: 4px 12px;
}}
QPushButton:hover {{ border-color: {p.muted}; }}
QPushButton:pressed {{ background: {p.border}; }}
QPushButton:focus {{ border: 2px solid {p.accent}; padding: 3px 11px; }}
QPushButton:disabled {{ color: {p.muted}; }}
QPushButton#new-chat {{ text-align: left; padding: 6px 12px; font-weight: 600; }}
QPushButton#new-chat:focus {{ padding: 5px 11px; }}

QToolButton {{ background: transparent; border: none; border-radius: 8px; padding: 4px; }}
QToolButton:hover {{ background: {p.raised}; }}
QToolButton:pressed {{ background: {p.border}; }}
QToolButton:focus {{ border: 2px solid {p.accent}; padding: 2px; }}

QLineEdit {{
    background: {p.background}; color: {p.text}; border: 1px solid {p.border};
    border-radius: 8px; padding: 5px 8px;
}}
QLineEdit:focus {{ border: 2px solid {p.accent}; padding: 4px 7px; }}

QComboBox {{
    background: {p.surface}; color: {p.text}; border: 1px solid {p.border};
    border-radius: 8px; padding: 4px 8px;
}}
QComboBox:hover {{ border-color: {p.muted}; }}
QComboBox:focus {{ border: 2px solid {p.accent}; padding: 3px 7px; }}
QComboBox::drop-down {{ border: none; width: 20px; }}

QFrame#composer-box {{
    background: {p.surface}; border: 1px solid {p.border}; border-radius: 16px;
}}
QFrame#composer-box[focused="true"] {{ border: 2px solid {p.accent}; }}
QPlainTextEdit#composer-editor {{
    background: transparent; color: {p.text}; border: none;
    selection-background-color: {p.accent};
}}
QToolButton#send-stop {{ background: {p.accent}; border-radius: 16px; padding: 0; }}
QToolButton#send-stop:hover {{ background: {p.text}; }}
QToolButton#send-stop[stop="true"] {{ background: {p.text}; }}
QToolButton#send-stop:disabled {{ background: {p.border}; }}
QToolButton#send-stop:focus {{ border: 2px solid {p.background}; }}

QFrame#approval-card, QFrame#overdue-card, QFrame#question-card, QFrame#sign-in-card {{
    background: {p.surface}; border: 2px solid {p.warning}; border-radius: 12px;
}}
QFrame#approval-card QLabel, QFrame#overdue-card QLabel, QFrame#question-card QLabel,
QFrame#sign-in-card QLabel {{
    background: transparent;
}}
QFrame#question-card QLabel#question-error {{ color: {p.danger}; }}
QFrame#approval-card QPlainTextEdit, QFrame#question-card QPlainTextEdit {{
    background: {p.code}; color: {p.text}; border: none; border-radius: 8px; padding: 4px;
}}
QPushButton[primary="true"] {{ background: {p.accent}; color: {p.background}; border: none; }}
QPushButton[primary="true"]:focus {{ border: 2px solid {p.text}; padding: 2px 10px; }}

QCheckBox#switch {{
    color: {p.muted}; border: 1px solid {outline}; border-radius: 12px;
    padding: 3px 10px 3px 8px; spacing: 4px;
}}
QCheckBox#switch::indicator {{ image: none; width: 0px; height: 0px; border: none; margin: 0px; }}
QCheckBox#switch:hover {{ border-color: {p.muted}; }}
QCheckBox#switch:checked {{ color: {p.accent}; background: {p.bubble}; border-color: {p.accent}; }}
QCheckBox#switch:disabled {{
    color: {p.muted}; border: 1px dashed {p.border}; background: transparent;
}}
QCheckBox#switch:focus {{ border: 2px solid {p.accent}; padding: 2px 9px 2px 7px; }}
"""
