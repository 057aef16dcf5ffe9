"""Names that come from a client or from the hub, checked before they touch a path or a URL.

A repository is `owner/name`; a file is a bare GGUF file name at the repository's root (no
folder, no `..`, nothing hidden): it becomes part of a path under the models folder."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from server.errors import BadRequestError

_PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")
_FILE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+ ()\[\]-]{0,199}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_SPLIT = re.compile(r"-\d{5}-of-\d{5}\.gguf$", re.IGNORECASE)
# llama.cpp's quantization names as they appear in file names: Q4_K_M, IQ2_XXS, Q8_0, TQ1_0,
# Q4_0_4_4, F16, BF16, F32, MXFP4 (the extension stripped first).
_QUANT = re.compile(
    r"(?<![A-Za-z0-9])(I?Q[1-8](?:_[0-9A-Z]{1,3}){0,3}|TQ[12]_0|MXFP4|BF16|FP16|F16|F32)"
    r"(?![A-Za-z0-9])",
    re.IGNORECASE,
)


def is_repo_part(value: object) -> bool:
    return isinstance(value, str) and _PART.fullmatch(value) is not None and ".." not in value


def repo_id(owner: object, name: object) -> str:
    """`owner/name`, or BadRequestError (`invalid_repo`)."""
    if not (is_repo_part(owner) and is_repo_part(name)):
        raise BadRequestError(
            "a repository is named owner/name (letters, digits, '.', '_', '-')",
            code="invalid_repo",
        )
    return f"{owner}/{name}"


def split_repo_id(value: object) -> tuple[str, str]:
    """(owner, name) of `owner/name`, or BadRequestError (`invalid_repo`)."""
    parts = value.split("/") if isinstance(value, str) else []
    if len(parts) != 2:
        raise BadRequestError("a repository is named owner/name", code="invalid_repo")
    repo_id(parts[0], parts[1])
    return parts[0], parts[1]


def is_gguf_name(value: object) -> bool:
    """A file name safe to store under the models folder: a `.gguf` at the repository's
    root, no separators, no `..`, not hidden."""
    return (
        isinstance(value, str)
        and _FILE.fullmatch(value) is not None
        and ".." not in value
        and value.lower().endswith(".gguf")
    )


def gguf_name(value: object) -> str:
    if isinstance(value, str) and is_gguf_name(value):
        return value
    raise BadRequestError(
        "a file is a .gguf at the repository's root (no folders, no '..')",
        code="invalid_file",
    )


def is_split(file: str) -> bool:
    """One part of a GGUF split in several files (`-00001-of-00003.gguf`)."""
    return _SPLIT.search(file) is not None


def quantization(file: str) -> str | None:
    """The quantization named in a GGUF file name (`Q4_K_M`), upper-case, or None."""
    found = _QUANT.findall(file[: -len(".gguf")] if file.lower().endswith(".gguf") else file)
    return found[-1].upper() if found else None


def model_names(stem: str, owner: str) -> Iterator[str]:
    """The names a downloaded file may take as a model, first choice first, without end:
    its stem, `<stem>-<owner>` (the same file name from another owner), then
    `<stem>-<owner>-2`, `-3`, ... (the same file name in several repositories of one owner)."""
    yield stem
    yield f"{stem}-{owner}"
    for number in itertools.count(2):
        yield f"{stem}-{owner}-{number}"


def sha256_of(value: object) -> str | None:
    """A sha256 as the hub writes it (64 lower-case hex digits), or None."""
    if isinstance(value, str) and _SHA256.fullmatch(value.lower()):
        return value.lower()
    return None


def commit_of(value: object) -> str | None:
    return value if isinstance(value, str) and _COMMIT.fullmatch(value) else None
