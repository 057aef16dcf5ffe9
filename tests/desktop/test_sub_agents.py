"""Sub-agents in the window (issue 41): drawn under their step as they run and when the chat is
reopened (a "Sub-agent: <task>" line, its own steps indented beneath, an excerpt of what it
said; all of it in the step's details); a stopped reply's footer says what the stop ended and
which calls may have acted, in this session and the next."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt, QUrl

from desktop.transcript.step_details import StepDetailsDialog
from tests.desktop.conftest import GuiApp, run, with_tools
from tests.desktop.transcript.drawn import block_tops
from tests.support.tools import ToolLog
from tests.support.upstream import Script, ScriptedUpstream

pytestmark = pytest.mark.slow


@pytest.fixture
def tools_gui(gui_factory: Any, data_dir: Path, tool_log: ToolLog, qtbot: Any) -> GuiApp:
    return with_tools(gui_factory, data_dir, tool_log, qtbot, trust="allow")


def call(name: str, **arguments: Any) -> dict[str, str]:
    return {"name": name, "arguments": json.dumps(arguments)}


def tool(name: str, **arguments: Any) -> dict[str, str]:
    return call(f"t__{name}", **arguments)


def stored_reply(gui: GuiApp, qtbot: Any) -> dict[str, Any]:
    client = gui.window.client
    assert client is not None and gui.window.current_id is not None
    reply: dict[str, Any] = run(qtbot, client.conversation(gui.window.current_id))["messages"][-1]
    return reply


def indent_of(gui: GuiApp, words: str) -> float:
    """How deep the line holding `words` lies in a step's card (0: the card's own line, 1: a
    sub-agent's step under it)."""
    view = gui.window.transcript
    for row_id in view.rows.ids():
        for block in view.rows.blocks_of(row_id):
            lines = block.step.inner if block.step is not None else []
            for line in lines:
                if words in line:
                    return 1.0 + (len(line) - len(line.lstrip(" "))) / 2
            if block.step is not None and words in block.step.title:
                return 0.0  # the card's own line
    raise AssertionError(f"no step's line holds {words!r}")


def reopen(gui: GuiApp, qtbot: Any, words: str) -> None:
    """A new chat, then the chat that was on screen again, from the list."""
    conversation_id = gui.window.current_id
    qtbot.keyClick(gui.window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert words not in gui.transcript_text()
    sidebar = gui.window.sidebar
    qtbot.waitUntil(lambda: sidebar.list.count() >= 1, timeout=5_000)
    sidebar.list.setCurrentRow(0)
    qtbot.waitUntil(lambda: gui.window.current_id == conversation_id, timeout=5_000)
    qtbot.waitUntil(lambda: words in gui.transcript_text(), timeout=5_000)


def test_a_sub_agent_is_drawn_under_its_step_as_it_runs_and_when_reopened(
    tools_gui: GuiApp, upstream: ScriptedUpstream, qtbot: Any
) -> None:
    gui = tools_gui
    upstream.queue = [
        Script(texts=["Asking a helper. "], tool_calls=[call("delegate", task="ECHO-TASK: hi")]),
        Script(texts=["The helper said hi."]),
    ]
    upstream.by_task["ECHO-TASK"] = [
        Script(texts=["Checking first. "], tool_calls=[tool("slow", seconds=1.5, tag="c")]),
        Script(texts=["It said hi, after a wait."]),
    ]
    finished: list[str] = []
    gui.window.reply_finished.connect(finished.append)
    gui.send("ask a helper")
    # Live: the sub-agent's line, and its own running step indented beneath it.
    qtbot.waitUntil(lambda: "slow(seconds=1.5" in gui.transcript_text(), timeout=15_000)
    text = gui.transcript_text()
    assert not finished
    assert "Sub-agent: ECHO-TASK: hi — running…" in text
    assert text.index("Sub-agent: ECHO-TASK") < text.index("slow(seconds=1.5")
    assert indent_of(gui, "slow(seconds=1.5") > indent_of(gui, "Sub-agent: ECHO-TASK") == 0
    assert "“Checking first.”" in text  # what it said so far
    qtbot.waitUntil(lambda: bool(finished), timeout=15_000)

    text = gui.transcript_text()
    assert "Sub-agent: ECHO-TASK: hi — done in" in text
    assert 't · slow(seconds=1.5, tag="c") — done in' in text
    assert "“It said hi, after a wait.”" in text  # an excerpt of its last words
    assert text.index("Asking a helper.") < text.index("Sub-agent:")
    assert text.index("“It said hi") < text.index("The helper said hi.")
    drawn_live = block_tops(gui.window.transcript)

    reopen(gui, qtbot, "Sub-agent: ECHO-TASK")
    assert block_tops(gui.window.transcript) == drawn_live
    assert indent_of(gui, "slow(seconds=1.5") > 0

    # Its details: the task, its steps in full, all it said.
    reply = stored_reply(gui, qtbot)
    step = next(p for p in reply["parts"] if p["type"] == "tool")
    gui.window.transcript.open_link(QUrl(f"step:{step['id']}"))
    dialog = gui.window.findChild(StepDetailsDialog)
    assert dialog is not None and dialog.isVisible()
    assert dialog.windowTitle() == "Sub-agent — ECHO-TASK: hi"
    details = dialog.text.toPlainText()
    assert "Task:\nECHO-TASK: hi" in details and "slept 1.5 s" in details
    assert "What it said:\nChecking first. \n\nIt said hi, after a wait." in details
    dialog.close()
    # Its own step's details link works too.
    inner = next(p for p in step["agent"]["parts"] if p["type"] == "tool")
    gui.window.transcript.open_link(QUrl(f"step:{inner['id']}"))
    (dialog,) = [d for d in gui.window.findChildren(StepDetailsDialog) if d.isVisible()]
    assert "slept 1.5 s" in dialog.text.toPlainText()
    assert dialog.windowTitle() == "Tool step — slow"
    dialog.close()


def two_children_mid_call(
    gui: GuiApp, upstream: ScriptedUpstream, log: ToolLog, qtbot: Any
) -> None:
    """A reply whose two sub-agents each wait in a long call of the tests' MCP server."""
    upstream.queue = [
        Script(tokens=0, tool_calls=[call("delegate", task="CHILD-A wait"),
                                     call("delegate", task="CHILD-B wait")]),
    ]  # fmt: skip
    upstream.script = Script(texts=["never said"])
    for key, tag in (("CHILD-A", "a"), ("CHILD-B", "b")):
        upstream.by_task[key] = [
            Script(texts=[f"{key} starts. "], tool_calls=[tool("slow", seconds=30, tag=tag)])
        ]
    gui.send("two helpers")
    qtbot.waitUntil(
        lambda: bool(log.find("call", tag="a") and log.find("call", tag="b")), timeout=15_000
    )
    qtbot.waitUntil(lambda: gui.transcript_text().count("slow(") == 2, timeout=5_000)


RECEIPT = "Stopped · ended 2 tool calls, 2 sub-agents"
ACTED = tuple(
    "May have acted: " + "; ".join(f'slow(seconds=30, tag="{tag}") on t' for tag in tags)
    for tags in ("ab", "ba")
)


def test_stop_ends_both_sub_agents_and_the_footer_says_what_it_ended(
    tools_gui: GuiApp, upstream: ScriptedUpstream, tool_log: ToolLog, qtbot: Any
) -> None:
    gui = tools_gui
    two_children_mid_call(gui, upstream, tool_log, qtbot)
    notes = gui.ending_notes()
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.menus.stop.trigger()
    assert notes[0] == "Stopped during the tool t · slow — saving…"
    text = gui.transcript_text()
    assert text.count("— stopped") == 4  # two sub-agents, and each one's call
    assert "“CHILD-A starts.”" in text and "“CHILD-B starts.”" in text  # kept
    assert RECEIPT in text
    assert any(acted in text for acted in ACTED)
    assert text.index(RECEIPT) < text.index("May have acted")

    reopen(gui, qtbot, "Sub-agent: CHILD-A")
    text = gui.transcript_text()
    assert RECEIPT in text and any(acted in text for acted in ACTED)


def test_a_reply_stopped_in_an_earlier_session_keeps_its_receipt(
    gui_factory: Any,
    data_dir: Path,
    upstream: ScriptedUpstream,
    tool_log: ToolLog,
    qtbot: Any,
) -> None:
    first = with_tools(gui_factory, data_dir, tool_log, qtbot, trust="allow")
    two_children_mid_call(first, upstream, tool_log, qtbot)
    with qtbot.waitSignal(first.window.reply_finished, timeout=10_000):
        first.window.menus.stop.trigger()
    first.close()

    second: GuiApp = gui_factory()  # reopens the chat it showed
    qtbot.waitUntil(lambda: "Sub-agent: CHILD-B" in second.transcript_text(), timeout=10_000)
    text = second.transcript_text()
    assert RECEIPT in text and any(acted in text for acted in ACTED)
    # The receipt is the reply's footer, with its actions.
    view = second.window.transcript
    stopped = next(i for i in view.rows.ids() if (row := view.rows.row(i)) and row.acted)
    assert "copy" in view.actions_of(stopped)


def test_closing_the_window_mid_call_ends_both_sub_agents_and_the_next_launch_shows_it(
    gui_factory: Any,
    data_dir: Path,
    upstream: ScriptedUpstream,
    tool_log: ToolLog,
    qtbot: Any,
) -> None:
    first = with_tools(gui_factory, data_dir, tool_log, qtbot, trust="allow")
    two_children_mid_call(first, upstream, tool_log, qtbot)
    first.close()  # the app's whole quit path, to the end
    # Each call was cancelled at its MCP server, neither finished.
    qtbot.waitUntil(
        lambda: bool(tool_log.find("cancelled", tag="a") and tool_log.find("cancelled", tag="b")),
        timeout=5_000,
    )
    assert not tool_log.find("done", tool="slow")

    second: GuiApp = gui_factory()  # reopens the chat it showed
    qtbot.waitUntil(lambda: "May have acted" in second.transcript_text(), timeout=10_000)
    text = second.transcript_text()
    # Closing the window hangs up the reply's stream first (as Stop does) and stops the
    # server only once it reports no turn under way: the reply was ended by the hang-up,
    # so it reads "Stopped", not "Interrupted: Parley was closed" (a shutdown's).
    reply = stored_reply(second, qtbot)
    assert (reply["status"], reply["ended_by"]) == ("interrupted", "client_hangup")
    assert "Parley was closed" not in text
    assert text.count("— stopped") == 4  # two sub-agents, and each one's call
    assert "Sub-agent: CHILD-A wait — stopped" in text
    assert "Sub-agent: CHILD-B wait — stopped" in text
    assert "“CHILD-A starts.”" in text and "“CHILD-B starts.”" in text  # kept
    assert any(acted in text for acted in ACTED)
    assert text.index(RECEIPT) < text.index("May have acted")


def test_stop_while_a_sub_agent_waits_for_approval_ends_the_wait_and_runs_nothing(
    gui_factory: Any,
    data_dir: Path,
    upstream: ScriptedUpstream,
    tool_log: ToolLog,
    qtbot: Any,
) -> None:
    gui = with_tools(gui_factory, data_dir, tool_log, qtbot, trust="ask")
    card = gui.window.approval_card
    upstream.queue = [Script(tokens=0, tool_calls=[call("delegate", task="ASK-TASK")])]
    upstream.script = Script(texts=["never said"])
    upstream.by_task["ASK-TASK"] = [
        Script(texts=["Asking. "], tool_calls=[tool("danger", target="x")]),
        Script(texts=["acted on x"]),
    ]
    gui.send("one helper")
    qtbot.waitUntil(card.isVisible, timeout=15_000)  # the child's call, asked of the user
    assert "danger" in card.title.text()
    assert json.loads(card.arguments.toPlainText()) == {"target": "x"}
    with qtbot.waitSignal(gui.window.reply_finished, timeout=10_000):
        gui.window.menus.stop.trigger()
    assert not card.isVisible()
    text = gui.transcript_text()
    assert "Stopped · ended 1 sub-agent, 1 approval" in text
    assert "May have acted" not in text  # nothing ran
    assert "“Asking.”" in text

    gui.close()  # nothing of the app is left that could still run it
    assert not tool_log.find("call", tool="danger")


def test_a_sub_agents_call_asks_on_a_card_that_names_the_sub_agent(
    gui_factory: Any,
    data_dir: Path,
    upstream: ScriptedUpstream,
    tool_log: ToolLog,
    qtbot: Any,
) -> None:
    """The card says a sub-agent asks, and which: its task, cut short (the user did not
    write that task); the reply's own call is the model's."""
    gui = with_tools(gui_factory, data_dir, tool_log, qtbot, trust="ask")
    card = gui.window.approval_card
    task = "ASK-TASK: tidy the garden shed, then " + "sweep the path and " * 10 + "report"
    upstream.queue = [
        Script(tokens=0, tool_calls=[call("delegate", task=task)]),
        Script(tokens=0, tool_calls=[tool("danger", target="mine")]),
        Script(texts=["All done."]),
    ]
    upstream.by_task["ASK-TASK"] = [
        Script(tokens=0, tool_calls=[tool("danger", target="x")]),
        Script(texts=["acted on x"]),
    ]
    gui.send("one helper")
    qtbot.waitUntil(card.isVisible, timeout=15_000)  # the child's call
    title = card.title.text()
    assert title.startswith("The sub-agent working on “ASK-TASK: tidy the garden shed, then")
    assert "…” wants to run <b>danger</b> from the MCP server <b>t</b>" in title
    assert "report" not in title  # cut short
    qtbot.mouseClick(card.allow_once, Qt.MouseButton.LeftButton)
    # The parent's own call next: the model's.
    qtbot.waitUntil(lambda: card.isVisible() and "mine" in card.arguments.toPlainText(),
                    timeout=15_000)  # fmt: skip
    assert card.title.text().startswith("The model wants to run <b>danger</b>")
    with qtbot.waitSignal(gui.window.reply_finished, timeout=15_000):
        qtbot.mouseClick(card.allow_once, Qt.MouseButton.LeftButton)
    assert [e["target"] for e in tool_log.events() if e["event"] == "call"] == ["x", "mine"]
