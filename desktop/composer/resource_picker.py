"""Attach → From a tool server…: the tool servers and the resources each offers, to attach to
the message like files. A tree: each server a heading (how it is doing, or how many it
offers), its resources under it with their name (the server's title, else its name), type
and size; a filter box above it that keeps what matches in a name, title, URI, description
or type; the chosen one's URI and description below. Enter, a double click or Attach attaches
the selected ones (several with Ctrl or Shift). A server's templates of URIs
(`notes://{name}`) are listed after its resources: choosing one asks what goes in it first.
It only shows what its controller gives it (resource_choice.py) and says what was chosen."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.composer.attachment_files import size_text
from desktop.look.colours import Colours
from desktop.widgets.server_dialog import MessageLine, ServerDialog
from server.types.tools import ResourceJSON, ResourcesJSON, ResourceTemplateJSON

RESOURCE_ROLE = Qt.ItemDataRole.UserRole  # a resource row's ResourceJSON
SERVER_ROLE = Qt.ItemDataRole.UserRole + 1  # every row's server name
TEMPLATE_ROLE = Qt.ItemDataRole.UserRole + 2  # a template row's ResourceTemplateJSON
LOADING = "loading…"
NO_SERVERS = "No tool server is set up. Add one in MCP servers (the tools button above)."


def resource_label(resource: ResourceJSON | ResourceTemplateJSON) -> str:
    """What a person reads a resource by: its title, else its name."""
    return resource["title"] or resource["name"]


def _uri(resource: Mapping[str, object]) -> str:
    """A resource's URI, or a template's."""
    return str(resource.get("uri", resource.get("uri_template", "")))


def matches(resource: ResourceJSON | ResourceTemplateJSON, words: str) -> bool:
    """Whether each of `words` is in its name, title, URI, description or type."""
    said = " ".join(
        value or "" for value in (resource["name"], resource["title"], _uri(resource),
                                  resource["description"], resource["mime"])
    ).casefold()  # fmt: skip
    return all(word in said for word in words.casefold().split())


class _Tree(QTreeWidget):
    activated_by_key = Signal()  # Enter on a resource: attach it, as a double click does

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.activated_by_key.emit()
            return
        super().keyPressEvent(event)


class ResourcePicker(ServerDialog):
    resources_chosen = Signal(str, list)  # a server's name and the ResourceJSONs chosen
    template_chosen = Signal(str, object)  # a server's name and a ResourceTemplateJSON

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Attach from a tool server")
        self.setObjectName("resource-picker")
        self.resize(620, 440)
        self.filter = QLineEdit(self)
        self.filter.setObjectName("resource-filter")
        self.filter.setPlaceholderText("Filter by name, URI or type")
        self.filter.setAccessibleName("Filter resources")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._apply_filter)
        self.tree = _Tree(self)
        self.tree.setObjectName("resources")
        self.tree.setAccessibleName("Tool servers and their resources")
        self.tree.setColumnCount(3)
        self.tree.setHeaderLabels(("Name", "Type", "Size"))
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(False)
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemSelectionChanged.connect(self._on_selection_changed)
        self.tree.itemDoubleClicked.connect(lambda *_: self._attach())
        self.tree.activated_by_key.connect(self._attach)
        self.about = QLabel(self)  # the resource in view: its URI and description
        self.about.setObjectName("resource-about")
        self.about.setWordWrap(True)
        self.about.setTextFormat(Qt.TextFormat.PlainText)
        self.about.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.about.setStyleSheet(f"color: {Colours(self.palette()).muted};")
        self.message = MessageLine("resource-message", self)
        buttons = QDialogButtonBox(self)
        self.attach_button = buttons.addButton("Attach", QDialogButtonBox.ButtonRole.AcceptRole)
        self.attach_button.setEnabled(False)
        self.attach_button.setDefault(True)
        buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self._attach)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 16, 16, 16)
        layout.setSpacing(8)
        layout.addWidget(self.filter)
        layout.addWidget(self.tree, 1)
        layout.addWidget(self.about)
        layout.addWidget(self.message)
        layout.addWidget(buttons)
        self._servers: dict[str, QTreeWidgetItem] = {}
        self.filter.setFocus()

    # -- what its controller says ---------------------------------------------------------------

    def show_servers(self, servers: list[tuple[str, str]]) -> None:
        """The servers (name, and how it is doing in words: "" while its resources load)."""
        self.tree.clear()
        self._servers = {}
        for name, state in servers:
            item = QTreeWidgetItem(self.tree, [name, state or LOADING, ""])
            item.setData(0, SERVER_ROLE, name)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)  # a heading: not chosen itself
            font = item.font(0)
            font.setBold(True)
            item.setFont(0, font)
            item.setFirstColumnSpanned(True)
            item.setText(0, f"{name} — {state or LOADING}")
            item.setExpanded(True)
            self._servers[name] = item
        if not servers:
            self.show_note(NO_SERVERS)

    def show_resources(self, server: str, listing: ResourcesJSON) -> None:
        heading = self._servers.get(server)
        if heading is None:
            return
        resources = listing["resources"]
        count = len(resources)
        said = f"{count} resource{'s' if count != 1 else ''}" if count else "offers no resources"
        heading.setText(0, f"{server} — {said}")
        for resource in resources:
            size = resource["size"]
            row = QTreeWidgetItem(
                heading,
                [resource_label(resource), resource["mime"] or "",
                 size_text(size) if size is not None else ""],
            )  # fmt: skip
            row.setData(0, RESOURCE_ROLE, resource)
            row.setData(0, SERVER_ROLE, server)
            row.setToolTip(0, _about(resource))
            row.setTextAlignment(2, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        for template in listing["templates"]:
            shown = f"{resource_label(template)} ({template['uri_template']})"
            row = QTreeWidgetItem(heading, [shown, template["mime"] or "", "fill in…"])
            row.setData(0, TEMPLATE_ROLE, template)
            row.setData(0, SERVER_ROLE, server)
            row.setToolTip(0, _about(template))
        heading.setExpanded(True)
        self._apply_filter(self.filter.text())

    def show_server_failure(self, server: str, why: str) -> None:
        heading = self._servers.get(server)
        if heading is not None:
            heading.setText(0, f"{server} — {why}")
            heading.setToolTip(0, why)

    # -- what it says --------------------------------------------------------------------------

    def chosen(self) -> tuple[str, list[ResourceJSON]] | None:
        """The resources selected (of one server: the current one's)."""
        current = self.tree.currentItem()
        selected = [i for i in self.tree.selectedItems() if i.data(0, RESOURCE_ROLE)]
        if current is not None and current.data(0, RESOURCE_ROLE) and current not in selected:
            selected.append(current)
        if not selected:
            return None
        server = str(selected[0].data(0, SERVER_ROLE))
        picked = [i.data(0, RESOURCE_ROLE) for i in selected if i.data(0, SERVER_ROLE) == server]
        return server, picked

    def _attach(self) -> None:
        current = self.tree.currentItem()
        template = current.data(0, TEMPLATE_ROLE) if current is not None else None
        if current is not None and template:
            self.template_chosen.emit(current.data(0, SERVER_ROLE), template)
            self.accept()
            return
        chosen = self.chosen()
        if chosen is not None:
            self.resources_chosen.emit(*chosen)
            self.accept()

    def _on_selection_changed(self) -> None:
        current = self.tree.currentItem()
        resource = current.data(0, RESOURCE_ROLE) if current is not None else None
        template = current.data(0, TEMPLATE_ROLE) if current is not None else None
        found = resource or template
        self.about.setText(_about(found) if found else "")
        self.attach_button.setEnabled(bool(template) or self.chosen() is not None)

    def _apply_filter(self, words: str) -> None:
        for heading in self._servers.values():
            shown = 0
            for row in _rows(heading):
                resource = row.data(0, RESOURCE_ROLE) or row.data(0, TEMPLATE_ROLE)
                hide = not matches(resource, words)
                row.setHidden(hide)
                shown += not hide
            # A server with nothing that matches goes while filtering (it comes back after).
            heading.setHidden(bool(words.strip()) and shown == 0)
        current = self.tree.currentItem()
        if current is None or current.isHidden() or current.parent() is None:
            first = self._first_shown()
            if first is not None:
                self.tree.setCurrentItem(first)

    def _first_shown(self) -> QTreeWidgetItem | None:
        for heading in self._servers.values():
            for row in _rows(heading):
                if not row.isHidden() and not heading.isHidden():
                    return row
        return None

    def keyPressEvent(self, event: QKeyEvent) -> None:
        # Down from the filter goes on to the list, as in a search field with results.
        if event.key() == Qt.Key.Key_Down and self.filter.hasFocus():
            self.tree.setFocus()
            return
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.filter.hasFocus():
            self._attach()
            return
        super().keyPressEvent(event)


def _rows(heading: QTreeWidgetItem) -> list[QTreeWidgetItem]:
    return [row for i in range(heading.childCount()) if (row := heading.child(i)) is not None]


def _about(resource: ResourceJSON | ResourceTemplateJSON) -> str:
    said = _uri(resource)
    if resource["description"]:
        said += f" — {resource['description']}"
    return said
