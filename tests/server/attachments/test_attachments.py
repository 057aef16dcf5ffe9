"""Files attached to a message (issue 43, item 1), end to end through a real Parley to the
scripted upstream, which records the parts it was given: a text file's text and a PDF's go
into the message with the file's name; an image goes as an OpenAI `image_url` part; the local
model, which has no projector, refuses an image before anything is saved; attachments are
kept with their message (also on Stop), shown on reopening, kept by an edit."""

from __future__ import annotations

import base64
import copy
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from server.limits import AttachmentLimits, Limits
from server.models.context import IMAGE_TOKENS
from tests.server.transfer.test_round_trip import import_document
from tests.support.client import Reply, SSEStream
from tests.support.documents import make_pdf
from tests.support.image_files import JPEG, PNG, png
from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream


def upload(parley: Parley, name: str, data: bytes) -> Reply:
    return parley.call(
        "POST",
        f"/api/attachments?name={quote(name)}",
        body=data,
        headers={"Content-Type": "application/octet-stream"},
    )


def uploaded(parley: Parley, name: str, data: bytes) -> dict[str, Any]:
    reply = upload(parley, name, data)
    assert reply.status == 201, reply.body
    found: dict[str, Any] = reply.json()
    return found


def last_user_message(upstream: ScriptedUpstream) -> dict[str, Any]:
    users = [m for m in upstream.records[-1].body["messages"] if m["role"] == "user"]
    found: dict[str, Any] = users[-1]
    return found


def test_a_text_file_goes_into_the_message_with_its_name(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=2)
    notes = uploaded(parley, "notes.md", b"# Quokkas\n\nThey smile.\n")
    assert notes["kind"] == "text" and notes["chars"] == 23 and notes["note"] is None
    cid = parley.new_conversation()
    stream = parley.send(cid, "What do they do?", attachments=[notes["id"]])
    assert stream.status == 200
    stream.read_all()
    sent = last_user_message(upstream)["content"]
    assert sent == 'What do they do?\n\n<file name="notes.md">\n# Quokkas\n\nThey smile.\n\n</file>'
    [question, _] = parley.conversation(cid)["messages"]
    assert question["content"] == "What do they do?"  # the user's words, as written
    assert question["attachments"] == [notes]  # what the window shows (no text)


def test_an_image_goes_to_the_upstream_as_an_image_url_part(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=2)
    image = uploaded(parley, "cat.png", PNG)
    assert (image["kind"], image["mime"], image["bytes"]) == ("image", "image/png", len(PNG))
    cid = parley.new_conversation()
    parley.send(cid, "", attachments=[image["id"]]).read_all()  # an image alone is a question
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    assert last_user_message(upstream)["content"] == [
        {"type": "image_url", "image_url": {"url": url}}
    ]
    assert parley.conversation(cid)["title"] == "cat.png"
    got = parley.call("GET", f"/api/attachments/{image['id']}")
    assert got.status == 200 and got.body == PNG
    assert got.headers["content-type"] == "image/png"

    parley.send(cid, "And now?").read_all()  # a later turn still shows the model the image
    first = next(m for m in upstream.records[-1].body["messages"] if m["role"] == "user")
    assert first["content"] == [{"type": "image_url", "image_url": {"url": url}}]


def test_a_pdf_s_text_is_extracted(parley: Parley, upstream: ScriptedUpstream, tmp_path: Path):
    upstream.script = Script(tokens=1)
    pdf = make_pdf(tmp_path / "report.pdf", ["Quarterly quokka census", "Page two"]).read_bytes()
    report = uploaded(parley, "report.pdf", pdf)
    assert report["kind"] == "text" and report["mime"] == "application/pdf"
    cid = parley.new_conversation()
    parley.send(cid, "Summarise", attachments=[report["id"]]).read_all()
    sent = last_user_message(upstream)["content"]
    assert '<file name="report.pdf">' in sent
    assert "Quarterly quokka census" in sent and "Page two" in sent

    empty = make_pdf(tmp_path / "scan.pdf", [""]).read_bytes()
    refused = upload(parley, "scan.pdf", empty)
    assert refused.status == 400 and refused.json()["error"]["code"] == "attachment_unreadable"
    assert "no text" in refused.json()["error"]["message"]


def test_files_parley_cannot_attach_are_refused_with_a_reason(parley: Parley) -> None:
    refused = upload(parley, "song.mp3", b"ID3\x04\x00\x00\x00\x00\x00")
    assert refused.status == 400
    error = refused.json()["error"]
    assert error["code"] == "attachment_unsupported" and "'song.mp3'" in error["message"]
    latin = upload(parley, "old.txt", "café".encode("latin-1"))
    assert latin.status == 400 and "not UTF-8" in latin.json()["error"]["message"]
    assert upload(parley, "empty.txt", b"").status == 400
    nameless = parley.call("POST", "/api/attachments", body=b"x")
    assert nameless.status == 400
    assert uploaded(parley, "../../etc/passwd", b"root")["name"] == "passwd"


def test_big_files_are_bounded(data_dir: Path, upstream: ScriptedUpstream) -> None:
    limits = Limits(
        attachments=AttachmentLimits(max_file_bytes=4000, max_image_bytes=100, max_chars=1000)
    )
    parley = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        too_big = upload(parley, "big.txt", b"x" * 4001)
        assert too_big.status == 413
        assert too_big.json()["error"]["code"] == "attachment_too_large"
        assert upload(parley, "big.png", png(filler=100)).status == 413
        long = uploaded(parley, "long.txt", b"y" * 3000)
        assert long["chars"] == 1000
        assert long["note"] == "only the first 1,000 of 3,000 characters are given to the model"
        upstream.script = Script(tokens=1)
        cid = parley.new_conversation()
        parley.send(cid, "read", attachments=[long["id"]]).read_all()
        sent = last_user_message(upstream)["content"]
        assert f'note="{long["note"]}"' in sent and "y" * 1000 + "\n</file>" in sent
        assert "y" * 1001 not in sent
    finally:
        parley.stop()


def test_the_newest_images_fill_the_request_s_budget_and_older_ones_are_named(
    data_dir: Path, upstream: ScriptedUpstream
) -> None:
    limits = Limits(attachments=AttachmentLimits(max_request_image_bytes=len(PNG) + 10))
    parley = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        upstream.script = Script(tokens=1)
        cid = parley.new_conversation()
        old = uploaded(parley, "old.jpg", JPEG)
        parley.send(cid, "first", attachments=[old["id"]]).read_all()
        new = uploaded(parley, "new.png", PNG)
        parley.send(cid, "second", attachments=[new["id"]]).read_all()
        first, second = [m for m in upstream.records[-1].body["messages"] if m["role"] == "user"]
        assert first["content"].startswith('first\n\n[image "old.jpg" not shown: ')
        assert second["content"][1]["type"] == "image_url"
    finally:
        parley.stop()


def test_an_unknown_attachment_is_refused_and_nothing_is_saved(parley: Parley) -> None:
    cid = parley.new_conversation()
    stream = parley.send(cid, "hello", attachments=["nope"])
    assert stream.status == 404
    assert parley.conversation(cid)["messages"] == []
    bad = parley.send(cid, "hello", attachments="nope")
    assert bad.status == 400


def test_an_attachment_belongs_to_one_chat(parley: Parley, upstream: ScriptedUpstream) -> None:
    upstream.script = Script(tokens=1)
    notes = uploaded(parley, "notes.txt", b"mine")
    first, second = parley.new_conversation(), parley.new_conversation()
    parley.send(first, "a", attachments=[notes["id"]]).read_all()
    parley.send(first, "b", attachments=[notes["id"]]).read_all()  # again in its own chat
    assert parley.send(second, "c", attachments=[notes["id"]]).status == 404


@pytest.mark.slow
def test_the_local_model_refuses_an_image_before_anything_is_saved(data_dir: Path) -> None:
    parley = Parley(data_dir).start()  # the embedded default: the bundled model
    try:
        image = uploaded(parley, "cat.png", PNG)
        cid = parley.new_conversation()
        refused = parley.call(
            "POST",
            f"/api/conversations/{cid}/messages",
            json_body={"content": "What is this?", "attachments": [image["id"]]},
        )
        assert refused.status == 400
        error = refused.json()["error"]
        assert error["code"] == "images_not_supported"
        assert "cannot see images" in error["message"] and "'cat.png'" in error["message"]
        assert parley.conversation(cid)["messages"] == []
        # A text file is fine for it, but one that cannot fit its context is refused before
        # anything is saved too (not an error reply after the question is kept).
        big = uploaded(parley, "notes.txt", b"filler words here. " * 2000)
        too_long = parley.call(
            "POST",
            f"/api/conversations/{cid}/messages",
            json_body={"content": "Summarise", "attachments": [big["id"]]},
            timeout=120,
        )
        assert too_long.status == 400, too_long.body
        assert too_long.json()["error"]["code"] == "context_length_exceeded"
        assert parley.conversation(cid)["messages"] == []
    finally:
        parley.stop()


def test_attachments_are_kept_on_stop_and_by_an_edit(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=50, rate=20)
    notes = uploaded(parley, "notes.txt", b"the file")
    cid = parley.new_conversation()
    stream = parley.send(cid, "read it", attachments=[notes["id"]])
    stream.read_until(lambda text: len(text) > 0)
    stream.hang_up()  # Stop: the client hangs up
    question, reply = parley.conversation(cid)["messages"]
    parley.wait_settled(cid, reply["id"])
    assert question["attachments"] == [notes]
    upstream.script = Script(tokens=1)
    path = f"/api/conversations/{cid}/messages/{question['id']}/edit"
    SSEStream(parley.port, path, {"content": "read it again"}, parley.token).read_all()
    versions = [m for m in parley.conversation(cid)["messages"] if m["role"] == "user"]
    assert versions[-1]["content"] == "read it again" and versions[-1]["attachments"] == [notes]
    assert '<file name="notes.txt">\nthe file\n</file>' in last_user_message(upstream)["content"]


def test_an_upload_never_sent_is_deleted_after_its_day(data_dir: Path, upstream: ScriptedUpstream):
    parley = Parley(data_dir, upstream.base_url).start()
    try:
        kept = uploaded(parley, "kept.txt", b"sent")
        cid = parley.new_conversation()
        upstream.script = Script(tokens=1)
        parley.send(cid, "x", attachments=[kept["id"]]).read_all()
        unsent = uploaded(parley, "unsent.txt", b"never sent")
    finally:
        parley.stop()
    folder = data_dir / "attachments"
    assert {p.name for p in folder.iterdir()} == {kept["id"], unsent["id"]}
    (folder / "stray").write_bytes(b"a crash between file and row")
    limits = Limits(attachments=AttachmentLimits(unsent_keep=0.0))
    time.sleep(0.01)  # the clock moves past the upload's time (a fact of the clock, not a wait)
    parley = Parley(data_dir, upstream.base_url, limits=limits).start()
    try:
        assert {p.name for p in folder.iterdir()} == {kept["id"]}
        assert parley.call("GET", f"/api/attachments/{unsent['id']}").status == 404
        assert parley.call("GET", f"/api/attachments/{kept['id']}").body == b"sent"
    finally:
        parley.stop()


@pytest.mark.parametrize("name", ["a\x00b.txt", "x" * 5000])
def test_a_hostile_name_is_refused_or_cleaned(parley: Parley, name: str) -> None:
    reply = upload(parley, name, b"text")
    assert reply.status in (201, 400)
    if reply.status == 201:
        assert len(reply.json()["name"]) <= 200


def test_attachments_round_trip_through_export_and_import(
    parley: Parley, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    upstream.script = Script(tokens=1)
    notes, image = uploaded(parley, "notes.txt", b"the notes"), uploaded(parley, "a.png", PNG)
    cid = parley.new_conversation()
    parley.send(cid, "look", attachments=[notes["id"], image["id"]]).read_all()
    exported = parley.call("GET", f"/api/conversations/{cid}/export?format=json").json()
    [question] = [m for m in exported["conversations"][0]["messages"] if m["role"] == "user"]
    assert question["attachments"][0]["text"] == "the notes"
    assert base64.b64decode(question["attachments"][1]["data"]) == PNG
    markdown = parley.call("GET", f"/api/conversations/{cid}/export?format=md").body
    assert b"*Attached: notes.txt*" in markdown and b"*Attached: a.png*" in markdown

    elsewhere = Parley(tmp_path / "other", upstream.base_url).start()
    try:
        assert import_document(elsewhere, exported).status == 201
        again = elsewhere.call("GET", f"/api/conversations/{cid}/export?format=json").json()
        # Ids and all, but for the files': an import's are always new (never another chat's).
        assert files_renamed(again) == files_renamed(exported)
        [kept] = [m for m in again["conversations"][0]["messages"] if m["role"] == "user"]
        assert kept["attachments"][1]["id"] != image["id"]
        assert elsewhere.call("GET", f"/api/attachments/{image['id']}").status == 404
        assert elsewhere.call("GET", f"/api/attachments/{kept['attachments'][1]['id']}").body == PNG
        elsewhere.send(cid, "and again").read_all()  # the model is given them there too
        first = next(m for m in upstream.records[-1].body["messages"] if m["role"] == "user")
        assert '<file name="notes.txt">\nthe notes\n</file>' in first["content"][0]["text"]
        assert first["content"][1]["type"] == "image_url"
    finally:
        elsewhere.stop()

    # Into the same Parley: a copy, whose files are its own.
    copy = import_document(parley, exported, duplicates="copy").json()["conversations"][0]
    [copied] = [m for m in parley.conversation(copy)["messages"] if m["role"] == "user"]
    assert [a["name"] for a in copied["attachments"]] == ["notes.txt", "a.png"]
    assert copied["attachments"][1]["id"] != image["id"]
    assert parley.call("GET", f"/api/attachments/{copied['attachments'][1]['id']}").body == PNG


def files_renamed(document: dict[str, Any]) -> list[Any]:
    """An export's conversations with their files' ids left out."""
    found: list[Any] = copy.deepcopy(document["conversations"])
    for message in (m for c in found for m in c["messages"]):
        for attachment in message.get("attachments", []):
            del attachment["id"]
    return found


def test_an_import_s_hostile_attachments_are_refused(parley: Parley) -> None:
    def document(attachment: dict[str, Any]) -> dict[str, Any]:
        message = {
            "id": "m1", "parent_id": None, "role": "user", "content": "x",
            "created_at": 1.0, "attachments": [attachment],
        }  # fmt: skip
        return {"format": "parley", "version": 1, "conversations": [
            {"id": "c1", "title": "t", "created_at": 1.0, "updated_at": 1.0,
             "leaf_id": "m1", "messages": [message]},
        ]}  # fmt: skip

    not_an_image = {"id": "a1", "name": "x.png", "kind": "image", "mime": "image/png",
                    "data": base64.b64encode(b"<script>").decode()}  # fmt: skip
    reply = import_document(parley, document(not_an_image))
    assert reply.status == 400 and "is not a PNG" in reply.json()["error"]["message"]
    bad_base64 = {**not_an_image, "data": "%%%"}
    assert import_document(parley, document(bad_base64)).status == 400
    climbing = {"id": "../../x", "name": "../../../etc/x.txt", "kind": "text",
                "mime": "text/plain", "text": "t", "data": "dA=="}  # fmt: skip
    assert import_document(parley, document(climbing)).status == 201
    [imported] = [c for c in parley.call("GET", "/api/conversations").json()["conversations"]]
    [message] = parley.conversation(imported["id"])["messages"]
    [attachment] = message["attachments"]
    assert attachment["name"] == "x.txt" and attachment["id"] != "../../x"
    folder = parley.settings.data_dir / "attachments"
    assert [p.name for p in folder.iterdir()] == [attachment["id"]]


def test_the_context_meter_counts_an_image_for_a_model_that_takes_images(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=1)
    with_image, without = parley.new_conversation(), parley.new_conversation()
    image = uploaded(parley, "a.png", PNG)
    parley.send(with_image, "look", attachments=[image["id"]]).read_all()
    parley.send(without, "look").read_all()
    meters = [
        parley.call("GET", f"/api/conversations/{cid}/context").json()
        for cid in (with_image, without)
    ]
    assert meters[0]["history"] - meters[1]["history"] == IMAGE_TOKENS
    assert meters[0]["estimated"]
