"""Download a model from Hugging Face (issue 39): search GGUF repositories, pick a file (its
size, quantization and whether it fits this machine), download it with its progress (bytes,
speed, time left), pause, resume or cancel; a finished download is verified and added as a
model by the server.

The dialog only shows and asks: desktop/models/hub_controller.py hears its requests, calls the
server, and answers with `show_repos`, `show_files`, `show_downloads` or `show_error`.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal, SignalInstance
from PySide6.QtWidgets import (
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from desktop.widgets.server_dialog import MessageLine, ServerDialog, rows_table
from server.types.getting_models import DownloadJSON, HubFileJSON, HubRepoFilesJSON, HubRepoJSON

REPO_COLUMNS = ("Repository", "Downloads", "Likes", "Access")
FILE_COLUMNS = ("File", "Size", "Quantization", "Fits")
DOWNLOAD_COLUMNS = ("File", "State", "Progress", "Speed", "Time left")
STATES = {
    "queued": "waiting",
    "downloading": "downloading",
    "paused": "paused",
    "verifying": "checking the file…",
    "completed": "ready",
    "failed": "failed",
}


def size_text(size: int | None) -> str:
    if size is None:
        return "?"
    return f"{size / 1e9:.2f} GB" if size >= 1e9 else f"{size / 1e6:,.0f} MB"


def progress_text(download: DownloadJSON) -> str:
    total, done = download["size_bytes"], download["bytes_done"]
    share = f" ({100 * done / total:.0f}%)" if total else ""
    return f"{size_text(done)} of {size_text(total)}{share}"


def speed_text(download: DownloadJSON) -> str:
    rate = download["rate_bytes_per_s"]
    return f"{rate / 1e6:.1f} MB/s" if rate and download["state"] == "downloading" else ""


def time_left_text(download: DownloadJSON) -> str:
    left = download["seconds_left"]
    if left is None or download["state"] != "downloading":
        return ""
    minutes, seconds = divmod(int(left), 60)
    if not minutes and not seconds:
        return "a moment"
    return f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"


def state_text(download: DownloadJSON) -> str:
    text = STATES.get(download["state"], download["state"])
    if download["state"] == "failed" and download["error"]:
        text += f": {download['error']}"
    if download["state"] == "completed" and download["model"]:
        text += f" (the model {download['model']})"
    return text


class HubDialog(ServerDialog):
    search_requested = Signal(str)  # what to look for
    files_requested = Signal(str)  # a repository: owner/name
    download_requested = Signal(str, str, str)  # repository, file, revision
    pause_requested = Signal(str)  # a download's id
    resume_requested = Signal(str)
    cancel_requested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Download a model")
        self.setObjectName("hub-dialog")
        self.resize(900, 640)
        self._files: HubRepoFilesJSON | None = None
        self._downloads: list[DownloadJSON] = []
        self.query = QLineEdit(self)
        self.query.setPlaceholderText("Search Hugging Face for GGUF models, e.g. qwen2.5 1.5b")
        self.search_button = QPushButton("Search", self)
        self.repos = rows_table(REPO_COLUMNS, "Repositories", self)
        self.files = rows_table(FILE_COLUMNS, "Files", self)
        self.download_button = QPushButton("Download", self)
        self.download_button.setEnabled(False)
        self.downloads = rows_table(DOWNLOAD_COLUMNS, "Downloads", self)
        self.pause_button = QPushButton("Pause", self)
        self.resume_button = QPushButton("Resume", self)
        self.cancel_button = QPushButton("Cancel download", self)
        for button in (self.pause_button, self.resume_button, self.cancel_button):
            button.setEnabled(False)
        self.message = MessageLine("hub-message", self)
        close = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        search_row = QHBoxLayout()
        search_row.addWidget(self.query, 1)
        search_row.addWidget(self.search_button)
        file_row = QHBoxLayout()
        file_row.addWidget(self.download_button)
        file_row.addStretch(1)
        download_row = QHBoxLayout()
        for button in (self.pause_button, self.resume_button, self.cancel_button):
            download_row.addWidget(button)
        download_row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addLayout(search_row)
        layout.addWidget(self.repos, 2)
        layout.addWidget(QLabel("Files of the selected repository", self))
        layout.addWidget(self.files, 2)
        layout.addLayout(file_row)
        layout.addWidget(QLabel("Downloads", self))
        layout.addWidget(self.downloads, 1)
        layout.addLayout(download_row)
        layout.addWidget(self.message)
        layout.addWidget(close)
        close.rejected.connect(self.reject)
        self.search_button.clicked.connect(self._on_search)
        self.query.returnPressed.connect(self._on_search)
        self.repos.itemSelectionChanged.connect(self._on_repo_selected)
        self.files.itemSelectionChanged.connect(self._on_file_selected)
        self.download_button.clicked.connect(self._on_download_clicked)
        self.downloads.itemSelectionChanged.connect(self._on_download_selected)
        self.pause_button.clicked.connect(lambda: self._emit_for_download(self.pause_requested))
        self.resume_button.clicked.connect(lambda: self._emit_for_download(self.resume_requested))
        self.cancel_button.clicked.connect(lambda: self._emit_for_download(self.cancel_requested))

    # -- what the server says ------------------------------------------------------------------

    def show_repos(self, repos: list[HubRepoJSON]) -> None:
        self.repos.setRowCount(len(repos))
        for row, repo in enumerate(repos):
            access = "asks for access" if repo["gated"] else "open"
            cells = (repo["id"], f"{repo['downloads']:,}", f"{repo['likes']:,}", access)
            _fill(self.repos, row, cells, repo["id"])
        self.files.setRowCount(0)
        self._files = None
        self.show_note(f"{len(repos)} repositor{'y' if len(repos) == 1 else 'ies'} found.")

    def show_files(self, listing: HubRepoFilesJSON) -> None:
        self._files = listing
        files = listing["files"]
        self.files.setRowCount(len(files))
        for row, found in enumerate(files):
            verdict, why = _fit(found)
            cells = (found["file"], size_text(found["size_bytes"]),
                     found["quantization"] or "", verdict)  # fmt: skip
            _fill(self.files, row, cells, found["file"], tips={3: why})
        self._on_file_selected()

    def show_downloads(self, downloads: list[DownloadJSON]) -> None:
        chosen = self._selected(self.downloads)
        self._downloads = downloads
        self.downloads.setRowCount(len(downloads))
        for row, download in enumerate(downloads):
            cells = (download["file"], state_text(download), progress_text(download),
                     speed_text(download), time_left_text(download))  # fmt: skip
            _fill(self.downloads, row, cells, download["id"])
            if download["id"] == chosen:
                self.downloads.selectRow(row)
        self._on_download_selected()

    # -- what the user does --------------------------------------------------------------------

    def _on_search(self) -> None:
        query = self.query.text().strip()
        if query:
            self.show_note(f"Searching for {query}…")
            self.search_requested.emit(query)

    def _on_repo_selected(self) -> None:
        repo = self._selected(self.repos)
        if repo:
            self.show_note(f"Listing the files of {repo}…")
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
        if found is not None and listing is not None:
            self.show_note(f"Downloading {found['file']}…")
            self.download_requested.emit(listing["repo"], found["file"], listing["revision"])

    def _on_download_selected(self) -> None:
        chosen = self._selected(self.downloads)
        download = next((d for d in self._downloads if d["id"] == chosen), None)
        state = download["state"] if download is not None else None
        self.pause_button.setEnabled(state in ("queued", "downloading"))
        resumable = download is not None and download["resumable"]
        self.resume_button.setEnabled(state == "paused" or (state == "failed" and resumable))
        self.cancel_button.setEnabled(state in ("queued", "downloading", "paused", "failed"))

    def _emit_for_download(self, signal: SignalInstance) -> None:
        chosen = self._selected(self.downloads)
        if chosen:
            signal.emit(chosen)

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
