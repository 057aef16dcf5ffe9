"""Where the document sits in the view: a reading column of at most `COLUMN_PX`, centred;
following a growing reply's end unless the user scrolled up; a message's time on hover.

The vertical scroll bar is always there, disabled (no handle drawn) while there is nothing to
scroll: a bar that appeared when a reply first outgrew the view narrowed the viewport, and Qt
laid out the whole document again and repainted all of it, 6-10 ms of the window's thread
in that frame, the costliest of a reply (1.6 ms for any other; issue 16).

A mixin of `Transcript` (desktop/widgets/transcript.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QHelpEvent, QTextCursor, QTextDocument
from PySide6.QtWidgets import QScrollBar, QToolTip, QWidget

# The reading column: lines of at most this width, centred, and a margin at least this.
COLUMN_PX = 780
SIDE_PX = 12
# Within this distance of the end, the view counts as at the end and follows a reply.
FOLLOW_SLACK_PX = 80


class TranscriptViewport:
    _at_end: bool
    _scrolled_up: bool  # the user's scroll up is under way (its valueChanged to come)

    if TYPE_CHECKING:  # QTextBrowser's (a stub here would hide them)

        def document(self) -> QTextDocument: ...

        def viewport(self) -> QWidget: ...

        def verticalScrollBar(self) -> QScrollBar: ...

        def cursorForPosition(self, pos: object) -> QTextCursor: ...

        def setVerticalScrollBarPolicy(self, policy: Qt.ScrollBarPolicy) -> None: ...

    def _keep_scroll_bar(self) -> None:
        """The vertical scroll bar always there (once, at construction)."""
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.verticalScrollBar().setEnabled(False)

    def _fit_column(self) -> None:
        """Lines no longer than `COLUMN_PX`, the column centred in a wide window."""
        side = max(SIDE_PX, (self.viewport().width() - COLUMN_PX) // 2)
        root = self.document().rootFrame()
        frame = root.frameFormat()
        if frame.leftMargin() != side or frame.rightMargin() != side:
            frame.setLeftMargin(side)
            frame.setRightMargin(side)
            root.setFrameFormat(frame)

    def _show_tooltip(self, event: QEvent) -> bool:
        """A message's time, on its name (the `title` of its header): True if shown."""
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self.cursorForPosition(event.pos()).charFormat().toolTip()
            if tip:
                QToolTip.showText(event.globalPos(), tip, self.viewport())
                return True
        return False

    def _keep_at_bottom(self) -> None:
        """Follow the growing end, unless the user scrolled up to read."""
        if self._at_end:
            # The scroll bar, not the text cursor: a search's selection stays where it is.
            bar = self.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _follow_from_now(self) -> None:
        """A conversation drawn anew, or a turn begun: the view follows its end (whatever the
        chat shown before was scrolled to; a scroll bar that did not move says nothing)."""
        self._at_end = True
        self._scrolled_up = False

    def _on_scroll_action(self, _action: int) -> None:
        """The user scrolls (the wheel, keys, the bar): the new position is known, not yet
        the value."""
        bar = self.verticalScrollBar()
        self._scrolled_up = bar.sliderPosition() < bar.value()

    def _on_scrolled(self, value: int) -> None:
        if self._scrolled_up:
            # Up by the user, however little (a wheel's notch is less than the slack):
            # reading, until they scroll back into the slack.
            self._scrolled_up = False
            self._at_end = False
            return
        # Whether the view is at the end is known from where it was last scrolled to, not
        # from where it is after an update: an update taller than the slack would otherwise
        # read as the user having scrolled up, and the view would stop following.
        self._at_end = value >= self.verticalScrollBar().maximum() - FOLLOW_SLACK_PX

    def _on_scroll_range_changed(self, _minimum: int, maximum: int) -> None:
        bar = self.verticalScrollBar()
        if bar.isEnabled() != (maximum > 0):
            bar.setEnabled(maximum > 0)  # no handle while there is nothing to scroll
        # The document grew (it is laid out after an update, not always during it): a view
        # at the end stays there.
        if self._at_end:
            self.verticalScrollBar().setValue(maximum)
