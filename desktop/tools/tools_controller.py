"""The Tools dialog's life: the MCP servers, added, changed and removed through the server
(desktop/client/), each tool's trust and effect, each server's injection guard, the chats'
grants (listed with each refresh, revoked one by one), the servers imported from other apps
(their list and the adding, each read again by the server), and signing in to remote servers
(the browser opened on the page the server gives; the dialog's refresh follows the sign-in to
its end); see desktop/dialog_controller.py."""

from __future__ import annotations

from typing import cast

from PySide6.QtWidgets import QWidget

from desktop.controller import Context
from desktop.dialog_controller import DialogController, Failed
from desktop.errors import ClientError
from desktop.tools.import_servers_dialog import Chosen, ImportServersDialog
from desktop.tools.sign_in import begin_sign_in
from desktop.tools.tool_effect import effect_words
from desktop.tools.tool_trust import as_trust, describe_trust
from desktop.tools.tools_dialog import ToolsDialog
from server.types import Trust
from server.types.tools import ToolEffectJSON


class ToolsController(DialogController[ToolsDialog]):
    def __init__(self, context: Context, parent: QWidget) -> None:
        super().__init__(context, parent)
        self.importing: ImportServersDialog | None = None  # "Import from other apps"

    def _make_dialog(self) -> ToolsDialog:
        dialog = ToolsDialog(self._parent)
        dialog.save_requested.connect(self._on_dialog_save_requested)
        dialog.remove_requested.connect(self._on_dialog_remove_requested)
        dialog.trust_requested.connect(self._on_dialog_trust_requested)
        dialog.import_requested.connect(self._on_dialog_import_requested)
        dialog.sign_in_acted.connect(self._on_dialog_sign_in_acted)
        dialog.tools_table.effect_chosen.connect(self._on_tools_table_effect_chosen)
        dialog.safety.guard_chosen.connect(self._on_safety_guard_chosen)
        dialog.safety.revoke_requested.connect(self._on_safety_revoke_requested)
        return dialog

    def _on_tools_table_effect_chosen(self, server: str, tool: str, effect: object) -> None:
        chosen = cast(ToolEffectJSON | None, effect)
        self._context.tasks.spawn(self._set_effect(server, tool, chosen))

    async def _set_effect(self, server: str, tool: str, effect: ToolEffectJSON | None) -> None:
        """Save what a tool can do; on a failure (shown) its stored value is shown again."""
        dialog = self.dialog
        saved = await self._ask(
            lambda client: client.tool_settings.set_tool_effect(server, tool, effect)
        )
        if dialog is None or dialog is not self.dialog:
            return
        if isinstance(saved, Failed):
            dialog.undo_trust(server, tool)
            return
        dialog.show_trust_saved(saved, tool)
        said = effect_words(effect) if effect is not None else "as its server says"
        dialog.show_note(f"{tool} of {server}: {said}, from its next call.")

    def _on_safety_guard_chosen(self, server: str, on: bool) -> None:
        done = f"The injection guard is {'on' if on else 'off'} for {server}."
        self._spawn_act(done, lambda client: client.tool_settings.set_guard(server, on))

    def _on_safety_revoke_requested(self, grant_id: str) -> None:
        done = "Revoked: its next call asks again."
        self._spawn_act(done, lambda client: client.tool_settings.revoke_grant(grant_id))

    def _on_dialog_sign_in_acted(self, name: str, action: str) -> None:
        self._context.tasks.spawn(self._sign_in_act(name, action))

    async def _sign_in_act(self, name: str, action: str) -> None:
        dialog = self.dialog
        try:
            if action == "sign_in":
                await self._sign_in(name)
            elif action == "cancel":
                done = f"Stopped signing in to {name}."
                await self._act(done, lambda client: client.tool_servers.cancel_sign_in(name))
            elif action == "sign_out":
                done = f"Signed out of {name}: its tools are off until you sign in again."
                await self._act(done, lambda client: client.tool_servers.sign_out(name))
        finally:
            if dialog is not None and dialog is self.dialog:
                dialog.sign_ins.settle(name)

    async def _sign_in(self, name: str) -> None:
        dialog = self.dialog
        server = await self._ask(lambda client: begin_sign_in(client, name))
        if isinstance(server, Failed) or dialog is None or dialog is not self.dialog:
            await self._refresh()  # the row's button again, as the server has it
            return
        dialog.follow_sign_in(name)
        await self._refresh()

    def _on_dialog_import_requested(self) -> None:
        self._context.tasks.spawn(self._offer_imports())

    async def _offer_imports(self) -> None:
        dialog = self.dialog
        found = await self._ask(lambda client: client.tool_servers.found())
        if isinstance(found, Failed) or dialog is None or dialog is not self.dialog:
            return
        if self.importing is not None:
            self.importing.close()
        offer = ImportServersDialog(found, dialog.names(), dialog)
        offer.add_requested.connect(lambda chosen: self._spawn_imports(offer, chosen))
        offer.finished.connect(lambda _result: self._on_offer_finished(offer))
        self.importing = offer
        offer.open()

    def _on_offer_finished(self, offer: ImportServersDialog) -> None:
        if offer is self.importing:
            self.importing = None
        offer.deleteLater()

    def _spawn_imports(self, offer: ImportServersDialog, chosen: list[Chosen]) -> None:
        self._context.tasks.spawn(self._import(offer, chosen))

    async def _import(self, offer: ImportServersDialog, chosen: list[Chosen]) -> None:
        """Add the ticked servers one by one; each that fails says why, the others are
        added all the same."""
        added: list[str] = []
        failed: list[str] = []
        for path, name, as_name in chosen:
            try:
                client = self._context.require_client()
                await client.tool_servers.add_found(path, name, as_name)
            except ClientError as exc:
                failed.append(f"{name} was not added: {exc.message}")
            else:
                added.append(as_name)
        if offer is self.importing:
            offer.show_added(added, failed)
        if self.dialog is not None and added:
            self.dialog.show_note(f"Added {', '.join(added)} from other apps; starting now.")
            await self._refresh()

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
        grants = await self._ask(lambda client: client.tool_settings.grants())
        if not isinstance(grants, Failed) and self.dialog is not None:
            self.dialog.safety.show_grants(grants)
