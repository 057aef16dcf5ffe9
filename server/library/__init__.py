"""The user's documents: folders they add, parsed, chunked and indexed for the agent's search."""
