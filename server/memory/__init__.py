"""What the assistant remembers across chats, kept as Markdown files the user owns.

One file for the chats outside any project (`<data>/memory/global.md`) and one per project
(`<data>/memory/projects/<project id>.md`). The user may open, edit and delete them in any
editor; Parley reads them as hostile input (`files`), writes them only over the version it
read (server/tools/file_version.py), gives them to the model in the system message of each
turn (`prompt`), and adds a line only through the `remember` tool, which asks first (`tool`).
The file's lines and their links to the chats they came from: `format`.
"""
