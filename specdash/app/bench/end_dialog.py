"""The dialog at the end of a depth sweep: keep the fastest stable configuration, restore the user's command, or -
when configurations were unstable - measure those again (``m``).

Returns (``dismiss``) one of :data:`KEEP`, :data:`RESTORE`, :data:`MORE` or :data:`LEAVE` (``n``/``esc`` on a
dialog that has nothing to keep: the server stays as it is). The choices it offers and the text come from the bench
pane (:meth:`specdash.app.bench.pane.BenchPane._ask_keep_or_restore`); this widget only asks.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Static

from specdash.app.keymap import key_for
from specdash.app.modals.confirm import SCROLL_BINDINGS, ConfirmScreen

KEEP, RESTORE, MORE, LEAVE = "keep", "restore", "more", "leave"


class SweepEndScreen(ConfirmScreen, inherit_bindings=False):
    """``question`` (title), ``details`` (markup), and up to three choices: ``yes`` = (label, answer) on ``y``,
    ``no`` = (label, answer) on ``n`` / ``esc``, ``more`` = label of "measure the unstable configurations again"
    on ``m`` (None: not offered). A :class:`ConfirmScreen` in looks and keys (its style, ``confirm.yes`` /
    ``confirm.no`` ids, so a remapped y/n applies here too) whose answer is one of the strings above, not a bool."""

    BINDINGS = [
        Binding("y", "answer('yes')", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer('no')", "No", id="confirm.no"),
        Binding("m", "answer('more')", "Measure again", id="sweep.measure_again"),
        *SCROLL_BINDINGS,
    ]

    def __init__(self, question: str, details: str, yes: tuple[str, str], no: tuple[str, str],
                 more: str | None = None) -> None:
        super().__init__(question, details, yes[0], no[0])
        self.yes, self.no, self.more = yes, no, more

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self.question, id="confirm-title")
            with VerticalScroll(id="confirm-scroll"):  # a long body scrolls; the buttons stay on screen
                yield Static(self.details, id="confirm-body")
            with Horizontal(id="confirm-buttons"):
                if self.more:
                    yield Button(f"{self.more} ({key_for(self, 'sweep.measure_again')})", variant="warning",
                                 id="more")
                yield Button(f"{self.yes[0]} ({key_for(self, 'confirm.yes')})", variant="error", id="yes")
                yield Button(f"{self.no[0]} ({key_for(self, 'confirm.no')})", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_answer(str(event.button.id))

    def _measures_again(self) -> bool:
        """``m`` answers: a "Measure again" button of its own, or the yes choice when that is measuring again."""
        return self.more is not None or self.yes[1] == MORE

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self._measures_again() if parameters == ("more",) else True

    def action_answer(self, which: str) -> None:  # type: ignore[override]  # answers are strings here
        if which == "more":
            if self._measures_again():
                self.dismiss(MORE)  # type: ignore[arg-type]
            return
        self.dismiss(self.yes[1] if which == "yes" else self.no[1])  # type: ignore[arg-type]
