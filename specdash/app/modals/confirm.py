"""A yes/no confirmation modal for actions that stop or kill something."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from specdash.app.keymap import key_for
from specdash.app.styles import load_tcss

#: pgup/pgdn/up/down scroll a long body (the buttons keep the focus); shared with the dialogs built on this one.
SCROLL_BINDINGS = [
    Binding("pagedown", "scroll_body('page_down')", show=False),
    Binding("pageup", "scroll_body('page_up')", show=False),
    Binding("down", "scroll_body('down')", show=False),
    Binding("up", "scroll_body('up')", show=False),
]


class ConfirmScreen(ModalScreen[bool]):
    """Asks ``question`` (title) with ``details`` (markup) below; ``y`` confirms, ``n``/``esc`` cancels (the buttons
    name the keys bound to ``confirm.yes`` / ``confirm.no``, config.yaml's keymap applied)."""

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
        *SCROLL_BINDINGS,
    ]

    def __init__(self, question: str, details: str = "", yes_label: str = "Yes", no_label: str = "Cancel") -> None:
        super().__init__()
        self.question, self.details, self.yes_label, self.no_label = question, details, yes_label, no_label

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog"):
            yield Static(self.question, id="confirm-title")
            if self.details:
                with VerticalScroll(id="confirm-scroll"):  # a long body scrolls; the buttons stay on screen
                    yield Static(self.details, id="confirm-body")
            with Horizontal(id="confirm-buttons"):
                yield Button(f"{self.yes_label} ({key_for(self, 'confirm.yes')})", variant="error", id="yes")
                yield Button(f"{self.no_label} ({key_for(self, 'confirm.no')})", id="no")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)

    def action_scroll_body(self, how: str) -> None:
        """Scroll the body (``page_down``, ``page_up``, ``down``, ``up``); nothing when there is none."""
        for body in self.query("#confirm-scroll"):
            getattr(body, f"scroll_{how}")(animate=False)
