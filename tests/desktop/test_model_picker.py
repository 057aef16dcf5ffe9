"""The model picker's state line: a long error (a backend's URL in it) is cut to the width it
has, whole in its tooltip, and never widens the window."""

from __future__ import annotations

from typing import Any, cast

from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from desktop.models.model_picker import ModelPicker
from server.types import ModelStatusJSON, StatusJSON

LONG_ERROR = (
    "cannot reach http://127.0.0.1:9/openai/deployments/my-team-gpt-4o-2024-08-06/v1/"
    "chat/completions: connection refused (is the server running, and is its port right?)"
)


def status(state: str, error: str | None) -> StatusJSON:
    model = {"name": "mymodel", "kind": "upstream", "state": state, "error": error,
             "in_use": False, "slots": 1, "slots_busy": 0, "queue_length": 0}  # fmt: skip
    return cast(StatusJSON, {"models": [cast(ModelStatusJSON, model)], "default_model": "mymodel"})


def test_a_long_error_is_cut_to_fit_and_never_widens_the_window(qtbot: Any) -> None:
    window = QWidget()
    qtbot.addWidget(window)
    picker = ModelPicker(window)
    QVBoxLayout(window).addWidget(picker)
    window.resize(500, 80)
    window.show()
    picker.show_status(status("ready", None))
    narrowest = window.minimumSizeHint().width()
    wanted = window.sizeHint().width()

    picker.show_status(status("error", LONG_ERROR))
    qtbot.waitUntil(lambda: QLabel.text(picker.state).endswith("…"))
    QApplication.processEvents()  # the layout it asked for
    assert window.minimumSizeHint().width() <= narrowest
    assert window.sizeHint().width() <= wanted
    assert window.width() == 500
    shown = QLabel.text(picker.state)  # what is drawn
    assert shown.endswith("…") and len(shown) < len(LONG_ERROR)
    assert picker.state.text() == f"error: {LONG_ERROR}"  # the whole, for whoever reads it
    assert picker.state.toolTip() == f"error: {LONG_ERROR}"

    window.resize(3000, 80)  # room for all of it: all of it, no tooltip needed
    qtbot.waitUntil(lambda: QLabel.text(picker.state) == f"error: {LONG_ERROR}")
    assert picker.state.toolTip() == ""
    picker.show_status(status("ready", None))
    assert QLabel.text(picker.state) == "ready"
