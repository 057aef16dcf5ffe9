"""The tools: MCP servers (added, imported, trusted) and the library of the user's documents."""
