"""The model's view of the chat: the context meter, summaries of earlier messages, Compact now."""
