"""Modal that lists the SGLang servers running on the host and lets the user pick the one to follow.

Shown when more than one of the login user's servers runs and neither ``--log``, ``--pid`` nor ``--server-port``
said which: specdash never follows one picked by itself. Each row is a
:class:`specdash.logs.discover.ServerSummary` (PID, port, model, start time, user, log file). The key hint
(``enter follows · esc follows none``) sits under the title, so it is on screen at 80x24 too.

The list stays true while it is open: every :data:`RECHECK_S` seconds, and again when the user picks a row, the
servers are checked (``alive``: the PIDs of the given processes still running the same command line, e.g.
:func:`specdash.logs.discover.still_running`); a server that has exited is marked ``exited`` and can no longer be
picked, never followed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from specdash.app.styles import load_tcss
from specdash.text.display import markup

#: seconds between two liveness checks of the listed servers while the chooser is open
RECHECK_S = 2.0
#: the key hint under the title
HINT = "enter follows the highlighted server · esc follows none"

AliveCheck = Callable[[list], Awaitable[set[int]]]


class ServerChooserScreen(ModalScreen[int | None]):
    """Dismisses with the chosen server's PID (enter on a row whose server still runs), or None (escape: follow
    none). ``alive`` (optional): async callable taking the listed processes
    (:class:`~specdash.logs.discover.ServerProcess`) and returning the PIDs still running; without it nothing is
    re-checked. ``exited``: the PIDs found gone so far."""

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [Binding("escape", "dismiss_none", "Follow none", id="chooser.cancel")]

    def __init__(self, host_name: str, summaries: list, alive: AliveCheck | None = None,
                 recheck_s: float = RECHECK_S) -> None:
        super().__init__()
        self.host_name = host_name
        self.summaries = summaries
        self.alive = alive
        self.recheck_s = recheck_s
        self.exited: set[int] = set()

    def _title(self) -> str:
        running = len(self.summaries) - len(self.exited)
        gone = f" ({len(self.exited)} listed have exited)" if self.exited else ""
        servers = "1 SGLang server runs" if running == 1 else f"{running} SGLang servers run"
        return f"{servers} on {markup(self.host_name)}{gone}: which one to follow?"

    def compose(self) -> ComposeResult:
        with Vertical(id="chooser-dialog"):
            yield Static(self._title(), id="chooser-title")
            yield Static(HINT, id="chooser-hint")
            yield OptionList(*[Option(markup(s.describe()), id=str(s.process.pid)) for s in self.summaries],
                             id="chooser-list")
            yield Static("connect --pid PID or --server-port PORT chooses at start", id="chooser-help")

    def on_mount(self) -> None:
        self.query_one(OptionList).focus()
        if self.alive is not None:
            self._recheck()
            self.set_interval(self.recheck_s, self._recheck)

    async def _still_running(self, procs: list) -> set[int] | None:
        """PIDs of ``procs`` still running, the others marked exited; None when the check itself failed."""
        if self.alive is None:
            return {p.pid for p in procs}
        try:
            running = await self.alive(procs)
        except Exception:  # noqa: BLE001 - the host did not answer: nothing is marked, nothing is concluded
            return None
        for proc in procs:
            if proc.pid not in running:
                self._mark_exited(proc.pid)
        return running

    def _mark_exited(self, pid: int) -> None:
        if pid in self.exited:
            return
        self.exited.add(pid)
        summary = next((s for s in self.summaries if s.process.pid == pid), None)
        if summary is None or not self.is_attached:
            return
        options = self.query_one(OptionList)
        options.replace_option_prompt(str(pid), f"exited · {markup(summary.describe())}")
        options.disable_option(str(pid))
        self.query_one("#chooser-title", Static).update(self._title())
        if len(self.exited) == len(self.summaries):
            self.query_one("#chooser-hint", Static).update("every listed server has exited · esc follows none")

    @work(group="chooser-recheck", exclusive=True)
    async def _recheck(self) -> None:
        await self._still_running([s.process for s in self.summaries if s.process.pid not in self.exited])

    @work(group="chooser-pick", exclusive=True)
    async def _pick(self, pid: int) -> None:
        summary = next((s for s in self.summaries if s.process.pid == pid), None)
        if summary is None:
            return
        running = await self._still_running([summary.process])
        if running is not None and pid in running:
            self.dismiss(pid)
        elif running is None:
            self.query_one("#chooser-hint", Static).update(f"could not check that PID {pid} still runs: enter "
                                                           "tries again · esc follows none")
        else:
            self.query_one("#chooser-hint", Static).update(f"PID {pid} has exited: pick another · esc follows none")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        pid = int(event.option.id or 0)
        if pid and pid not in self.exited:
            self._pick(pid)

    def action_dismiss_none(self) -> None:
        self.dismiss(None)
