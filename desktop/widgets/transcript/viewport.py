"""Where the document sits in the view: a reading column of at most `COLUMN_PX`, centred;
following a growing reply's end unless the user scrolled up; a message's time on hover.

The vertical scroll bar is always there, disabled (no handle drawn) while there is nothing to
scroll: a bar that appeared when a reply first outgrew the view narrowed the viewport, and Qt
laid out the whole document again and repainted all of it, 6-10 ms of the window's thread
in that frame, the costliest of a reply (1.6 ms for any other; issue 16).
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QTextEdit, QToolTip

# The reading column: lines of at most this width, centred, and a margin at least this.
COLUMN_PX = 780
SIDE_PX = 12
# Within this distance of the end, the view counts as at the end and follows a reply.
FOLLOW_SLACK_PX = 80


def fit_column(view: QTextEdit) -> None:
    """Lines no longer than `COLUMN_PX`, the column centred in a wide window."""
    side = max(SIDE_PX, (view.viewport().width() - COLUMN_PX) // 2)
    root = view.document().rootFrame()
    frame = root.frameFormat()
    if frame.leftMargin() != side or frame.rightMargin() != side:
        frame.setLeftMargin(side)
        frame.setRightMargin(side)
        root.setFrameFormat(frame)


def show_tooltip(view: QTextEdit, event: QEvent) -> bool:
    """A message's time, on its name (the `title` of its header): True if shown."""
    if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
        tip = view.cursorForPosition(event.pos()).charFormat().toolTip()
        if tip:
            QToolTip.showText(event.globalPos(), tip, view.viewport())
            return True
    return False


class Following(QObject):
    """Whether the view follows the end of the document (a growing reply), and keeping it
    there. Owns the view's vertical scroll bar (always there: see above)."""

    def __init__(self, view: QTextEdit) -> None:
        super().__init__(view)
        self._bar = view.verticalScrollBar()
        self.at_end = True
        self._scrolled_up = False  # the user's scroll up is under way (its valueChanged to come)
        view.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self._bar.setEnabled(False)
        self._bar.actionTriggered.connect(self._on_bar_action_triggered)
        self._bar.valueChanged.connect(self._on_bar_value_changed)
        self._bar.rangeChanged.connect(self._on_bar_range_changed)

    def keep_at_bottom(self) -> None:
        """Follow the growing end, unless the user scrolled up to read."""
        if self.at_end:
            # The scroll bar, not the text cursor: a search's selection stays where it is.
            self._bar.setValue(self._bar.maximum())

    def follow_from_now(self) -> None:
        """A conversation drawn anew, or a turn begun: the view follows its end (whatever the
        chat shown before was scrolled to; a scroll bar that did not move says nothing)."""
        self.at_end = True
        self._scrolled_up = False

    def _on_bar_action_triggered(self, _action: int) -> None:
        """The user scrolls (the wheel, keys, the bar): the new position is known, not yet
        the value."""
        self._scrolled_up = self._bar.sliderPosition() < self._bar.value()

    def _on_bar_value_changed(self, value: int) -> None:
        if self._scrolled_up:
            # Up by the user, however little (a wheel's notch is less than the slack):
            # reading, until they scroll back into the slack.
            self._scrolled_up = False
            self.at_end = False
            return
        # Whether the view is at the end is known from where it was last scrolled to, not
        # from where it is after an update: an update taller than the slack would otherwise
        # read as the user having scrolled up, and the view would stop following.
        self.at_end = value >= self._bar.maximum() - FOLLOW_SLACK_PX

    def _on_bar_range_changed(self, _minimum: int, maximum: int) -> None:
        if self._bar.isEnabled() != (maximum > 0):
            self._bar.setEnabled(maximum > 0)  # no handle while there is nothing to scroll
        # The document grew (it is laid out after an update, not always during it): a view
        # at the end stays there.
        if self.at_end:
            self._bar.setValue(maximum)
