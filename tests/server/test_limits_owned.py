"""Every limit of the server is in server/limits.py: a module-level number whose name says it
bounds something (a size, a deadline, a count of tries) is not written anywhere else, unless
the list below says why it is not a limit or why it stays where it is."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server"

# Words of a name that say the number bounds something.
LIMIT_WORDS = frozenset(
    {
        "MAX",
        "MIN",
        "MOST",
        "LIMIT",
        "TIMEOUT",
        "DEADLINE",
        "WAIT",
        "GRACE",
        "TTL",
        "RETRY",
        "RETRIES",
        "ATTEMPTS",
        "BUDGET",
        "BYTES",
        "KIB",
        "CHARS",
        "S",
        "MS",
        "SECONDS",
    }
)


# (module, name): why the number stays in its module.
ALLOWED = {
    # Not limits: a format's or a protocol's own value, an estimate, a tuning of an algorithm.
    ("server/arguments.py", "MIN_TOKEN_CHARS"): "a floor on the API token's strength, not a bound",
    ("server/attachments/kinds.py", "SNIFF_BYTES"): "how much of a file the binary sniff reads",
    ("server/http/protocol.py", "SEND_BUFFER_BYTES"): "the socket's buffer: a kernel tuning",
    ("server/library/chunking.py", "TARGET_CHARS"): "the chunker's shape: the index's passages",
    ("server/library/chunking.py", "MAX_CHARS"): "the chunker's shape: the index's passages",
    ("server/library/chunking.py", "OVERLAP_CHARS"): "the chunker's shape: the index's passages",
    ("server/models/fit.py", "CPU_BYTES_PER_S"): "an estimate of a laptop's speed, not a bound",
    ("server/models/fit.py", "SLOW_TOKENS_PER_S"): "the verdict's threshold, not a bound",
    ("server/models/fit.py", "STATUS_READ_BYTES"): "the kernel's own status file, not input",
    ("server/models/gguf.py", "MAX_KEY_BYTES"): "the GGUF specification's own limit on a key",
    ("server/models/relay_duty.py", "BURST_S"): "the duty cycle's shape (its pause is a Limit)",
    ("server/models/relay_duty.py", "WAITED_S"): "what counts as waited for: a threshold",
    ("server/routes/memory.py", "VERSION_CHARS"): "a SHA-256 in hex: the format's own length",
    ("server/transfer/jobs.py", "MIN_BATCH_ROWS"): "the import's batch tuning (bounded in time)",
    ("server/transfer/jobs.py", "MAX_BATCH_ROWS"): "the import's batch tuning (bounded in time)",
    ("server/transfer/spool.py", "FLUSH_BYTES"): "how much is written at a time: a tuning",
    ("server/transfer/staging.py", "IMPORT_CACHE_KIB"): "SQLite's page cache: a tuning",
    (
        "server/agent/names.py",
        "MAX_FUNCTION_CHARS",
    ): "the OpenAI API's own bound on a function name",
    (
        "server/agent/transcript.py",
        "ATTEMPTS",
    ): "how often a round is cut and counted again: a tuning",
    (
        "server/types/__init__.py",
        "MAX_AGENT_DEPTH",
    ): "the stored wire's nesting, read by the desktop too (server.types imports no limits)",
    ("server/agent/history.py", "CHARS_PER_TOKEN"): "an estimate's ratio, not a bound",
    # How much of a text a note, a card or a title shows: a presentation, not a bound.
    ("server/agent/history.py", "ARGUMENT_CHARS"): "how much of an argument a history note shows",
    ("server/agent/history.py", "ARGUMENTS_CHARS"): "how much of the arguments a note shows",
    ("server/agent/provenance.py", "EXCERPT_CHARS"): "how much of a source the card shows",
    ("server/agent/provenance.py", "ARGUMENT_CHARS"): "how much of an argument the card shows",
    ("server/storage/turn_rows.py", "AUTO_TITLE_CHARS"): "a new chat's title from its question",
}


def is_number(node: ast.expr) -> bool:
    """A number written in place (`4096`, `64 * 1024`, `1 << 20`, `-1`), not a flag."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return is_number(node.left) and is_number(node.right)
    if isinstance(node, ast.UnaryOp):
        return is_number(node.operand)
    return False


def numbers(source: str) -> list[str]:
    """The names a module gives numbers of its own at its top level."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            pairs = []
            for target in node.targets:
                if isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    pairs += list(zip(target.elts, node.value.elts, strict=False))
                else:
                    pairs.append((target, node.value))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            pairs = [(node.target, node.value)]
        else:
            continue
        found += [t.id for t, v in pairs if isinstance(t, ast.Name) and is_number(v)]
    return found


def says_limit(name: str) -> bool:
    return bool(LIMIT_WORDS & set(name.upper().split("_")))


def limits_outside() -> set[tuple[str, str]]:
    """(module, name) of every number named like a limit in server/, outside limits.py."""
    return {
        (str(path.relative_to(ROOT)), name)
        for path in sorted(SERVER.rglob("*.py"))
        if path != SERVER / "limits.py"
        for name in numbers(path.read_text(encoding="utf-8"))
        if says_limit(name)
    }


def test_every_limit_is_in_limits() -> None:
    stray = sorted(limits_outside() - ALLOWED.keys())
    assert not stray, f"move these into their part of server/limits.py: {stray}"


def test_the_allowlist_names_only_numbers_still_there() -> None:
    gone = sorted(ALLOWED.keys() - limits_outside())
    assert not gone, f"no longer in their module, so take them off ALLOWED: {gone}"


def test_the_check_sees_a_limit_and_not_a_reference_to_limits() -> None:
    source = (
        "MAX_LINE_BYTES = 16_000_000\n"
        "READ_BLOCK = 1 << 20\n"
        "WAIT_S: float = 10.0\n"
        "LOW, MAX_ROWS = 1, 20\n"
        "EXIT_POLL_S = ToolLimits.exit_poll\n"
        "USE_IT = True\n"
    )
    assert numbers(source) == ["MAX_LINE_BYTES", "READ_BLOCK", "WAIT_S", "LOW", "MAX_ROWS"]
    named = [name for name in numbers(source) if says_limit(name)]
    assert named == ["MAX_LINE_BYTES", "WAIT_S", "MAX_ROWS"]
