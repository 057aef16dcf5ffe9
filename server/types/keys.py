"""The keys a wire shape must carry, read from its TypedDict, so a list of them cannot be
written by hand and fall behind when a field is added.

`__required_keys__` is not enough on its own: under `from __future__ import annotations`
(every module here) Python 3.11 sees `NotRequired[...]` only as text, and counts the key as
required. The annotation's own text says which keys are `NotRequired` (or `Required` in a
`total=False` shape); it is read, not resolved, since some shapes name types imported only
for type checking."""

from __future__ import annotations

from typing import ForwardRef, NotRequired, Required, get_origin


def required_keys(kind: type) -> tuple[str, ...]:
    """The keys every object of the TypedDict `kind` has, in the order it declares them."""
    declared: frozenset[str] = getattr(kind, "__required_keys__", frozenset())
    return tuple(
        key
        for key, hint in kind.__annotations__.items()
        if _marked(hint, "Required", Required)
        or (key in declared and not _marked(hint, "NotRequired", NotRequired))
    )


def _marked(hint: object, name: str, marker: object) -> bool:
    """Whether the annotation `hint` is `marker[...]`, as an object or as text."""
    if isinstance(hint, ForwardRef):
        hint = hint.__forward_arg__
    if isinstance(hint, str):
        return hint.startswith((f"{name}[", f"typing.{name}["))
    return get_origin(hint) is marker
