"""A server's form (MCP elicitation's restricted JSON Schema: a flat object of primitives)
as fields to fill: text → a line edit (its length and `format` said), number and integer →
a spin box within its bounds, boolean → a check box, a string chosen from a list (`enum`,
`oneOf`/`anyOf` of `const` + `title`) → a combo box, a list of such strings → check boxes.
Defaults are filled in; required fields are marked. What the user entered is read back as
the answer's content; the server checks it against the schema (one check, one place), and a
field left empty is left out."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

INT_LIMIT = 2**31 - 1  # a QSpinBox's range
NUMBER_LIMIT = 1e15
NUMBER_DECIMALS = 3
# What a text field of a given `format` looks like, shown in it while it is empty.
FORMAT_HINTS = {
    "email": "name@example.com",
    "uri": "https://…",
    "date": "YYYY-MM-DD",
    "date-time": "YYYY-MM-DDTHH:MM:SS",
}
NO_CHOICE = "—"  # an optional choice, or number, left unanswered


@dataclass(frozen=True)
class Field:
    name: str
    widget: QWidget
    read: Callable[[], object]  # its value; None: left empty


class QuestionFields(QWidget):
    """The form's fields, in the schema's order."""

    submitted = Signal()  # Enter in a text field: accept the form

    def __init__(self, schema: dict[str, object], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("question-fields")
        properties = schema.get("properties")
        fields = properties if isinstance(properties, dict) else {}
        listed = schema.get("required")
        required = {n for n in listed if isinstance(n, str)} if isinstance(listed, list) else set()
        self.fields: list[Field] = []
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        for name, spec in fields.items():
            spec = spec if isinstance(spec, dict) else {}
            needed = name in required
            field = self._field(str(name), spec, needed)
            self.fields.append(field)
            title = spec.get("title")
            label = title if isinstance(title, str) and title else str(name)
            field.widget.setAccessibleName(f"{label}, required" if needed else label)
            form.addRow(f"{label} *" if needed else label, field.widget)
            description = spec.get("description")
            if isinstance(description, str) and description:
                field.widget.setToolTip(description)
                field.widget.setAccessibleDescription(description)
                note = QLabel(description, self)
                note.setWordWrap(True)
                note.setObjectName("question-field-note")
                form.addRow("", note)
        if required & set(fields):
            form.addRow("", QLabel("* required", self))

    def first(self) -> QWidget | None:
        """Where typing begins."""
        return self.fields[0].widget if self.fields else None

    def content(self) -> dict[str, object]:
        """The answer: each field's value, those left empty left out."""
        values = {field.name: field.read() for field in self.fields}
        return {name: value for name, value in values.items() if value is not None}

    def _field(self, name: str, spec: dict[str, object], required: bool) -> Field:
        kind = spec.get("type")
        default = spec.get("default")
        if kind == "boolean":
            box = QCheckBox(self)
            box.setChecked(default is True)
            return Field(name, box, box.isChecked)
        if kind in ("number", "integer"):
            return self._number(name, spec, required, whole=kind == "integer")
        if kind == "array":
            items = spec.get("items")
            options = choices(items) if isinstance(items, dict) else None
            if options is not None:
                return self._checks(name, options, default, required)
        elif (options := choices(spec)) is not None:
            return self._combo(name, options, default, required)
        return self._text(name, spec, default)

    def _text(self, name: str, spec: dict[str, object], default: object) -> Field:
        edit = QLineEdit(self)
        most, least, form = spec.get("maxLength"), spec.get("minLength"), spec.get("format")
        if isinstance(most, int) and most > 0:
            edit.setMaxLength(most)
        hint = FORMAT_HINTS.get(form, "") if isinstance(form, str) else ""
        if isinstance(least, int) and least > 1:
            hint = f"{hint} (at least {least} characters)".strip()
        edit.setPlaceholderText(hint)
        if isinstance(default, str | int | float) and not isinstance(default, bool):
            edit.setText(str(default))
        edit.returnPressed.connect(self.submitted)
        return Field(name, edit, lambda: edit.text() or None)

    def _number(self, name: str, spec: dict[str, object], required: bool, *, whole: bool) -> Field:
        box: QSpinBox | QDoubleSpinBox
        limit = INT_LIMIT if whole else NUMBER_LIMIT
        least, most = _bound(spec.get("minimum"), -limit), _bound(spec.get("maximum"), limit)
        least, most = max(least, -limit), min(most, limit)
        default = spec.get("default")
        has_default = isinstance(default, int | float) and not isinstance(default, bool)
        # An optional number without a default starts unanswered: one below its least (or
        # the box's own least), shown as "—" (Qt's special value), read as left empty.
        empty = not required and not has_default
        floor = least - 1 if empty and least > -limit else least
        start = floor if empty else _bound(default, min(max(0.0, floor), most))
        if whole:
            spin = QSpinBox(self)
            spin.setRange(int(floor), int(most))
            spin.setValue(int(start))
            box = spin
        else:
            decimal = QDoubleSpinBox(self)
            decimal.setDecimals(NUMBER_DECIMALS)
            decimal.setRange(floor, most)
            decimal.setValue(start)
            box = decimal
        if empty:
            box.setSpecialValueText(NO_CHOICE)
        unanswered = box.minimum() if box.specialValueText() else None

        def read() -> object:
            value = box.value()
            if value == unanswered:
                return None
            return int(value) if whole else float(value)

        return Field(name, box, read)

    def _combo(
        self, name: str, options: list[tuple[str, str]], default: object, required: bool
    ) -> Field:
        combo = QComboBox(self)
        if not required and default is None:
            combo.addItem(NO_CHOICE, None)
        for value, title in options:
            combo.addItem(title, value)
        at = combo.findData(default)
        if at >= 0:
            combo.setCurrentIndex(at)
        return Field(name, combo, combo.currentData)

    def _checks(
        self, name: str, options: list[tuple[str, str]], default: object, required: bool
    ) -> Field:
        group = QWidget(self)
        column = QVBoxLayout(group)
        column.setContentsMargins(0, 0, 0, 0)
        chosen = default if isinstance(default, list) else []
        boxes: list[tuple[str, QCheckBox]] = []
        for value, title in options:
            box = QCheckBox(title, group)
            box.setChecked(value in chosen)
            column.addWidget(box)
            boxes.append((value, box))

        def read() -> object:
            picked = [value for value, box in boxes if box.isChecked()]
            return picked if picked or required else None

        return Field(name, group, read)


def choices(spec: dict[str, object]) -> list[tuple[str, str]] | None:
    """The (value, title) a field is chosen from: `enum` (titled by `enumNames` when given),
    or the `const`s of `oneOf`/`anyOf` with their `title`s; None when it is not a choice."""
    enum = spec.get("enum")
    if isinstance(enum, list):
        names = spec.get("enumNames")
        titles = names if isinstance(names, list) and len(names) == len(enum) else enum
        return [(str(v), str(t)) for v, t in zip(enum, titles, strict=True)]
    for key in ("oneOf", "anyOf"):
        options = spec.get(key)
        if isinstance(options, list):
            found = [o for o in options if isinstance(o, dict) and "const" in o]
            return [(str(o["const"]), str(o.get("title") or o["const"])) for o in found]
    return None


def _bound(value: object, otherwise: float) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    return otherwise
