"""Modal that lists the SGLang servers running on the host and lets the user pick the one to follow.

Shown when more than one of the login user's servers runs and neither ``--log``, ``--pid`` nor ``--server-port``
said which: specdash never follows one picked by itself. Each row is a
:class:`specdash.logs.discover.ServerSummary` (PID, port, model, start time, user, log file).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from specdash.app.styles import load_tcss
from specdash.text.display import markup


class ServerChooserScreen(ModalScreen[int | None]):
    """Dismisses with the chosen server's PID (enter on a row), or None (escape: follow none)."""

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [Binding("escape", "dismiss_none", "Follow none", id="chooser.cancel")]

    def __init__(self, host_name: str, summaries: list) -> None:
        super().__init__()
        self.host_name = host_name
        self.summaries = summaries

    def compose(self) -> ComposeResult:
        with Vertical(id="chooser-dialog"):
            yield Static(f"{len(self.summaries)} SGLang servers run on {markup(self.host_name)}: which one to follow?",
                         id="chooser-title")
            yield OptionList(*[Option(markup(s.describe()), id=str(s.process.pid)) for s in self.summaries],
                             id="chooser-list")
            yield Static("enter follows the server · esc follows none (connect --pid PID or --server-port PORT "
                         "chooses at start)", id="chooser-help")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(int(event.option.id or 0) or None)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
