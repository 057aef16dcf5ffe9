"""The models page's "Download" part: search Hugging Face for GGUF repositories, open one to
see its files (size, quantization, whether it fits this machine) and download one. The
download itself shows on the page's list, as a row of its own.

Search results always open: the rows are refilled with nothing selected (a selection kept
from an earlier search would never change again, and its files would never load), and a
search with one result opens it at once. A file that will not fit asks first.

The panel only shows and asks: desktop/models/models_controller.py hears its requests and
answers with `show_repos` and `show_files`."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.models.words import size_text
from desktop.widgets.server_dialog import rows_table
from server.types.getting_models import HubFileJSON, HubRepoFilesJSON, HubRepoJSON

REPO_COLUMNS = ("Repository", "Downloads", "Likes", "Access")
FILE_COLUMNS = ("File", "Size", "Quantization", "Fits")

NO_REPOSITORY = "Files of the selected repository"


class HubPanel(QWidget):
    search_requested = Signal(str)  # what to look for
    files_requested = Signal(str)  # a repository: owner/name
    download_requested = Signal(str, str, str)  # repository, file, revision
    noted = Signal(str)  # what it is doing now, for the page's message line

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("hub-panel")
        self._files: HubRepoFilesJSON | None = None
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Search Hugging Face for GGUF models, e.g. qwen2.5 1.5b")
        self.query.setAccessibleName("Search Hugging Face")
        self.search_button = QPushButton("Search", self)
        self.search_button.setAutoDefault(False)
        self.repos = rows_table(REPO_COLUMNS, "Repositories", self)
        self.files = rows_table(FILE_COLUMNS, "Files", self)
        self.files_label = QLabel(NO_REPOSITORY, self)
        self.download_button = QPushButton("Download", self)
        self.download_button.setAutoDefault(False)
        self.download_button.setEnabled(False)
        search_row = QHBoxLayout()
        search_row.addWidget(self.query, 1)
        search_row.addWidget(self.search_button)
        file_row = QHBoxLayout()
        file_row.addWidget(self.download_button)
        file_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(16, 12, 16, 12)
        layout.setSpacing(8)
        layout.addLayout(search_row)
        layout.addWidget(self.repos, 1)
        layout.addWidget(self.files_label)
        layout.addWidget(self.files, 1)
        layout.addLayout(file_row)
        self.search_button.clicked.connect(self._on_search)
        self.query.returnPressed.connect(self._on_search)
        self.repos.itemSelectionChanged.connect(self._on_repo_selected)
        self.files.itemSelectionChanged.connect(self._on_file_selected)
        self.download_button.clicked.connect(self._on_download_clicked)

    # -- what the server says ------------------------------------------------------------

    def show_repos(self, repos: list[HubRepoJSON]) -> None:
        self._files = None
        self.files.setRowCount(0)
        self._on_file_selected()
        # Nothing selected before the rows change: a row selected now must be news.
        self.repos.blockSignals(True)
        self.repos.clearSelection()
        self.repos.setCurrentCell(-1, -1)
        self.repos.setRowCount(len(repos))
        for row, repo in enumerate(repos):
            access = "asks for access" if repo["gated"] else "open"
            cells = (repo["id"], f"{repo['downloads']:,}", f"{repo['likes']:,}", access)
            _fill(self.repos, row, cells, repo["id"])
        self.repos.blockSignals(False)
        self.noted.emit(f"{len(repos)} repositor{'y' if len(repos) == 1 else 'ies'} found.")
        if len(repos) == 1:
            self.repos.selectRow(0)  # the one result, opened

    def show_files(self, listing: HubRepoFilesJSON) -> None:
        if self._selected(self.repos) != listing["repo"]:
            return  # an answer for a repository no longer chosen
        self._files = listing
        files = listing["files"]
        self.files_label.setText(f"Files of {listing['repo']}")
        self.files.clearSelection()
        self.files.setRowCount(len(files))
        for row, found in enumerate(files):
            verdict, why = _fit(found)
            cells = (found["file"], size_text(found["size_bytes"]),
                     found["quantization"] or "", verdict)  # fmt: skip
            _fill(self.files, row, cells, found["file"], tips={3: why})
        self._on_file_selected()
        count = f"{len(files)} GGUF file{'' if len(files) == 1 else 's'}"
        self.noted.emit(f"{count} in {listing['repo']}.")

    # -- what the user does ----------------------------------------------------------------

    def _on_search(self) -> None:
        query = self.query.text().strip()
        if query:
            # The last search's results go at once: a row chosen while the new ones come
            # would be one of theirs, and the answer would take it away.
            self.repos.blockSignals(True)
            self.repos.clearSelection()
            self.repos.setRowCount(0)
            self.repos.blockSignals(False)
            self._files = None
            self.files.setRowCount(0)
            self.files_label.setText(NO_REPOSITORY)
            self._on_file_selected()
            self.noted.emit(f"Searching for {query}…")
            self.search_requested.emit(query)

    def _on_repo_selected(self) -> None:
        repo = self._selected(self.repos)
        if repo:
            self.noted.emit(f"Listing the files of {repo}…")
            self.files_requested.emit(repo)

    def _chosen_file(self) -> HubFileJSON | None:
        name = self._selected(self.files)
        listing = self._files
        if listing is None or name is None:
            return None
        return next((f for f in listing["files"] if f["file"] == name), None)

    def _on_file_selected(self) -> None:
        found = self._chosen_file()
        usable = found is not None and not found["split"] and found["sha256"] is not None
        self.download_button.setEnabled(usable)
        if found is not None and found["split"]:
            self.download_button.setToolTip("A model split in several files: not offered yet")
        else:
            self.download_button.setToolTip("")

    def _on_download_clicked(self) -> None:
        found, listing = self._chosen_file(), self._files
        if found is None or listing is None:
            return
        fit = found.get("fit")
        if fit is not None and fit["verdict"] == "won't fit":
            self._ask_wont_fit(listing, found, fit["why"])
            return
        self._download(listing, found)

    def _download(self, listing: HubRepoFilesJSON, found: HubFileJSON) -> None:
        self.noted.emit(f"Downloading {found['file']}…")
        self.download_requested.emit(listing["repo"], found["file"], listing["revision"])

    def _ask_wont_fit(self, listing: HubRepoFilesJSON, found: HubFileJSON, why: str) -> None:
        ask = QMessageBox(
            QMessageBox.Icon.Warning,
            "A model that will not fit",
            f"{found['file']} ({size_text(found['size_bytes'])}) will not fit this computer.",
            QMessageBox.StandardButton.Cancel,
            self,
        )
        ask.setObjectName("download-wont-fit")
        ask.setInformativeText(f"{why}\n\nDownload it anyway?")
        anyway = ask.addButton("Download anyway", QMessageBox.ButtonRole.AcceptRole)

        def finished(_result: int) -> None:
            ask.deleteLater()
            if ask.clickedButton() is anyway:
                self._download(listing, found)

        ask.finished.connect(finished)
        ask.open()  # never exec() under qasync

    @staticmethod
    def _selected(table: QTableWidget) -> str | None:
        items = table.selectedItems()
        return str(items[0].data(Qt.ItemDataRole.UserRole)) if items else None


def _fill(
    table: QTableWidget,
    row: int,
    cells: tuple[str, ...],
    key: str,
    tips: dict[int, str] | None = None,
) -> None:
    for column, text in enumerate(cells):
        item = QTableWidgetItem(text)
        item.setToolTip((tips or {}).get(column, text))
        item.setData(Qt.ItemDataRole.UserRole, key)
        table.setItem(row, column, item)


def _fit(found: HubFileJSON) -> tuple[str, str]:
    fit = found.get("fit")
    if fit is None:
        return "", ""
    return fit["verdict"], fit["why"]
