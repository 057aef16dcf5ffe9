"""The GGUF files already on this machine, found where other apps keep them and used in place,
never copied ("zero-copy library").

Looked in: LM Studio's models folders (`lmstudio.py`), Ollama's store (`ollama.py`: its
manifests name each model's blob), the Hugging Face cache (`hf_cache.py`: snapshot links into
`blobs/`) and the folders the user adds (`folders.py`). Where each is comes from the
environment as those apps read it (`roots.py`), so tests point HOME, OLLAMA_MODELS and
HF_HOME at a temporary folder.

Every byte found is treated as hostile (`walking.py`, `collecting.py`): the scan is bounded in
entries, depth, files and time (`budget.py`), never follows a link out of the places it looks
in (save each store's own links, checked to stay inside that store), opens no FIFO or device,
and reads each file's header through `server.models.gguf.read_gguf` (bounded too). One file
found in several places (the same device and inode) is one entry listing every place.
"""
