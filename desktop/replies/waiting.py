"""A reply waiting for the user: the approval card's, the overdue card's and
the servers' question card's controllers, fed by the replies' events, and which chats wait:
their rows in the list say so, and the window's title (`changed`). With them, the sign-in
card's controller: a reply that needed a server's sign-in does not wait for it, so its chat
is not counted as waiting."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget

from desktop.chats.chat_list import ChatList
from desktop.controller import Context
from desktop.replies.approval_card import ApprovalCard
from desktop.replies.approvals import ApprovalController
from desktop.replies.controller import ReplyController
from desktop.replies.overdue import OverdueController
from desktop.replies.overdue_card import OverdueCard
from desktop.replies.question_card import QuestionCard
from desktop.replies.questions import QuestionController
from desktop.replies.sign_in_card import SignInCard
from desktop.replies.sign_ins import SignInController


class Waiting(QObject):
    changed = Signal()  # a chat's reply began or ceased to wait for the user
    failed = Signal(str)  # for the user

    def __init__(
        self,
        context: Context,
        reply: ReplyController,
        cards: tuple[ApprovalCard, OverdueCard, QuestionCard, SignInCard],
        chat_list: ChatList,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._chat_list = chat_list
        self.approvals = ApprovalController(context, cards[0])
        self.overdue = OverdueController(context, cards[1])  # a long call: keep waiting?
        reply.approval_requested.connect(self.approvals.requested)
        self.questions = QuestionController(context, cards[2])  # a tool's server asks
        reply.overdue_asked.connect(self.overdue.requested)
        reply.question_asked.connect(self.questions.requested)
        for controller in (self.approvals, self.overdue, self.questions):
            reply.step_updated.connect(controller.step_changed)
            reply.reply_gone.connect(controller.reply_ended)
            controller.failed.connect(self.failed)
            controller.waiting_changed.connect(self._on_waiting_changed)
        self.sign_ins = SignInController(context, cards[3])  # a server's sign-in asked for
        reply.step_updated.connect(self.sign_ins.step_changed)
        self.sign_ins.failed.connect(self.failed)

    @property
    def chats(self) -> set[str]:
        """The chats whose reply waits for the user's answer."""
        waiting = self.approvals.waiting_chats() | self.overdue.waiting_chats()
        return waiting | self.questions.waiting_chats()

    def show_current(self) -> None:
        """The chat on screen changed: its cards, if it waits."""
        self.approvals.show_current()
        self.overdue.show_current()
        self.questions.show_current()
        self.sign_ins.show_current()

    def _on_waiting_changed(self) -> None:
        self._chat_list.show_waiting(self.chats)
        self.changed.emit()
