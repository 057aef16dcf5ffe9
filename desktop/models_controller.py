"""The Models dialog's life: add and remove GGUF files and change a local model's settings
through the server (desktop/client/); see desktop/dialog_controller.py."""

from __future__ import annotations

from desktop.dialog_controller import DialogController, Failed
from desktop.widgets.models_dialog import ModelsDialog


class ModelsController(DialogController[ModelsDialog]):
    def _make_dialog(self) -> ModelsDialog:
        dialog = ModelsDialog(self._parent)
        dialog.add_requested.connect(self._on_dialog_add_requested)
        dialog.remove_requested.connect(self._on_dialog_remove_requested)
        dialog.settings_requested.connect(self._on_dialog_settings_requested)
        dialog.default_requested.connect(self._on_dialog_default_requested)
        return dialog

    def _on_dialog_default_requested(self, name: str) -> None:
        done = f"New chats use {name}."
        self._tasks.spawn(self._act(done, lambda client: client.set_default_model(name)))

    def _on_dialog_add_requested(self, path: str) -> None:
        self._tasks.spawn(self._act(f"Added {path}.", lambda c: c.add_local_model(path)))

    def _on_dialog_remove_requested(self, name: str) -> None:
        self._tasks.spawn(self._act(f"Removed {name}.", lambda c: c.remove_local_model(name)))

    def _on_dialog_settings_requested(self, name: str, settings: dict[str, int]) -> None:
        done = f"{name} starts with these settings on its next use."
        self._tasks.spawn(self._act(done, lambda client: client.configure_model(name, settings)))

    async def _refresh(self) -> None:
        models = await self._ask(lambda client: client.models())
        if not isinstance(models, Failed) and self.dialog is not None:
            self.dialog.show_models(models)
