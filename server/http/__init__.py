"""The HTTP front door: deadlines on requests (protocol), security, framing, JSON bodies and
the errors' one renderer. Imports nothing of the house but errors, settings and types."""
