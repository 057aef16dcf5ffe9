"""The Tools dialog's life: the MCP servers, added, changed and removed through the server
(desktop/client/), and each tool's trust; see desktop/dialog_controller.py."""

from __future__ import annotations

from desktop.dialog_controller import DialogController, Failed
from desktop.widgets.tool_trust import as_trust, describe_trust
from desktop.widgets.tools_dialog import ToolsDialog
from server.types import Trust


class ToolsController(DialogController[ToolsDialog]):
    def _make_dialog(self) -> ToolsDialog:
        dialog = ToolsDialog(self._parent)
        dialog.save_requested.connect(self._on_dialog_save_requested)
        dialog.remove_requested.connect(self._on_dialog_remove_requested)
        dialog.trust_requested.connect(self._on_dialog_trust_requested)
        return dialog

    def _on_dialog_save_requested(self, name: str, entry: dict[str, object]) -> None:
        self._context.tasks.spawn(self._save(name, entry))

    async def _save(self, name: str, entry: dict[str, object]) -> None:
        dialog = self.dialog
        saved = await self._ask(lambda client: client.put_tool_server(name, entry))
        if isinstance(saved, Failed) or dialog is None or dialog is not self.dialog:
            return
        dialog.show_saved(saved)  # then followed by the refreshes until it has started
        await self._refresh()

    def _on_dialog_remove_requested(self, name: str) -> None:
        done = f"Removed {name}."
        self._spawn_act(done, lambda client: client.remove_tool_server(name))

    def _on_dialog_trust_requested(self, server: str, tool: str, trust: object) -> None:
        self._context.tasks.spawn(self._set_trust(server, tool, as_trust(trust)))

    async def _set_trust(self, server: str, tool: str, trust: Trust | None) -> None:
        """Save one tool's trust; on a failure (shown) its stored value is shown again."""
        dialog = self.dialog
        saved = await self._ask(lambda client: client.set_tool_trust(server, tool, trust))
        if dialog is None or dialog is not self.dialog:
            return
        if isinstance(saved, Failed):
            dialog.undo_trust(server, tool)
            return
        dialog.show_trust_saved(saved, tool)
        dialog.show_note(f"{tool} of {server}: {describe_trust(trust, saved['trust'])}.")

    async def _refresh(self) -> None:
        tools = await self._ask(lambda client: client.tools())
        if not isinstance(tools, Failed) and self.dialog is not None:
            self.dialog.show_tools(tools)
