"""The agent's steps inside a run: tool calls the model makes, run and saved as parts."""
