"""Tools the agent calls: the MCP servers the user configured (one client session each)."""
