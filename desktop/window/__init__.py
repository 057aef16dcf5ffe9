"""The main window and its frame: the sidebar beside the chat, menus, the Help windows."""
