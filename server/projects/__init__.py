"""Projects: chats grouped with their own instructions and library folders. Their rows are
server/storage/projects.py; what a request may set is `fields`, a project's folders checked
against the library (and added to it) is `folders`."""
