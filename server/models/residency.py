"""Which local engines are loaded: the one owner of that.

- **A load passes through here first** (`loading`, one at a time): its fits estimate
  (server/models/fit.py, at the context the engine allocates: `n_ctx` × slots) is checked
  against the memory free (MemAvailable) and, if `ModelLimits.memory_budget` is set, against
  the budget less what the loaded engines were estimated at. If it would not fit, idle
  engines are unloaded, the least recently used first; an engine a reply uses (its own, a
  sub-agent's or a compaction's, between model calls too: `users`) is never unloaded for
  it. A load that still cannot fit is refused with the figures (ModelWontFitError), before
  any process starts: never a swap storm, never an OOM kill.
- **Idle unload.** When the last user of an engine lets go (its lease released, or the last
  run using it ended), a timer is armed for the model's keep-alive; taking its lease again
  disarms it, and a run that uses it between model calls keeps it (the run's end arms it
  again). No polling: nothing runs while nothing changes. Keep-alive 0 unloads after each
  reply; KEEP_LOADED never.
- Every unload is the engine's clean one (`LocalBackend.unload`: its process exits, its
  slots and prompt cache with it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

from server.errors import ModelWontFitError
from server.limits import ModelLimits
from server.models import fit
from server.models.entry import ModelEntry
from server.models.facts import read_facts
from server.models.local import LocalBackend
from server.settings import KEEP_LOADED
from server.types import ModelLifecycle

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Tenant:
    """A local model as the residency sees it."""

    entry: ModelEntry
    backend: LocalBackend
    last_used: float = 0.0  # time.monotonic() of its load or lease's last change (LRU)
    charge: int = 0  # its fits estimate when it loaded: what it counts against the budget
    timer: asyncio.TimerHandle | None = None


class Residency:
    def __init__(self, limits: ModelLimits | None = None) -> None:
        self.limits = limits or ModelLimits()
        self._tenants: dict[LocalBackend, Tenant] = {}
        self._lock = asyncio.Lock()  # one load at a time: each sees the memory the last took
        self._unloads: set[asyncio.Task[None]] = set()
        # Whether a run uses the model (the run manager's `using`, set when the app is put
        # together: the models sit below the runs).
        self.users: Callable[[ModelEntry], bool] = lambda entry: False
        # The memory free now (blocking: called on a thread); a test or a bench may fake it.
        self.available: Callable[[], int | None] = fit.available_memory

    # -- the models held -------------------------------------------------------------------

    def track(self, entry: ModelEntry) -> None:
        backend = entry.backend
        if not isinstance(backend, LocalBackend):
            return
        tenant = self._tenants[backend] = Tenant(entry, backend, time.monotonic())
        backend.gate = self
        entry.lease.on_change = lambda: self._lease_changed(tenant)

    def forget(self, entry: ModelEntry) -> None:
        if isinstance(entry.backend, LocalBackend):
            tenant = self._tenants.pop(entry.backend, None)
            if tenant is not None:
                self._disarm(tenant)
                entry.lease.on_change = None

    def in_use(self, entry: ModelEntry) -> bool:
        """A reply holds or waits for its lease, or a run uses it between model calls."""
        return bool(entry.lease.in_use or entry.lease.queue_length or self.users(entry))

    def lifecycle(self, entry: ModelEntry) -> ModelLifecycle:
        state = entry.backend.state
        if state == "ready":
            return "busy" if self.in_use(entry) else "loaded"
        return "loading" if state == "loading" else "not_loaded"

    def memory(self, entry: ModelEntry) -> int | None:
        """The resident memory of the model's engine process (None while none runs)."""
        backend = entry.backend
        if not isinstance(backend, LocalBackend) or backend.engine is None:
            return None
        pid = backend.engine.pid
        return fit.process_rss(pid) if pid is not None else None

    # -- loading ---------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def loading(self, backend: LocalBackend) -> AsyncIterator[None]:
        """Held around one load: room is made first (or ModelWontFitError raised)."""
        tenant = self._tenants.get(backend)
        if tenant is None:  # not this registry's (a test's own backend): nothing to keep
            yield
            return
        async with self._lock:
            needed = await self._make_room(tenant)
            yield
        tenant.charge = needed
        tenant.last_used = time.monotonic()
        self._check(tenant)  # loaded and nobody waits for it: its idle clock starts

    async def _make_room(self, tenant: Tenant) -> int:
        """Unload idle engines, least recently used first, until `tenant`'s fits; its
        estimate. Raises ModelWontFitError."""
        needed = await asyncio.to_thread(self.needed, tenant.backend)
        while True:
            free = await asyncio.to_thread(self.available)
            others = [t for t in self._tenants.values() if t is not tenant and _loaded(t)]
            short = self._shortfall(needed, free, sum(t.charge for t in others))
            if short is None:
                return needed
            idle = [t for t in others if not self.in_use(t.entry)]
            if not idle:
                kept = ", ".join(repr(t.backend.name) for t in others)
                why = f"cannot load {tenant.backend.name!r}: {short}"
                raise ModelWontFitError(why + (f" (in use, kept loaded: {kept})" if kept else ""))
            victim = min(idle, key=lambda t: t.last_used)
            log.info("unloading %r to make room for %r (%s)", victim.backend.name,
                     tenant.backend.name, short)  # fmt: skip
            self._disarm(victim)
            await victim.backend.unload()

    def _shortfall(self, needed: int, free: int | None, charged: int) -> str | None:
        """Why `needed` bytes do not fit now; None when they do."""
        if free is not None and needed > free:
            return f"it needs {_size(needed)} and {_size(free)} is free"
        budget = self.limits.memory_budget
        if budget is not None and needed + charged > budget:
            left = max(budget - charged, 0)
            budget_left = f"{_size(left)} of the {_size(budget)} budget is left"
            return f"it needs {_size(needed)} and {budget_left}"
        return None

    @staticmethod
    def needed(backend: LocalBackend) -> int:
        """The fits estimate at the context the engine allocates (every slot's); a header
        that does not give the context's shape counts the weights and overhead alone."""
        if backend.path is None:
            return 0
        info = read_facts(backend.path)
        if info is None:
            return 0  # unreadable: its load fails and says why
        context = backend.settings.n_ctx * backend.settings.n_parallel
        found = fit.estimate(info, context, None)
        return found.needed_bytes or found.weights_bytes + found.overhead_bytes

    # -- unloading -------------------------------------------------------------------------

    async def unload(self, entry: ModelEntry) -> None:
        """Eject: the engine stops now (whether a reply uses it is the caller's question)."""
        tenant = self._tenant(entry)
        if tenant is not None:
            self._disarm(tenant)
            await tenant.backend.unload()

    def runs_changed(self) -> None:
        """A run ended: a model it used may be idle now."""
        for tenant in list(self._tenants.values()):
            if tenant.timer is None:
                self._check(tenant)

    def settings_changed(self, entry: ModelEntry) -> None:
        """Its keep-alive may have changed: counted again from now, if it is idle."""
        tenant = self._tenant(entry)
        if tenant is not None:
            self._disarm(tenant)
            self._check(tenant)

    def _tenant(self, entry: ModelEntry) -> Tenant | None:
        backend = entry.backend
        return self._tenants.get(backend) if isinstance(backend, LocalBackend) else None

    def _lease_changed(self, tenant: Tenant) -> None:
        tenant.last_used = time.monotonic()
        if tenant.entry.lease.in_use:
            self._disarm(tenant)  # used: its idle clock starts again when the use has ended
        else:
            self._check(tenant)

    def _check(self, tenant: Tenant) -> None:
        """Arm the idle timer if the engine is loaded and nobody uses it."""
        if not _loaded(tenant) or self.in_use(tenant.entry):
            return
        self._disarm(tenant)
        keep = tenant.backend.settings.keep_alive
        if keep == KEEP_LOADED or keep < 0:
            return
        loop = asyncio.get_running_loop()
        tenant.timer = loop.call_later(keep, self._expired, tenant)

    def _disarm(self, tenant: Tenant) -> None:
        if tenant.timer is not None:
            tenant.timer.cancel()
            tenant.timer = None

    def _expired(self, tenant: Tenant) -> None:
        tenant.timer = None
        if self._tenants.get(tenant.backend) is not tenant or not _loaded(tenant):
            return  # removed, or unloaded meanwhile
        if self.in_use(tenant.entry):
            return  # used again: its next release (or its run's end) arms the timer again
        log.info("unloading %r: no reply for %d s", tenant.backend.name,
                 tenant.backend.settings.keep_alive)  # fmt: skip
        task = asyncio.get_running_loop().create_task(tenant.backend.unload())
        self._unloads.add(task)
        task.add_done_callback(self._unloads.discard)

    async def aclose(self) -> None:
        for tenant in self._tenants.values():
            self._disarm(tenant)
        for task in list(self._unloads):
            with contextlib.suppress(Exception):
                await task


def _loaded(tenant: Tenant) -> bool:
    """Its engine runs. (A load waiting here is "loading" and holds no memory yet.)"""
    return tenant.backend.state == "ready"


def _size(size: int) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"
