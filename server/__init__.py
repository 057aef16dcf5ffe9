"""Parley's embedded server: conversations, the turn path, and the OpenAI-compatible API.

Never imports Qt: it runs headless as `parley-server` too.
"""
