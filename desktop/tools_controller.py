"""The Tools dialog's life: the MCP servers, added, changed and removed through the server
(desktop/client/); see desktop/dialog_controller.py."""

from __future__ import annotations

from desktop.dialog_controller import DialogController, Failed
from desktop.widgets.tools_dialog import ToolsDialog


class ToolsController(DialogController[ToolsDialog]):
    def _make_dialog(self) -> ToolsDialog:
        dialog = ToolsDialog(self._parent)
        dialog.save_requested.connect(self._on_dialog_save_requested)
        dialog.remove_requested.connect(self._on_dialog_remove_requested)
        return dialog

    def _on_dialog_save_requested(self, name: str, entry: dict[str, object]) -> None:
        done = f"Saved {name}; it is starting."
        self._tasks.spawn(self._act(done, lambda client: client.put_tool_server(name, entry)))

    def _on_dialog_remove_requested(self, name: str) -> None:
        done = f"Removed {name}."
        self._tasks.spawn(self._act(done, lambda client: client.remove_tool_server(name)))

    async def _refresh(self) -> None:
        tools = await self._ask(lambda client: client.tools())
        if not isinstance(tools, Failed) and self.dialog is not None:
            self.dialog.show_tools(tools)
