"""One model this server can chat with: its backend and its lease (the replies it serves)."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.models.base import ChatBackend
from server.models.lease import Lease
from server.types import ModelStatusJSON


@dataclass(eq=False)
class ModelEntry:
    backend: ChatBackend
    lease: Lease = field(init=False)

    def __post_init__(self) -> None:
        self.lease = Lease(self.backend.slots)

    @property
    def name(self) -> str:
        return self.backend.name

    def status(self) -> ModelStatusJSON:
        return {
            "name": self.name,
            "kind": self.backend.kind,
            "state": self.backend.state,
            "error": self.backend.state_error,
            "in_use": self.lease.in_use,
            "slots": self.lease.slots,
            "slots_busy": self.lease.busy,
            "queue_length": self.lease.queue_length,
        }
