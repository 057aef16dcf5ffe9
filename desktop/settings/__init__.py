"""The app's own settings: backends, their API keys, the system prompt."""
