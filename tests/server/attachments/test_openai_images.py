"""Other tools' images through the OpenAI-compatible API (issue 43): a user message's
`image_url` parts go to an upstream as they came; the local model, which takes no images,
refuses them with a clear error before its engine is started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.parley import Parley
from tests.support.upstream import Script, ScriptedUpstream

URL = "data:image/png;base64,iVBORw0KGgo="


def completion(parley: Parley, content: Any, role: str = "user") -> Any:
    body = {"messages": [{"role": role, "content": content}], "stream": False}
    if role != "user":
        body["messages"].append({"role": "user", "content": "and?"})
    return parley.call("POST", "/v1/chat/completions", json_body=body)


def test_image_url_parts_pass_through_to_the_upstream(
    parley: Parley, upstream: ScriptedUpstream
) -> None:
    upstream.script = Script(tokens=1)
    parts = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": URL, "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]
    reply = completion(parley, parts)
    assert reply.status == 200, reply.body
    assert upstream.records[-1].body["messages"][0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": URL}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
    ]


def test_bad_image_parts_are_refused(parley: Parley) -> None:
    for url in ("http://example.com/cat.png", "file:///etc/passwd", "data:text/html,<b>", 7):
        reply = completion(parley, [{"type": "image_url", "image_url": {"url": url}}])
        assert reply.status == 400, url
        assert "image_url must be a data:image/ URL" in reply.json()["error"]["message"]
    reply = completion(parley, [{"type": "image_url", "image_url": {"url": URL}}], "assistant")
    assert reply.status == 400  # an assistant's message has no images


def test_the_local_model_refuses_images(data_dir: Path) -> None:
    parley = Parley(data_dir).start()
    try:
        reply = completion(parley, [{"type": "image_url", "image_url": {"url": URL}}])
        assert reply.status == 400
        assert reply.json()["error"]["code"] == "images_not_supported"
        assert "cannot see images" in reply.json()["error"]["message"]
    finally:
        parley.stop()
