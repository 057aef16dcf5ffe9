"""The transcript: the conversation shown in the window, as one package (widget.py: the
`Transcript` widget and what it owns)."""

from desktop.widgets.transcript.widget import Transcript

__all__ = ["Transcript"]
