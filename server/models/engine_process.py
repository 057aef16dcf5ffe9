"""The llama.cpp engine's own process: `python -m server.models.engine_process CONFIG_JSON`.

xllamacpp (prebuilt llama.cpp wheels; nothing compiles) runs llama.cpp's server engine:
`n_parallel` slots with continuous batching and a prompt cache per slot (plus one in RAM).
It runs in a process of its own, not in Parley's, because loading a model holds Python's
GIL for the whole load (0.4 s for the bundled model, seconds for a large one: the window
would freeze), and so that a crash in native code never takes the app down.

It serves llama.cpp's HTTP API on loopback at a random port, behind a random API key made
here. Its first line on stdout is `{"url": ..., "key": ...}` once the model is loaded, or
`{"error": ...}`; nothing else goes to stdout. llama.cpp writes its log to stderr (the
parent logs it). It exits when its stdin closes: the parent stopped it, or died.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from typing import Any


def _params(config: dict[str, Any], key: str) -> Any:
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = config["model"]
    # Its /v1/models answers without the key: it names the model, never the file's path.
    params.model_alias = {config["alias"]}
    params.n_parallel = config["n_parallel"]
    # Each slot has its own n_ctx / n_parallel of the total (no unified KV cache).
    params.n_ctx = config["n_ctx"] * config["n_parallel"]
    # A prefill can be stopped only between batches: a small batch bounds how long a
    # stopped prefill keeps the engine (docs/benchmarks.md measures the trade-off).
    params.n_batch = params.n_ubatch = config["n_batch"]
    params.cpuparams.n_threads = config["n_threads"]
    params.cpuparams_batch.n_threads = config["n_threads_batch"]
    params.n_gpu_layers = config["n_gpu_layers"]
    params.verbosity = 2  # warnings and errors only
    params.api_keys = [key]
    params.n_threads_http = config["n_parallel"] + 2  # the streams, and a request beside them
    params.endpoint_metrics = True
    return params


def main() -> None:
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # anything else written to stdout goes to the log instead
    config = json.loads(sys.argv[1])
    key = secrets.token_urlsafe(24)
    try:
        import xllamacpp

        server = xllamacpp.Server(_params(config, key))
        # One request through the engine's task queue before anything else: deleting a
        # Server whose loop has not yet run a task was seen to hang for ever.
        server.handle_metrics()
    except Exception as exc:  # the reason is on stderr; this is the engine's generic one
        protocol.write(json.dumps({"error": str(exc)}) + "\n")
        protocol.flush()
        os._exit(1)
    protocol.write(json.dumps({"url": server.listening_address, "key": key}) + "\n")
    protocol.flush()
    sys.stdin.buffer.read()  # until the parent closes it (or dies)
    # At once, without destructors: a generation still running would abort the process.
    os._exit(0)


if __name__ == "__main__":
    main()
