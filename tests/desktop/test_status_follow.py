"""The window follows the server's status as the server sends its changes (one stream that
stays open), not by asking for it once a second; the stream ends with the window."""

from __future__ import annotations

from typing import Any

from server.types import StatusJSON
from tests.desktop.conftest import GuiApp
from tests.support.upstream import Script, ScriptedUpstream


def test_a_turn_begun_and_ended_reaches_the_picker_with_no_status_request(
    gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    window = gui.window
    client = window.client
    assert client is not None
    asked: list[None] = []
    ask = client.status

    async def counted() -> StatusJSON:
        asked.append(None)
        return await ask()

    client.status = counted  # type: ignore[method-assign]
    shown: list[int] = []
    show = window.model_picker.show_status

    def spy(status: StatusJSON) -> None:
        shown.append(status["active_turns"])
        show(status)

    window.model_picker.show_status = spy  # type: ignore[method-assign]

    upstream.script = Script(tokens=100, stall_after=2)  # a reply that stays under way
    gui.send("hello")
    qtbot.waitUntil(lambda: 1 in shown, timeout=10_000)
    window.stop_reply()
    qtbot.waitUntil(lambda: shown[-1] == 0, timeout=10_000)
    assert asked == []  # each change came on the stream: no request a second
