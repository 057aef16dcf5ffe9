"""Models from the Hugging Face Hub: the catalog (search, a repository's GGUF
files) and downloads (each in a child process that can be killed, resumed from the bytes on
disk, verified against the hub's sha256, then added like any GGUF: server/models/adding.py).

The hub is hostile input: every name, size and JSON shape it sends is checked here
(names.py), and every answer is bounded in size and time (session.py)."""
