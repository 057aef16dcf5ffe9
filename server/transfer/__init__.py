"""Imports, streamed, batched and staged: the request body spooled to a file
(spool.py), read a conversation at a time (reading.py), written hidden in short batches and
shown at once (staging.py), run on a thread of its own with progress and a cancel (jobs.py).
The checks of each format stay in server/transfer/parley.py and server/transfer/chatgpt.py."""
