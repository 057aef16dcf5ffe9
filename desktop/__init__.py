"""Parley's desktop window (PySide6 on a qasync loop). Reaches the server only over HTTP."""
