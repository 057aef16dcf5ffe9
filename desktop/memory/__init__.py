"""What the assistant remembers, shown and changed: a dialog per scope (a project's chats,
or those outside every project)."""
