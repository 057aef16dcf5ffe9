"""The relay's duty cycle: input that piles up is worked through in bursts with pauses
between them; input that arrives at a model's rate is never held back."""

from __future__ import annotations

import asyncio
import time

from server.models.relay_duty import BURST_S, DutyCycle
from server.settings import EMBEDDED_RELAY_PAUSE_S


def work(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_input_that_piles_up_is_relayed_in_bursts_that_let_others_run() -> None:
    async def scenario() -> tuple[int, int]:
        duty = DutyCycle(EMBEDDED_RELAY_PAUSE_S)
        others = 0

        async def other() -> None:
            nonlocal others
            while True:
                await asyncio.sleep(0.001)
                others += 1

        watcher = asyncio.create_task(other())
        await asyncio.sleep(0)
        for _ in range(2_000):  # every piece already there: nothing is awaited in between
            duty.asking()
            await duty.got()
            work(0.00002)  # ~a token's work
        watcher.cancel()
        return duty.pauses, others

    pauses, others = asyncio.run(scenario())
    # 40 ms of work in bursts of BURST_S: pauses, and the other task ran in them.
    assert pauses >= 0.040 / BURST_S / 4
    assert others >= pauses // 2


def test_input_that_arrives_at_a_models_rate_is_never_paused() -> None:
    async def scenario() -> int:
        duty = DutyCycle(EMBEDDED_RELAY_PAUSE_S)
        for _ in range(50):
            duty.asking()
            await asyncio.sleep(0.002)  # the next token is on its way
            await duty.got()
            work(0.002)  # however long a piece takes to handle, a wait ends the burst
        return duty.pauses

    assert asyncio.run(scenario()) == 0


def test_only_the_embedded_server_relays_in_bursts() -> None:
    from desktop.embedded import launch_settings
    from server.arguments import settings_from_args
    from server.cli import build_parser

    # parley-server shares its process with nothing: as fast as the upstream sends.
    args = build_parser().parse_args([])
    assert settings_from_args(args, token="t" * 32).limits.relay_pause is None
    # The desktop's server shares the window's GIL.
    assert launch_settings([]).limits.relay_pause == EMBEDDED_RELAY_PAUSE_S
