"""MCP servers → Import from other apps: the servers Claude Desktop, Cursor, VS Code and
Windsurf are set up with (read by Parley's server; their secrets shown masked), each with a
tick to add it and the name it gets in Parley. A file that could not be read says why; an
entry Parley cannot run as it is says why and cannot be ticked; one whose name Parley has
already is offered under another name.

The dialog only shows and asks: `add_requested` carries the ticked ones as (file, name in
that app, name in Parley); the controller adds them and answers with `show_added`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from server.types.tools import FoundToolServerJSON, FoundToolsJSON

COLUMNS = ("Server", "Name in Parley", "", "Runs")
NAME, AS, NOTE, RUNS = range(4)  # the note (why not, a name taken) before the long command
SOURCE_ROLE = Qt.ItemDataRole.UserRole  # (file, name in that app)

Chosen = tuple[str, str, str]  # the file, the name in that app, the name in Parley


def describe_found(server: FoundToolServerJSON) -> str:
    """What it runs: the command and its arguments, or the URL; its environment and headers
    by name (their values masked)."""
    config = server["config"]
    if "url" in config:
        runs = config.get("url", "")
        secrets = config.get("headers", {})
    else:
        runs = " ".join([config.get("command", ""), *config.get("args", [])]).strip()
        secrets = config.get("env", {})
    named = " ".join(f"{key}={value}" for key, value in secrets.items())
    return f"{runs}  ({named})" if named else runs


def free_name(wanted: str, taken: set[str]) -> str:
    """`wanted`, or `wanted-2`, `wanted-3`, ... if Parley has a server of that name."""
    name, number = wanted, 2
    while name in taken:
        name, number = f"{wanted}-{number}", number + 1
    return name


class ImportServersDialog(QDialog):
    add_requested = Signal(list)  # [Chosen, ...]

    def __init__(
        self, found: FoundToolsJSON, taken: set[str], parent: QWidget | None = None
    ) -> None:
        """`taken`: the names of Parley's servers."""
        super().__init__(parent)
        self.setWindowTitle("Import MCP servers from other apps")
        self.setObjectName("import-servers")
        self.resize(820, 460)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(COLUMNS)
        self.tree.setAccessibleName("Servers found in other apps")
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)  # the name only
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setObjectName("import-message")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.add_button = QPushButton("Add ticked servers", self)
        buttons.addButton(self.add_button, QDialogButtonBox.ButtonRole.ActionRole)
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Tick the servers to add. Each runs only once added, with your trust choices "
            "(Parley asks before its tools act), and its secrets stay in the file Parley "
            "keeps them in.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        buttons.rejected.connect(self.reject)
        self.add_button.clicked.connect(self._on_add_button_clicked)
        self.tree.itemChanged.connect(self._on_tree_item_changed)
        self.tree.itemDoubleClicked.connect(self._on_tree_item_double_clicked)
        self._show(found, taken)

    def _show(self, found: FoundToolsJSON, taken: set[str]) -> None:
        given = set(taken)
        for app in found["apps"]:
            top = QTreeWidgetItem(self.tree, [app["app"], "", "", app["path"]])
            top.setToolTip(RUNS, app["path"])
            top.setExpanded(True)
            if app["error"]:
                top.setToolTip(NOTE, f"Cannot be read: {app['error']}")
                top.setText(NOTE, f"Cannot be read: {app['error']}")
            for server in app["servers"]:
                given.add(self._add_row(top, app["path"], server, given))
        if not found["apps"]:
            looked = "\n".join(found["looked_in"])
            self.message.setText(f"No other app's MCP servers were found. Looked in:\n{looked}")
        self._update_button()

    def _add_row(
        self, top: QTreeWidgetItem, path: str, server: FoundToolServerJSON, taken: set[str]
    ) -> str:
        name = free_name(server["suggested_name"], taken)
        item = QTreeWidgetItem(top, [server["name"], name, "", describe_found(server)])
        item.setData(NAME, SOURCE_ROLE, (path, server["name"]))
        item.setToolTip(RUNS, describe_found(server))
        if server["error"]:
            item.setText(NOTE, f"Cannot be added: {server['error']}")
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        else:
            flags = item.flags() | Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEditable
            item.setFlags(flags)
            item.setCheckState(NAME, Qt.CheckState.Unchecked)
            if name != server["suggested_name"]:
                item.setText(NOTE, f"Parley has a server named {server['suggested_name']}")
        return name

    def items(self) -> list[QTreeWidgetItem]:
        """The servers listed, every app's."""
        found: list[QTreeWidgetItem] = []
        for i in range(self.tree.topLevelItemCount()):
            app = self.tree.topLevelItem(i)
            children = [app.child(j) for j in range(app.childCount())] if app else []
            found += [child for child in children if child is not None]
        return found

    def chosen(self) -> list[Chosen]:
        found = []
        for item in self.items():
            if item.checkState(NAME) == Qt.CheckState.Checked:
                path, name = item.data(NAME, SOURCE_ROLE)
                found.append((str(path), str(name), item.text(AS).strip()))
        return found

    def show_added(self, added: list[str], failed: list[str]) -> None:
        """What the controller added (their names in Parley) and what it could not (why)."""
        lines = []
        if added:
            lines.append(f"Added {', '.join(added)}; starting now.")
        lines += failed
        self.message.setText("\n".join(lines))
        for item in self.items():
            if item.text(AS) in added:
                item.setCheckState(NAME, Qt.CheckState.Unchecked)
                item.setText(NOTE, "Added")
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
        self._update_button()

    def _update_button(self) -> None:
        self.add_button.setEnabled(bool(self.chosen()))

    def _on_tree_item_changed(self, _item: QTreeWidgetItem, _column: int) -> None:
        self._update_button()

    def _on_tree_item_double_clicked(self, item: QTreeWidgetItem, _column: int) -> None:
        if item.flags() & Qt.ItemFlag.ItemIsEditable:
            self.tree.editItem(item, AS)  # its name in Parley, wherever it is clicked

    def _on_add_button_clicked(self) -> None:
        chosen = self.chosen()
        if chosen:
            self.message.setText("Adding…")
            self.add_requested.emit(chosen)
