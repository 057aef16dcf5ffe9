"""Finding chats by what was said in them (`GET /api/conversations?q=`), ranked, with a
snippet, in a few milliseconds however large the history.

Ranking every message that contains a common word costs time in proportion to the history
(measured: 160 ms p95 for "the" over 100,000 messages, 860 ms for the prefix "w0"). So the
ranking looks at the newest `SearchLimits.candidates` matching messages only: FTS5 walks its
index newest first and stops there, bm25 ranks those, and a snippet is cut for the best message
of each chat shown. A rarer word has fewer matches than that, and all of them are ranked. Only
the last word is a prefix (a prefix FTS5 has no table for merges the entries of every word it
starts, in full: 16 ms for three 6-letter prefixes against 5 ms for the words); prefixes of 2
and 3 characters are one lookup in the index's prefix tables (migration 0006); a one-letter
word matches only itself. Functions run on the database thread (server/storage/db.py).
"""

from __future__ import annotations

import collections
import re
import sqlite3
import unicodedata

from server.limits import SearchLimits
from server.storage.projects import InProject
from server.storage.rows import conversation_json
from server.types import ConversationJSON

SNIPPET_WORDS = 12


def fts_query(text: str, *, any_word: bool = False) -> str | None:
    """Turn what a person typed into a safe FTS5 query: every word required, the last one
    as a prefix ("prefix-last", as search-as-you-type does: it may be half typed; a space
    after it ends it). `any_word`: any of the words, each as a prefix, best matches first by
    rank (a model's search question). A single letter is never a prefix (it would match
    almost everything).

    FTS5 operators and quotes in the input are treated as plain text, never as syntax.
    """
    words = re.findall(r"\w+", text)
    if not words:
        return None
    typing = not any_word and not text[-1:].isspace()

    def term(index: int, word: str) -> str:
        prefix = len(word) > 1 and (any_word or (typing and index == len(words) - 1))
        return '"' + word.replace('"', '""') + ('"*' if prefix else '"')

    joiner = " OR " if any_word else " "
    return joiner.join(term(index, word) for index, word in enumerate(words))


def search(
    conn: sqlite3.Connection, text: str, within: InProject | None = None
) -> list[ConversationJSON]:
    """Chats whose messages (then titles) match `text`; `within`: of one project only (or
    outside every project)."""
    found: dict[str, ConversationJSON] = {}
    query = fts_query(text)
    if query is not None:
        best = _best_messages(conn, query, within)
        rows = _conversations_of(conn, list(best.values()))
        for cid, seq in best.items():
            row = rows.get(seq)
            if row is None:  # deleted meanwhile
                continue
            conv = conversation_json(row)
            conv["match"] = {
                "message_id": row["message_id"],
                "snippet": snippet(row["message_content"], text),
            }
            found[cid] = conv
    needle = text.strip().casefold()
    if needle:
        # Titles are few and short: a plain substring test (no LIKE, so % and _ are literal).
        condition, values = within.sql() if within is not None else ("1", ())
        for row in conn.execute(
            f"SELECT * FROM conversations WHERE import_id IS NULL AND {condition} "
            "ORDER BY updated_at DESC",
            values,
        ):
            if row["id"] not in found and needle in row["title"].casefold():
                conv = conversation_json(row)
                conv["match"] = {"message_id": None, "snippet": row["title"]}
                found[row["id"]] = conv
    return list(found.values())


def _best_messages(
    conn: sqlite3.Connection, query: str, within: InProject | None
) -> dict[str, int]:
    """Each chat's best matching message (seq), best chats first, among the candidates (of
    the chats `within` one project, when given: the newest matches of those chats)."""
    best: dict[str, int] = {}
    if within is None:
        hits = conn.execute(
            "SELECT m.conversation_id, h.rowid FROM ("
            " SELECT rowid, bm25(messages_fts) AS score FROM messages_fts"
            " WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ?"
            ") h JOIN messages m ON m.seq = h.rowid ORDER BY h.score, h.rowid DESC",
            (query, SearchLimits.candidates),
        )
    else:
        condition, values = within.sql("c")
        hits = conn.execute(
            "SELECT h.conversation_id, h.rowid FROM ("
            " SELECT m.conversation_id, f.rowid, bm25(f.messages_fts) AS score"
            " FROM messages_fts f JOIN messages m ON m.seq = f.rowid"
            " JOIN conversations c ON c.id = m.conversation_id"
            f" WHERE f.messages_fts MATCH ? AND {condition} ORDER BY f.rowid DESC LIMIT ?"
            ") h ORDER BY h.score, h.rowid DESC",
            (query, *values, SearchLimits.candidates),
        )
    for cid, seq in hits:
        if cid not in best:
            best[cid] = seq
            if len(best) == SearchLimits.max_chats:
                break
    return best


def snippet(content: str, text: str) -> str:
    """Up to `SNIPPET_WORDS` words of `content` around the first word the search matched, the
    matched words marked «so», "…" where text was left out. Words match as the index matches
    them: as prefixes (a single letter: whole), ignoring case and accents. Only the start of
    a very long message is looked through (`SearchLimits.scan_chars`)."""
    wanted = [_plain(word) for word in re.findall(r"\w+", text)]

    def hit(word: str) -> bool:
        token = _plain(word)
        return any(token == w or (len(w) > 1 and token.startswith(w)) for w in wanted)

    # Words are looked at one by one from a little before the first match (found at once by
    # a pattern when the text is plain ASCII, the common case; else from the start).
    begin = _near_first_match(content, wanted)
    before: collections.deque[re.Match[str]] = collections.deque(maxlen=SNIPPET_WORDS // 4)
    window: list[re.Match[str]] = []
    skipped = begin > 0
    for match in _WORD.finditer(content, begin, SearchLimits.scan_chars):
        if window or hit(match.group()):
            window.append(match)
            if len(window) + len(before) == SNIPPET_WORDS:
                break
        else:
            skipped = skipped or len(before) == before.maxlen
            before.append(match)
    if not window:  # no word matched here (a longer message): its start
        return content[:200].strip()
    words = [*before, *window]
    pieces = ["…" if skipped else content[: words[0].start()]]
    at = words[0].start()
    for match in words:
        pieces.append(content[at : match.start()])
        pieces.append(f"«{match.group()}»" if hit(match.group()) else match.group())
        at = match.end()
    pieces.append("…" if _WORD.search(content, at) is not None else content[at:])
    return "".join(pieces).strip()


_WORD = re.compile(r"\w+")


def _near_first_match(content: str, wanted: list[str]) -> int:
    """Where to start looking at words: at a word boundary a few words before the first match
    when a pattern can find it (ASCII text and words), else 0."""
    if not content.isascii() or not all(w.isascii() for w in wanted):
        return 0
    alternatives = [re.escape(w) + (r"\w*" if len(w) > 1 else r"\b") for w in wanted]
    found = re.search(
        r"(?<!\w)(?:" + "|".join(alternatives) + ")",
        content[: SearchLimits.scan_chars],
        re.IGNORECASE,
    )
    if found is None:
        return 0
    start = found.start()
    for _ in range(SNIPPET_WORDS // 4 + 1):  # back over a few words, to a space
        start = content.rfind(" ", 0, max(0, start - 1)) + 1
        if start <= 0:
            return 0
    return start


def _plain(word: str) -> str:
    """A word as the index keeps it: without accents, case-folded."""
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _conversations_of(conn: sqlite3.Connection, seqs: list[int]) -> dict[int, sqlite3.Row]:
    if not seqs:
        return {}
    marks = ",".join("?" * len(seqs))
    rows = conn.execute(
        "SELECT c.*, m.id AS message_id, m.seq AS message_seq, m.content AS message_content "
        "FROM messages m "
        f"JOIN conversations c ON c.id = m.conversation_id WHERE m.seq IN ({marks}) "
        "AND c.import_id IS NULL",
        seqs,
    )
    return {row["message_seq"]: row for row in rows}
