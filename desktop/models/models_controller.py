"""The Models dialog's life: add and remove GGUF files and change a local model's settings
through the server (desktop/client/); see desktop/dialog_controller.py. Its "Download a
model…" and "On this computer…" open the dialogs `hub` and `found` run."""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from desktop.controller import Context
from desktop.dialog_controller import DialogController, Failed
from desktop.models.found_controller import FoundController
from desktop.models.hub_controller import HubController
from desktop.models.models_dialog import ModelsDialog


class ModelsController(DialogController[ModelsDialog]):
    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.hub = HubController(context, parent)
        self.found = FoundController(context, parent)

    def _make_dialog(self) -> ModelsDialog:
        dialog = ModelsDialog(self._parent)
        dialog.hub_requested.connect(self.hub.open)
        dialog.found_requested.connect(self.found.open)
        dialog.add_requested.connect(self._on_dialog_add_requested)
        dialog.remove_requested.connect(self._on_dialog_remove_requested)
        dialog.settings_requested.connect(self._on_dialog_settings_requested)
        dialog.default_requested.connect(self._on_dialog_default_requested)
        return dialog

    def _on_dialog_default_requested(self, name: str) -> None:
        done = f"New chats use {name}."
        self._spawn_act(done, lambda client: client.models.set_default(name))

    def _on_dialog_add_requested(self, path: str) -> None:
        self._spawn_act(f"Added {path}.", lambda c: c.models.add_local(path))

    def _on_dialog_remove_requested(self, name: str, stop_replies: bool) -> None:
        self._context.tasks.spawn(self._remove(name, stop_replies))

    async def _remove(self, name: str, stop_replies: bool) -> None:
        """Remove an added model; while replies use it (a sub-agent's too) the user is asked
        whether to stop them, and they end as their Stop would."""
        dialog = self.dialog
        done = await self._ask(lambda c: c.models.remove_local(name, stop_replies))
        if dialog is None or dialog is not self.dialog:
            return
        if not isinstance(done, Failed):
            dialog.show_note(f"Removed {name}.")
            await self._refresh()
        elif done.code == "model_in_use" and not stop_replies:
            dialog.ask_stop_replies(name)

    def _on_dialog_settings_requested(self, name: str, settings: dict[str, int]) -> None:
        done = f"{name} starts with these settings on its next use."
        self._spawn_act(done, lambda client: client.models.configure(name, settings))

    async def _refresh(self) -> None:
        models = await self._ask(lambda client: client.models.all())
        if not isinstance(models, Failed) and self.dialog is not None:
            self.dialog.show_models(models)
