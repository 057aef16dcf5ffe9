"""Widgets shared by several of the window's packages (a label that elides, the frame of
the dialogs that show the server's things)."""
