"""A Parley server on a real uvicorn socket (background thread), and helpers to drive it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from server.app import create_app
from server.models.base import ChatBackend
from server.routes.services import Services
from server.serve import BackgroundServer, bind
from server.settings import Limits, LocalSettings, Settings, UpstreamSettings
from tests.support.client import Reply, SSEStream, request
from tests.support.waiting import wait_for

TOKEN = "test-token-0123456789"
MODEL = "scripted"


class Parley:
    def __init__(
        self,
        data_dir: Path,
        upstream_url: str | None = None,
        *,
        limits: Limits | None = None,
        backends: list[ChatBackend] | None = None,
        local: LocalSettings | None = None,
        port: int = 0,
        models_dir: Path | None = None,
        context: int | None = None,
    ) -> None:
        """`context`: the upstream model's context length (None: not known)."""
        upstreams = (
            (UpstreamSettings(upstream_url, MODEL, context=context),) if upstream_url else ()
        )
        self.settings = Settings(
            data_dir=data_dir,
            token=TOKEN,
            upstreams=upstreams,
            limits=limits or Limits(),
            local=local or LocalSettings(),
            models_dir=models_dir,
        )
        self.app = create_app(self.settings, backends)
        self.server = BackgroundServer(self.app, bind("127.0.0.1", port))
        self.token = TOKEN

    def start(self) -> Parley:
        self.server.start()
        return self

    def stop(self) -> bool:
        return self.server.stop(timeout=20)

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def services(self) -> Services:
        services: Services = self.app.state.services
        return services

    # -- API ------------------------------------------------------------------------------

    def call(self, method: str, path: str, **kwargs: Any) -> Reply:
        kwargs.setdefault("token", self.token)
        return request(self.port, method, path, **kwargs)

    def new_conversation(self, **fields: Any) -> str:
        reply = self.call("POST", "/api/conversations", json_body=fields)
        assert reply.status == 201, reply.body
        conversation_id: str = reply.json()["id"]
        return conversation_id

    def send(
        self,
        conversation_id: str,
        content: str = "hello",
        *,
        timeout: float = SSEStream.timeout,
        **fields: Any,
    ) -> SSEStream:
        """POST a message; `timeout` bounds each read (a long prefill sends nothing for a while)."""
        return SSEStream(
            self.port,
            f"/api/conversations/{conversation_id}/messages",
            {"content": content, **fields},
            self.token,
            timeout=timeout,
        )

    def conversation(self, conversation_id: str) -> dict[str, Any]:
        reply = self.call("GET", f"/api/conversations/{conversation_id}")
        assert reply.status == 200, reply.body
        conversation: dict[str, Any] = reply.json()
        return conversation

    def message(self, conversation_id: str, message_id: str) -> dict[str, Any]:
        for message in self.conversation(conversation_id)["messages"]:
            if message["id"] == message_id:
                found: dict[str, Any] = message
                return found
        raise KeyError(message_id)

    def settled(self, conversation_id: str, message_id: str, timeout: float = 40.0) -> Reply:
        """`GET .../messages/{id}?wait=settled`: the server's own long-poll."""
        path = f"/api/conversations/{conversation_id}/messages/{message_id}?wait=settled"
        return self.call("GET", path, timeout=timeout)

    def status(self) -> dict[str, Any]:
        reply = self.call("GET", "/api/status")
        assert reply.status == 200, reply.body
        status: dict[str, Any] = reply.json()
        return status

    # -- waiting (poll a server fact with a deadline) -------------------------------------

    def wait_settled(
        self, conversation_id: str, message_id: str, timeout: float = 10.0
    ) -> dict[str, Any]:
        def settled() -> dict[str, Any] | None:
            message = self.message(conversation_id, message_id)
            return message if message["status"] != "streaming" else None

        found: dict[str, Any] = wait_for(settled, timeout)
        return found

    def wait_for(self, predicate: Any, timeout: float = 10.0) -> Any:
        return wait_for(predicate, timeout)

    def queue_length(self) -> int:
        return int(self.status()["models"][0]["queue_length"])

    def wait_idle(self, timeout: float = 10.0) -> dict[str, Any]:
        """Until no turn is active and no model is in use or queued."""

        def idle() -> dict[str, Any] | None:
            status = self.status()
            busy = any(m["in_use"] or m["queue_length"] for m in status["models"])
            return status if status["active_turns"] == 0 and not busy else None

        found: dict[str, Any] = wait_for(idle, timeout)
        return found


def wait_model_ready(server: Parley, timeout: float = 60.0) -> dict[str, Any]:
    """Until the default model is loaded (the local model warms up in the background)."""

    def ready() -> dict[str, Any] | None:
        status = server.status()
        model: dict[str, Any] = next(
            m for m in status["models"] if m["name"] == status["default_model"]
        )
        if model["state"] == "error":
            raise AssertionError(f"model failed to load: {model}")
        return model if model["state"] == "ready" else None

    found: dict[str, Any] = wait_for(ready, timeout)
    return found
