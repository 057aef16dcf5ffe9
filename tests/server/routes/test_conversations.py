"""The conversations resource: create, list, get, rename, delete, search."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from server.app import default_backends
from server.settings import Settings, UpstreamSettings
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def test_create_get_and_list_newest_first(parley: Parley) -> None:
    first = parley.call("POST", "/api/conversations", json_body={"title": "Alpha"}).json()
    second = parley.call(
        "POST",
        "/api/conversations",
        json_body={"title": "Beta", "system": "Be terse.", "model": "scripted"},
    ).json()
    assert (second["title"], second["system"], second["model"]) == ("Beta", "Be terse.", "scripted")

    listed = parley.call("GET", "/api/conversations").json()["conversations"]
    assert [c["id"] for c in listed] == [second["id"], first["id"]]
    fetched = parley.conversation(first["id"])
    assert fetched["title"] == "Alpha" and fetched["messages"] == []


def test_limit_gives_the_most_recently_active_first(parley: Parley) -> None:
    made = [parley.call("POST", "/api/conversations", json_body={"title": f"C{i}"}).json()["id"]
            for i in range(5)]  # fmt: skip
    listed = parley.call("GET", "/api/conversations?limit=2").json()["conversations"]
    assert [c["id"] for c in listed] == [made[4], made[3]]
    whole = parley.call("GET", "/api/conversations?limit=10000").json()["conversations"]
    assert [c["id"] for c in whole] == made[::-1]


def test_sending_moves_a_conversation_to_the_top_and_titles_it(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=1)
    older = parley.new_conversation()
    newer = parley.new_conversation(title="Kept title")
    stream = parley.send(older, "How do magnets work?\nDetails please")
    stream.read_all()

    listed = parley.call("GET", "/api/conversations").json()["conversations"]
    assert [c["id"] for c in listed] == [older, newer]
    assert listed[0]["title"] == "How do magnets work?"
    # The turn's first chunk tells the title too (the window moves the chat to the top of
    # its list without asking for the list: issue 16).
    assert stream.first["conversation_title"] == "How do magnets work?"
    kept = parley.send(newer, "Another question")
    kept.read_all()
    assert kept.first["conversation_title"] == "Kept title"


def test_message_json_has_every_field(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=2)
    conversation_id = parley.new_conversation()
    parley.send(conversation_id).read_all()
    for message in parley.conversation(conversation_id)["messages"]:
        assert set(message) >= {
            "id", "role", "content", "status", "ended_by", "model",
            "created_at", "completed_at", "usage",
        }  # fmt: skip
    assistant = parley.conversation(conversation_id)["messages"][1]
    assert assistant["model"] == "scripted"
    assert assistant["usage"]["prompt_tokens"] == 7


def test_max_tokens_caps_the_reply_at_the_backend(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=2)
    conversation_id = parley.new_conversation()
    parley.send(conversation_id, max_tokens=3).read_all()
    assert upstream.records[-1].body["max_tokens"] == 3
    parley.send(conversation_id).read_all()
    assert "max_tokens" not in upstream.records[-1].body  # none asked: none sent
    for bad in (0, -1, 2.5, "100", True):
        reply = parley.call(
            "POST",
            f"/api/conversations/{conversation_id}/messages",
            json_body={"content": "hi", "max_tokens": bad},
        )
        assert reply.status == 400, bad
    assert len(parley.conversation(conversation_id)["messages"]) == 4  # nothing stored


def test_patch_sets_the_model_of_the_next_replies_without_moving_the_conversation(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    older = parley.new_conversation()
    newer = parley.new_conversation()
    path = f"/api/conversations/{older}"
    local = next(m["name"] for m in parley.status()["models"] if m["kind"] == "local")
    reply = parley.call("PATCH", path, json_body={"model": local})
    assert reply.status == 200 and reply.json()["model"] == local
    listed = parley.call("GET", "/api/conversations").json()["conversations"]
    assert [c["id"] for c in listed] == [newer, older]  # not an activity
    unknown = parley.call("PATCH", path, json_body={"model": "no-such-model"})
    assert unknown.status == 404 and unknown.json()["error"]["code"] == "model_not_found"
    empty = parley.call("PATCH", path, json_body={})
    assert empty.status == 400
    assert parley.conversation(older)["model"] == local


def test_the_desktops_own_backends_come_after_the_local_model(tmp_path: Path) -> None:
    later = UpstreamSettings("http://127.0.0.1:9/v1", "configured-in-settings")
    flagged = UpstreamSettings("http://127.0.0.1:9/v1", "from-a-flag")
    alone = Settings(data_dir=tmp_path, later_upstreams=(later,))
    assert [b.kind for b in default_backends(alone)] == ["local", "openai_compat"]
    with_flag = Settings(data_dir=tmp_path, upstreams=(flagged,), later_upstreams=(later,))
    names = [b.name for b in default_backends(with_flag)]
    assert names[0] == "from-a-flag" and names[-1] == "configured-in-settings"


def test_rename(parley: Parley) -> None:
    conversation_id = parley.new_conversation(title="old")
    reply = parley.call(
        "PATCH", f"/api/conversations/{conversation_id}", json_body={"title": "  new  "}
    )
    assert reply.status == 200 and reply.json()["title"] == "new"
    assert parley.conversation(conversation_id)["title"] == "new"


def test_delete_removes_rows_and_index_entries(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=1)
    conversation_id = parley.new_conversation()
    parley.send(conversation_id, "zebra crossing").read_all()
    assert parley.call("GET", "/api/conversations?q=zebra").json()["conversations"]

    assert parley.call("DELETE", f"/api/conversations/{conversation_id}").status == 204
    assert parley.call("GET", f"/api/conversations/{conversation_id}").status == 404
    assert parley.call("DELETE", f"/api/conversations/{conversation_id}").status == 404
    assert parley.call("GET", "/api/conversations?q=zebra").json()["conversations"] == []
    conn = sqlite3.connect(parley.settings.db_path)
    try:
        assert conn.execute("SELECT count(*) FROM messages").fetchone()[0] == 0
        assert (
            conn.execute(
                "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 'zebra'"
            ).fetchone()[0]
            == 0
        )
        conn.execute("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')")
    finally:
        conn.close()


def test_delete_while_streaming_stops_the_reply_first(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=100, stall_after=1)
    conversation_id = parley.new_conversation()
    stream = parley.send(conversation_id)
    stream.read_until(lambda text: text == "t0 ")
    assert parley.call("DELETE", f"/api/conversations/{conversation_id}").status == 204
    stream.read_all()
    upstream.wait_hung_up()
    parley.wait_idle()


def test_search_returns_matches_with_snippets(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=1)
    cooking = parley.new_conversation(title="Dinner")
    parley.send(cooking, "How long should I boil potatoes for a salad?").read_all()
    other = parley.new_conversation(title="Cars")
    parley.send(other, "Explain a turbocharger").read_all()

    found = parley.call("GET", "/api/conversations?q=potato").json()["conversations"]
    assert [c["id"] for c in found] == [cooking]
    assert "«potatoes»" in found[0]["match"]["snippet"]
    assert found[0]["match"]["message_id"]

    by_title = parley.call("GET", "/api/conversations?q=car").json()["conversations"]
    assert [c["id"] for c in by_title] == [other]


def test_search_treats_query_syntax_as_plain_text(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=1)
    conversation_id = parley.new_conversation(title="100% sure_thing")
    parley.send(conversation_id, 'say "hello" NEAR world').read_all()
    for query in ['"', "NEAR(", "hello OR", "*", "a AND", "%", "_", "100%", '" OR 1=1 --', "(("]:
        reply = parley.call("GET", "/api/conversations?q=" + _quote(query))
        assert reply.status == 200, (query, reply.body)
    assert parley.call("GET", "/api/conversations?q=" + _quote("100%")).json()["conversations"]
    found = parley.call("GET", "/api/conversations?q=" + _quote('"hello"')).json()
    assert [c["id"] for c in found["conversations"]] == [conversation_id]
    # LIKE wildcards are literal: only the title that really has them matches.
    parley.new_conversation(title="plain words")
    for wildcard in ("%", "_"):
        found = parley.call("GET", "/api/conversations?q=" + _quote(wildcard)).json()
        assert [c["id"] for c in found["conversations"]] == [conversation_id]


def _quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")
