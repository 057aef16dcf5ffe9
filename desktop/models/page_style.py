"""The models page in the look's palette: the window's flat buttons and fields, each row a
card on the page's background (LM Studio's rows, not a grid), titles a step up the type
scale, facts in muted text, a state in the colour of what it says (loaded: success, loading:
warning, failed: danger)."""

from __future__ import annotations

from desktop.look.palette import Palette
from desktop.look.scale import TYPE
from desktop.look.window_style import window_style


def page_style(p: Palette) -> str:
    return (
        window_style(p)
        + f"""
QDialog#models-page {{ background: {p.background}; color: {p.text}; }}
QTabWidget::pane {{ border: none; border-top: 1px solid {p.border}; }}
QTabWidget::tab-bar {{ left: 8px; }}
QTabBar::tab {{
    background: transparent; color: {p.muted}; padding: 8px 16px; border: none;
    border-bottom: 2px solid transparent;
}}
QTabBar::tab:selected {{ color: {p.text}; border-bottom: 2px solid {p.accent}; }}
QTabBar::tab:hover {{ color: {p.text}; }}
QTabBar::tab:focus {{ border-bottom: 2px solid {p.accent}; }}
QScrollArea#model-list, QWidget#model-list-inside {{ background: {p.background}; }}
QLabel#section-header {{
    color: {p.muted}; font-size: {TYPE["ui"]}px; font-weight: 600;
}}
QFrame#model-row {{
    background: {p.surface}; border: 1px solid {p.border}; border-radius: 8px;
}}
QFrame#model-row QLabel {{ background: transparent; color: {p.text}; }}
QFrame#model-row QLabel#row-title {{ font-size: {TYPE["body"]}px; font-weight: 600; }}
QFrame#model-row QLabel#row-facts {{ color: {p.muted}; font-size: {TYPE["ui"]}px; }}
QFrame#model-row QLabel#row-state {{ font-size: {TYPE["ui"]}px; }}
QFrame#model-row QLabel#row-state[tone="success"] {{ color: {p.success}; }}
QFrame#model-row QLabel#row-state[tone="warning"] {{ color: {p.warning}; }}
QFrame#model-row QLabel#row-state[tone="danger"] {{ color: {p.danger}; }}
QProgressBar {{ background: {p.raised}; border: none; border-radius: 3px; }}
QProgressBar::chunk {{ background: {p.accent}; border-radius: 3px; }}
QTableWidget, QListWidget {{
    background: {p.background}; color: {p.text}; border: 1px solid {p.border};
    border-radius: 8px; gridline-color: {p.border};
    selection-background-color: {p.bubble}; selection-color: {p.text};
}}
QHeaderView::section {{
    background: {p.surface}; color: {p.muted}; border: none;
    border-bottom: 1px solid {p.border}; padding: 4px 8px;
}}
QGroupBox {{ border: 1px solid {p.border}; border-radius: 8px; margin-top: 16px; padding: 8px; }}
QGroupBox::title {{ subcontrol-origin: margin; left: 12px; color: {p.muted}; }}
"""
    )
