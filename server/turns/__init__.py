"""The run of one turn and everything of its life: open, stream, checkpoint, stop, settle, feed."""
