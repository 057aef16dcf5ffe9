"""Where the user writes: the message box, its attachments, the chat bar (model, switches)
and Send/Stop."""
