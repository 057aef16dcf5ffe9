"""Projects and chats in them, made through the server's own store (on its database thread)."""

from __future__ import annotations

import asyncio

from tests.support.parley import Parley


def new_project(parley: Parley, name: str) -> str:
    project = asyncio.run(parley.services.store.projects.create(name))
    project_id: str = project["id"]
    return project_id


def chat_in(parley: Parley, project_id: str | None, **switches: bool) -> str:
    """A new chat in the project (None: outside every project)."""
    store = parley.services.store
    conversation = asyncio.run(store.create_conversation("", None, None, project_id))
    cid: str = conversation["id"]
    if switches:
        reply = parley.call("PATCH", f"/api/conversations/{cid}", json_body=switches)
        assert reply.status == 200, reply.body
    return cid
