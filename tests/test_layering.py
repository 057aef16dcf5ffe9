"""The house's layering, read from the source with `ast` (invariant 4 of ARCHITECTURE.md).

`server/` never imports the desktop or Qt; `desktop/` takes from `server` only the wire types
and the configuration it starts the server with, and only `embedded.py` starts the server;
only the client package (`desktop/client/`) speaks HTTP. No module of either half imports,
at its top level, a module that imports it back.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUI_PACKAGES = ("desktop", "PySide6", "qasync", "shiboken6")
# What every desktop module may import from the server: the wire types and the settings.
DESKTOP_MAY_USE = {
    "server.types", "server.types.chunks", "server.types.getting_models",
    "server.types.tools", "server.types.library", "server.types.projects", "server.types.memory",
    "server.types.keys", "server.types.sse",
    "server.settings",
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
    assert {m for m in imports(path) if not m.startswith("server.types.")} <= {
        "__future__", "typing", "server.types"
    }  # fmt: skip


def test_the_event_splitter_imports_nothing() -> None:
    # The desktop reads its streams with it: it must not drag the server in with it either.
    assert imports(ROOT / "server" / "types" / "sse.py") <= {"__future__"}


def test_the_checks_see_real_imports() -> None:
    """Guard against a walker that finds nothing (every test above would pass)."""
    assert "server.types" in imports(ROOT / "desktop" / "client" / "__init__.py")
    assert "PySide6.QtWidgets" in imports(ROOT / "desktop" / "window" / "main_window.py")
    assert "server.serve" in imports(ROOT / "desktop" / "embedded.py")


# The server's packages, lowest first (docs/architecture.md). A module imports only from the
# layers below its own, and from its own layer only where the layer says so (the utilities
# and the entry points are loose modules that use one another).
LAYERS: list[tuple[set[str], bool]] = [
    ({"types"}, False),  # the wire, shared with the desktop
    ({"errors", "limits", "settings", "logs", "ids", "text", "files"}, True),
    ({"http"}, False),  # the front door's plumbing: deadlines, security, framing, bodies
    ({"storage"}, False),  # SQLite: no agent, turn, transfer or HTTP-route code
    ({"models"}, False),  # the backends
    ({"agent"}, False),  # the step loop, its toolbox interface, approvals, the feed
    ({"attachments"}, False),  # files attached to messages: stored, read, given to models
    ({"tools", "library", "transfer"}, False),  # tools, documents, import/export
    ({"projects"}, False),  # chats grouped: their fields, their folders in the library
    ({"memory"}, False),  # what the assistant remembers: files, and the tool that adds to them
    ({"turns"}, False),  # the run of one turn
    ({"routes"}, False),  # one module per resource
    ({"app", "serve"}, False),  # the app assembled, and served
    ({"arguments", "cli", "__main__"}, True),  # the command line
]


def unit(module: str) -> str | None:
    """`server.storage.store` -> "storage"; `server.cli` -> "cli"; None outside the server."""
    parts = module.split(".")
    if parts[0] != "server" or len(parts) < 2:
        return None
    return parts[1]


def layer(name: str) -> int:
    for index, (units, _) in enumerate(LAYERS):
        if name in units:
            return index
    raise AssertionError(f"server.{name} is in no layer: place it in LAYERS")


def wrong_way(own: str, used: set[str]) -> list[str]:
    """The imports of a module of `server.<own>` that go up or sideways."""
    here = layer(own)
    loose = LAYERS[here][1]
    found = []
    for module in sorted(used):
        other = unit(module)
        if other is None or other == own or other not in SERVER_UNITS:
            continue  # not the server's, its own package, or a name imported from `server`
        there = layer(other)
        if not (there < here or (loose and there == here)):
            found.append(module)
    return found


SERVER_UNITS = {
    p.stem for p in (ROOT / "server").iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()
} - {"__init__"}


@pytest.mark.parametrize("path", modules("server"), ids=name)
def test_the_server_imports_only_downwards(path: Path) -> None:
    own = unit(".".join(path.relative_to(ROOT).with_suffix("").parts))
    if own is None or own == "__init__":
        return
    assert not wrong_way(own, imports(path)), name(path)


def test_every_server_package_and_module_has_a_layer() -> None:
    assert {"storage", "turns", "http", "cli"} <= SERVER_UNITS
    for each in SERVER_UNITS:
        layer(each)


def test_the_layering_check_sees_wrong_way_imports() -> None:
    """Guard: the rule above fails for an import that goes up or sideways."""
    assert wrong_way("storage", {"server.agent.steps", "server.types"}) == ["server.agent.steps"]
    assert wrong_way("tools", {"server.library.tool"}) == ["server.library.tool"]
    assert wrong_way("settings", {"server.logs"}) == []  # a loose layer
    assert wrong_way("turns", {"server.storage.store", "server.agent.loop"}) == []


# The desktop's packages, lowest first (docs/architecture.md): the same rule as the server's.
# What draws (the transcript, the composer) never reaches up to what drives it (a reply, the
# window); the window assembles everything, and the app starts the window.
DESKTOP_LAYERS: list[tuple[set[str], bool]] = [
    # utilities, the embedded server's thread and the asyncio loop
    ({"errors", "tasks", "file_folders", "file_names", "image_decoding", "embedded",
      "event_loop", "desktop_entry"}, True),
    ({"client"}, False),  # every request to the server, and what its answers mean
    ({"look"}, False),  # palettes, type and spacing scales, icons, the style sheet
    ({"widgets"}, False),  # widgets shared by several packages
    ({"controller", "dialog_controller"}, True),  # how the window's controllers are made
    ({"settings"}, False),  # the app's own settings: backends, keys, the system prompt
    ({"models", "tools", "memory"}, False),  # the models', the tools' and memory's dialogs
    ({"composer"}, False),  # where the user writes, and the chat bar
    ({"transcript"}, False),  # the chat drawn on Qt Quick
    ({"chats"}, False),  # the sidebar, a chat opened, exported and imported
    ({"replies"}, False),  # a reply's life and the cards that ask during it
    ({"context"}, False),  # the context meter, summaries, Compact now
    ({"window"}, False),  # the main window assembles them
    ({"app", "__main__"}, True),  # the app: the window, the server, the one quit path
]  # fmt: skip
DESKTOP_UNITS = {
    p.stem
    for p in (ROOT / "desktop").iterdir()
    if p.suffix == ".py" or (p / "__init__.py").exists()
} - {"__init__"}


def desktop_wrong_way(own: str, used: set[str]) -> list[str]:
    """The imports of a module of `desktop.<own>` that go up or sideways."""
    return layered_wrong_way(DESKTOP_LAYERS, "desktop", own, used)


def layered_wrong_way(
    layers: list[tuple[set[str], bool]], root: str, own: str, used: set[str]
) -> list[str]:
    def place(name: str) -> int:
        for index, (units, _) in enumerate(layers):
            if name in units:
                return index
        raise AssertionError(f"{root}.{name} is in no layer: place it in the layers")

    here = place(own)
    found = []
    for module in sorted(used):
        parts = module.split(".")
        if parts[0] != root or len(parts) < 2 or parts[1] == own:
            continue
        there = place(parts[1])
        if not (there < here or (layers[here][1] and there == here)):
            found.append(module)
    return found


@pytest.mark.parametrize("path", modules("desktop"), ids=name)
def test_the_desktop_imports_only_downwards(path: Path) -> None:
    parts = path.relative_to(ROOT).with_suffix("").parts
    if len(parts) < 2 or parts[1] == "__init__":
        return
    assert not desktop_wrong_way(parts[1], imports(path)), name(path)


def test_every_desktop_package_and_module_has_a_layer() -> None:
    assert {"window", "transcript", "chats", "composer", "replies", "look"} <= DESKTOP_UNITS
    assert len([u for u in DESKTOP_UNITS if (ROOT / "desktop" / u).is_dir()]) >= 12
    for each in DESKTOP_UNITS:
        assert not layered_wrong_way(DESKTOP_LAYERS, "desktop", each, set())


def test_the_desktop_layering_check_sees_wrong_way_imports() -> None:
    """Guard: what draws may not reach up to what drives it, nor sideways."""
    assert desktop_wrong_way("transcript", {"desktop.replies.controller"}) == [
        "desktop.replies.controller"
    ]
    assert desktop_wrong_way("models", {"desktop.tools.tools_dialog"}) == [
        "desktop.tools.tools_dialog"
    ]
    assert desktop_wrong_way("window", {"desktop.replies.controller", "desktop.look.theme"}) == []
    assert desktop_wrong_way("tasks", {"desktop.errors"}) == []  # a loose layer


def module_name(path: Path) -> str:
    """`server/storage/store.py` -> "server.storage.store"; a package's `__init__` is itself."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The imports of a module's own level: those run when it is imported, and those under
    `if TYPE_CHECKING:` (a module that names another's types for the checker depends on it
    as much; a circle hidden there is still a circle). Not those in a function or a
    class's methods."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If):
            pending.extend(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            pending.extend(node.body + node.orelse + node.finalbody)
            for handler in node.handlers:
                pending.extend(handler.body)
        elif isinstance(node, ast.With | ast.ClassDef):
            pending.extend(node.body)
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """Each module of `package` -> the modules of `package` it imports when it is imported
    (`from a import b` gives `a.b` where that is a module, else `a`)."""
    paths = {module_name(path): path for path in modules(package)}
    graph: dict[str, set[str]] = {}
    for here, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        used: set[str] = set()
        for node in top_level_imports(tree):
            if isinstance(node, ast.Import):
                used.update(alias.name for alias in node.names)
            elif node.module and node.level == 0:
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    used.add(sub if sub in paths else node.module)
        graph[here] = {m for m in used if m in paths and m != here}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected group of modules, as the import path
    `a -> b -> ... -> a` (Tarjan's algorithm; none in an acyclic graph)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [path_around(graph, group) for group in groups]


def path_around(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest import path from the group's first module back to itself, within the group."""
    start = min(group)
    came_from: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for other in sorted(graph[node] & group):
                if other == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(came_from[path[-1]])
                    return [*reversed(path), start]
                if other not in came_from:
                    came_from[other] = node
                    following.append(other)
        frontier = following
    raise AssertionError(f"no cycle through {sorted(group)}")  # a group always has one


@pytest.mark.parametrize("package", ["server", "desktop"])
def test_no_import_cycles(package: str) -> None:
    """A module never imports, at its top level (for the type checker too), one that imports
    it back (directly or not): which half runs first would depend on which is imported
    first, and two modules that each need the other are one concept split in two."""
    found = cycles(import_graph(package))
    assert not found, "import cycles (move the shared part down, or import in a function):\n" + (
        "\n".join(" -> ".join(cycle) for cycle in found)
    )


def test_the_cycle_check_sees_cycles() -> None:
    """Guard: the check finds a cycle and names it in order; it counts the module's own
    level, for the type checker too, and not what a function imports when it runs."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set()}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    source = (
        "import a\nif TYPE_CHECKING:\n    import b\nelse:\n    import c\n"
        "try:\n    import d\nexcept ImportError:\n    import e\n"
        "def f():\n    import g\nclass K:\n    import h\n    def m(self):\n        import i\n"
    )
    found = {alias.name for node in top_level_imports(ast.parse(source)) for alias in node.names}
    assert found == {"a", "b", "c", "d", "e", "h"}
    # server/serve.py imports the deadlines at its top, Services only for the type checker.
    assert import_graph("server")["server.serve"] >= {
        "server.http.protocol", "server.settings", "server.routes.services"
    }  # fmt: skip
