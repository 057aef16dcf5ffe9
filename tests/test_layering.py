"""The house's layering, read from the source with `ast` (invariant 4 of ARCHITECTURE.md).

`server/` never imports the desktop or Qt; `desktop/` takes from `server` only the wire types
and the configuration it starts the server with, and only `embedded.py` starts the server;
only the client package (`desktop/client/`) speaks HTTP.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUI_PACKAGES = ("desktop", "PySide6", "qasync", "shiboken6")
# What every desktop module may import from the server: the wire types and the settings.
DESKTOP_MAY_USE = {
    "server.types", "server.types.chunks", "server.types.getting_models", "server.settings"
}  # fmt: skip
# Starting the server (from the command line's flags) is embedded.py's job alone.
EMBEDDED_MAY_USE = DESKTOP_MAY_USE | {
    "server.app", "server.serve", "server.arguments", "server.errors", "server.logs"
}  # fmt: skip
HTTP_PACKAGES = ("httpx", "http", "urllib.request", "socket")


def modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def imports(path: Path) -> set[str]:
    """Every module `path` imports, absolute (`from x import y` gives `x` and `x.y`)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def under(module: str, packages: tuple[str, ...] | set[str]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("path", modules("server"), ids=name)
def test_the_server_never_imports_the_desktop_or_qt(path: Path) -> None:
    assert not [m for m in imports(path) if under(m, GUI_PACKAGES)]


@pytest.mark.parametrize("path", modules("desktop"), ids=name)
def test_the_desktop_uses_only_the_allowed_server_modules(path: Path) -> None:
    allowed = EMBEDDED_MAY_USE if path.name == "embedded.py" else DESKTOP_MAY_USE
    used = {m for m in imports(path) if under(m, ("server",))}
    assert used <= allowed, f"{name(path)} imports {sorted(used - allowed)}"


@pytest.mark.parametrize("path", modules("desktop"), ids=name)
def test_only_the_client_speaks_http_to_the_server(path: Path) -> None:
    if path.parent.name == "client":  # the client package
        return
    assert not [m for m in imports(path) if under(m, HTTP_PACKAGES)], name(path)


@pytest.mark.parametrize("path", modules("server/types"), ids=name)
def test_the_wire_types_import_nothing_but_typing(path: Path) -> None:
    # The desktop imports server.types: it must not drag the server in with it.
    assert imports(path) <= {"__future__", "typing", "server.types"}


def test_the_checks_see_real_imports() -> None:
    """Guard against a walker that finds nothing (every test above would pass)."""
    assert "server.types" in imports(ROOT / "desktop" / "client" / "__init__.py")
    assert "PySide6.QtWidgets" in imports(ROOT / "desktop" / "main_window.py")
    assert "server.serve" in imports(ROOT / "desktop" / "embedded.py")
