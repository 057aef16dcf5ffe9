"""`GET /api/status` says of each model what a window needs to warn before Send."""

from __future__ import annotations

from server.models.bundled import BUNDLED_MODEL_NAME
from tests.support.parley import MODEL, Parley


def test_the_status_says_which_models_take_images(parley: Parley) -> None:
    reply = parley.call("GET", "/api/status")
    assert reply.status == 200
    models = {m["name"]: m for m in reply.json()["models"]}
    # The local engine runs without a vision projector: a send with an image is refused.
    assert models[BUNDLED_MODEL_NAME]["images"] is False
    # An upstream may take them (it says so itself when it cannot).
    assert models[MODEL]["images"] is True
