"""BenchPane: one key benchmarks the running server (``b``), one key runs the depth sweep (``S``), ``esc`` cancels;
``i`` imports a local file of pasted benchmark output (:func:`specdash.bench.imported.find_results`) and shows its
results beside the runs.

Thin widget over the core: :class:`specdash.bench.runner.BenchRunner` for a run and
:class:`specdash.bench.sweep.SweepRunner` for a sweep; every figure shown is computed there. Results are stored
as JSON under the state dir (:mod:`specdash.bench.store`) and announced with :class:`BenchPane.RunFinished` /
:class:`BenchPane.SweepFinished` so the app can record them in the session.

Hooks the app sets (all optional): ``server_url`` (where ``b`` sends the workload), ``restart_server`` (async
``callable(command) -> url`` from the server lifecycle) and ``base_command`` with ``flag_release`` (the builder's
launch command and the flag-table release whose argparse reads it; set together by :meth:`BenchPane.use_command`)
- both needed by ``S``; ``effective_config`` (dict stored with every result: GPU name, SGLang version ...);
``log_accept_samples`` (zero-argument callable returning the "accept len" values the log parser saw, used when no
better accept-length source exists); ``sweep_definition``; ``bench_overrides`` (BenchSettings fields, e.g.
``{"num_requests": 8}``).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Input, ProgressBar, Select, Static
from textual_plotext import PlotextPlot

from specdash.app.bench.render import (
    RUN_COLUMNS,
    SWEEP_COLUMNS,
    imported_row,
    progress_line,
    run_row,
    sweep_notes,
    sweep_row,
)
from specdash.app.data_table import MeasuredDataTable
from specdash.app.keymap import key_for
from specdash.app.readonly_keys import hidden
from specdash.app.styles import load_tcss
from specdash.bench.acceptance import low_acceptance_warning
from specdash.bench.results import RunResult
from specdash.bench.runner import BenchError, BenchProgress, BenchRunner, BenchSettings
from specdash.bench.sweep import SweepDefinition, SweepError, SweepEvent, SweepResult, SweepRunner, default_sweep
from specdash.bench.workload import APIS, Workload, load_preset, preset_names
from specdash.session.events import SWEEP_KEPT, SWEEP_RESTORED
from specdash.text.display import clean, markup

#: Largest file ``o`` opens (a pasted benchmark output is a few KB).
OPEN_MAX_BYTES = 8_000_000

#: Order the runs table shows :data:`RUN_COLUMNS` in: the figures a user compares (throughput, accept length)
#: first, so they are on screen at 80 columns; the timestamp and the note last (left/right scroll to them).
RUN_ORDER = (1, 4, 9, 3, 5, 6, 7, 8, 2, 0, 10)


#: Order the sweep table shows :data:`SWEEP_COLUMNS` in: name, throughput, speedup, accept length and the status
#: word fit 80 columns; the spread, shape and latencies follow (left/right), all of them on screen at 160 columns.
#: Each row's note (why it is unstable, within noise ...) is a line under the table, never a cell.
SWEEP_ORDER = (0, 2, 4, 5, 10, 3, 1, 6, 7, 8, 9)


def shown(row: tuple[str, ...]) -> tuple[str, ...]:
    """``row`` (in :data:`RUN_COLUMNS` order) in the order the runs table shows it (:data:`RUN_ORDER`)."""
    return tuple(row[i] for i in RUN_ORDER)


#: Cells one ``left``/``right`` press scrolls the tables by (about two columns).
TABLE_SCROLL_CELLS = 20


def chart_floor(values: list[float]) -> float:
    """Lower end of the sweep chart's y axis for bars of ``values`` (output tokens/s): 0 when they differ by half
    or more, else the smallest minus as much again as the values' range, so a 1-5 % difference between configs is
    seen as a difference in bar height (with an axis from 0 every bar of a few rows is full height). 0 for no
    values."""
    if not values:
        return 0.0
    low, high = min(values), max(values)
    if low <= 0 or high >= 2 * low:
        return 0.0
    span = high - low if high > low else high * 0.05
    return max(0.0, low - span)


def axis_ticks(low: float, high: float, target: int = 4) -> list[float]:
    """Evenly spaced y-axis labels for ``low..high``: multiples of a round step (1, 2 or 5 times a power of ten)
    inside the range, about ``target`` of them (at least 2 where the range allows). Letting the chart library pick
    them gave uneven labels on a short chart (one dropped where two met on a row).

    >>> axis_ticks(1724.5, 1782.3)
    [1740.0, 1760.0, 1780.0]
    >>> axis_ticks(983, 2100)
    [1000.0, 1500.0, 2000.0]
    """
    import math

    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    rough = (high - low) / max(target, 1)
    power = 10 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough)
    first = math.ceil(low / step) * step
    ticks: list[float] = []
    value = first
    while value <= high + step * 1e-9 and len(ticks) < 50:
        ticks.append(float(round(value, 10)))
        value = first + step * len(ticks)
    return ticks


SWEEP_NEEDS_LIFECYCLE = (
    "the depth sweep needs the server lifecycle: launch the server from the builder so specdash can restart it "
    "per configuration"
)
#: why S is off while the followed server was not launched from this console (b still benchmarks it); the keys
#: filled in as bound (``sweep``, ``launch``)
FOLLOWED_NO_SWEEP = ("{sweep} is off: the depth sweep restarts the server for each configuration, and the followed "
                     "server was not launched from this console ({launch} launches one from the builder's command)")


class BenchPane(Widget, can_focus=True):
    """The benchmarks pane. ``server_url``: base URL of the running server (None until one is known);
    ``readonly``: ``b`` and ``S`` are refused (replays, --readonly).

    Public state: ``results`` (list of :class:`RunResult`, oldest first), ``sweep_result`` (last
    :class:`SweepResult` or None), ``running`` (a run or sweep is in progress), ``status`` (the status line text).
    """

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [
        Binding("b", "run_bench", "Benchmark", id="bench.run"),
        Binding("S", "sweep", "Depth sweep", id="bench.sweep"),
        Binding("escape", "cancel", "Cancel run", id="bench.cancel"),
        # i (import), not o: the app's o goes back to the --log file everywhere, this pane included
        Binding("i", "open_results", "Import results file", id="bench.open"),
        # the pane scrolls: at 80x24 the sweep table, chart and recommendation are below the runs table
        Binding("down", "scroll_down", "Scroll down", show=False, id="bench.scroll_down"),
        Binding("up", "scroll_up", "Scroll up", show=False, id="bench.scroll_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="bench.page_down"),
        Binding("pageup", "page_up", "Page up", show=False, id="bench.page_up"),
        Binding("right", "runs_right", "Tables right", show=False, id="bench.tables_right"),
        Binding("left", "runs_left", "Tables left", show=False, id="bench.tables_left"),
    ]

    class RunFinished(Message):
        """A benchmark run ended (also when cancelled: ``result.partial``); ``path``: stored JSON or None."""

        def __init__(self, result: RunResult, path: Any) -> None:
            super().__init__()
            self.result, self.path = result, path

    class SweepFinished(Message):
        """A sweep ended (finished or cancelled); ``path``: its checkpoint/result JSON or None."""

        def __init__(self, result: SweepResult, path: Any) -> None:
            super().__init__()
            self.result, self.path = result, path

    class SweepChoice(Message):
        """At the end of a sweep the user chose the launch command to go on with: ``command`` (the fastest
        configuration's, or the original), ``kept`` (True: the fastest configuration was kept), ``restarted``
        (False: the server already runs ``command``, no restart follows). The app puts it in the builder (and records
        a kept configuration that was not restarted: its server is the user's from now on)."""

        def __init__(self, command: str, kept: bool, restarted: bool = True) -> None:
            super().__init__()
            self.command, self.kept, self.restarted = command, kept, restarted

    def __init__(
        self,
        server_url: str | None = None,
        readonly: bool = False,
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.server_url = server_url
        self.readonly = readonly
        self.restart_server: Callable[..., Awaitable[str]] | None = None
        self.base_command: str | None = None
        self.flag_release: str | None = None
        self.effective_config: dict[str, Any] = {}
        self.log_accept_samples: Callable[[], Any] | None = None
        #: seconds the followed server's last start-up took (None: unknown), for the sweep's plan
        self.startup_seconds: Callable[[], float | None] | None = None
        self._startup_seen_s: float | None = None  # the last start-up timed (see _startup_estimate)
        self.sweep_definition: SweepDefinition = default_sweep()
        self.bench_overrides: dict[str, Any] = {}
        self.save_results = True
        self.workloads: dict[str, Workload] = {n: load_preset(n) for n in preset_names()}
        self.results: list[RunResult] = []
        self.imported: list[Any] = []  # ImportedRecord opened with ``o``, in the order shown
        self.sweep_result: SweepResult | None = None
        self.status = ""
        self._runner: BenchRunner | None = None
        self._sweep: SweepRunner | None = None
        self._sweep_at: tuple[int, int, str] | None = None  # (config k, of n, name) while a sweep runs
        self._serving: str | None = None  # the command the sweep last (re)started the server with
        #: launch command -> the sweep configuration it is (every command a sweep started the server with)
        self._sweep_configs: dict[str, str] = {}
        self._followed_elsewhere = ""
        self._sweep_to_view = False  # a sweep was shown while the pane was hidden: scroll to it when shown
        self._tables_ready = False  # on_mount has run: show_run/show_sweep render at once, else on_mount does
        self.border_title = "Benchmarks"

    # -- layout ---------------------------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        names = list(self.workloads)
        first = "short-chat" if "short-chat" in names else names[0]
        with Horizontal(id="bench-controls"):
            yield Select([(f"workload: {n}", n) for n in names], value=first, allow_blank=False, id="bench-workload")
            yield Select(
                [("API: workload's", "")] + [(f"API: {a}", a) for a in APIS],
                value="",
                allow_blank=False,
                id="bench-api",
            )
        yield Static("", id="bench-status")
        yield Input(placeholder="file of pasted benchmark output (enter opens it, esc closes)", id="bench-open-path")
        yield ProgressBar(total=1, show_eta=False, id="bench-progress")
        yield Static("", id="bench-live")
        yield MeasuredDataTable(id="bench-runs", cursor_type="row", zebra_stripes=True)
        yield MeasuredDataTable(id="bench-sweep", cursor_type="row", zebra_stripes=True)
        yield Static("", id="bench-sweep-notes")  # each row's note (a long one would push the figures off screen)
        yield PlotextPlot(id="bench-chart")
        yield Static("", id="bench-recommendation")
        yield Static("", id="bench-warnings")

    def on_mount(self) -> None:
        self.query_one("#bench-open-path", Input).display = False
        self.query_one("#bench-runs", DataTable).add_columns(*(RUN_COLUMNS[i] for i in RUN_ORDER))
        self.query_one("#bench-sweep", DataTable).add_columns(*(SWEEP_COLUMNS[i] for i in SWEEP_ORDER))
        self._draw_chart(None)
        for result in self.results:  # shown before the pane was mounted (the app mounts it after the first frame)
            self._add_run_row(result)
        if self.sweep_result is not None:
            self._render_sweep(self.sweep_result)
        self._set_status(self._idle_status())
        self._tables_ready = True

    # -- helpers --------------------------------------------------------------------------------------------------

    @property
    def server_url(self) -> str | None:
        """Base URL of the server that ``b`` benchmarks (None until one is known)."""
        return self._server_url

    @server_url.setter
    def server_url(self, url: str | None) -> None:
        self._server_url = url
        if self.is_mounted and getattr(self, "_runner", None) is None and getattr(self, "_sweep", None) is None:
            self._set_status(self._idle_status())

    @property
    def followed_elsewhere(self) -> str:
        """Why ``b`` and ``S`` have no server while the app follows one not launched from this console (the app
        sets it, plain text), else ""."""
        return self._followed_elsewhere

    @followed_elsewhere.setter
    def followed_elsewhere(self, text: str) -> None:
        self._followed_elsewhere = text
        self.server_url = self._server_url  # re-say the idle status

    def sweep_config_of(self, command: str | None) -> str | None:
        """The name of the sweep configuration ``command`` is (a sweep started the server with it), else None."""
        return self._sweep_configs.get(command or "")

    @property
    def server_address(self) -> str | None:
        """``host:port`` the server itself listens on, when the app knows it (None: only ``server_url`` is known).
        Through an SSH tunnel ``server_url`` is a local port; the pane names the server, then the tunnel."""
        return getattr(self, "_server_address", None)

    @server_address.setter
    def server_address(self, address: str | None) -> None:
        self._server_address = address
        self.server_url = self._server_url  # re-say the idle status

    def server_text(self) -> str:
        """``"gpu-box:30000 (via tunnel :41234)"`` through a forwarded port, else the URL; "" when none is known."""
        from urllib.parse import urlsplit

        url, address = self._server_url, self.server_address
        if not url:
            return ""
        if not address:
            return url
        try:
            local_port = urlsplit(url).port
        except ValueError:
            local_port = None
        if local_port is None or address.endswith(f":{local_port}"):
            return url  # no tunnel: the URL is the server's own
        return f"{address} (via tunnel :{local_port})"

    @property
    def running(self) -> bool:
        """A benchmark run or a sweep is in progress."""
        return self._runner is not None or self._sweep is not None

    def _idle_status(self) -> str:
        if self.readonly:
            return "read-only: benchmarks and sweeps are off"
        if not self.server_url:
            if self.followed_elsewhere:
                return self.followed_elsewhere
            return (f"no server yet - {self._key('run')} benchmarks it once one is running; {self._key('sweep')} "
                    "runs the depth sweep")
        if self.followed_elsewhere:
            return (f"server {self.server_text()}, followed (not launched from here) - {self._key('run')}: benchmark "
                    f"the selected workload; {self._key('sweep')} is off (it restarts the server)")
        note = getattr(self, "_cancel_note", "")  # a cancelled sweep stays said when the server changes under it
        return (f"{note}server {self.server_text()} - {self._key('run')}: benchmark the selected workload, "
                f"{self._key('sweep')}: depth sweep")

    def _key(self, action: str) -> str:
        """The key bound (config.yaml's keymap, else the default) to the bench pane's ``action`` (``run``, ``sweep``,
        ``cancel``) or to the server's (``launch``, ``restart``): what a hint tells the user to press."""
        return key_for(self, f"server.{action}" if action in ("launch", "restart") else f"bench.{action}")

    def _set_status(self, text: str, error: bool = False) -> None:
        self.status = text
        try:
            widget = self.query_one("#bench-status", Static)
        except NoMatches:  # the pane is being torn down (a sweep or run worker ending as the app closes)
            return
        widget.update(text)
        widget.set_class(error, "-error")

    def selected_workload(self) -> Workload:
        """The workload chosen in the selector."""
        value = self.query_one("#bench-workload", Select).value
        return self.workloads[str(value)]

    def settings_for(self, url: str) -> BenchSettings:
        """BenchSettings for ``url`` from the selected workload, API and ``bench_overrides``."""
        api = self.query_one("#bench-api", Select).value
        overrides = dict(self.bench_overrides)
        if api:
            overrides.setdefault("api", api)
        return BenchSettings.from_workload(url, self.selected_workload(), **overrides)

    def _on_progress(self, progress: BenchProgress) -> None:
        bar = self.query_one("#bench-progress", ProgressBar)
        bar.update(total=progress.total, progress=progress.done)
        self.query_one("#bench-live", Static).update(progress_line(progress))

    # -- actions --------------------------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only: the mutating keys are hidden from the footer and help (:mod:`specdash.app.readonly_keys`), and
        so is esc's "Cancel run" (no run can start here)."""
        return False if hidden(self.readonly, action) or (self.readonly and action == "cancel") else True

    def action_run_bench(self) -> None:
        """``b``: benchmark the selected workload against ``server_url``."""
        self._cancel_note = ""
        if self.readonly:
            self._set_status("read-only: benchmarks are off in this session", error=True)
            return
        if self.running:
            self._set_status(f"a benchmark is already running ({self._key('cancel')} cancels it)", error=True)
            return
        if not self.server_url:
            self._set_status(self.followed_elsewhere or "no server to benchmark: connect to or launch a server first",
                             error=True)
            return
        try:
            settings = self.settings_for(self.server_url)
        except ValueError as exc:
            self._set_status(f"cannot benchmark: {exc}", error=True)
            return
        self._runner = BenchRunner(
            settings,
            effective_config=self.effective_config,
            log_accept_samples=self.log_accept_samples,
            on_progress=self._on_progress,
        )
        self._set_status(f"benchmarking {self.server_text()} with {settings.workload.name} ({settings.api}) "
                         f"- {self._key('cancel')} cancels")
        self.query_one("#bench-progress", ProgressBar).update(total=settings.num_requests, progress=0)
        self._bench_worker(self._runner)

    def action_open_results(self) -> None:
        """``i``: ask for a local file of pasted benchmark output (shown beside the runs once opened)."""
        box = self.query_one("#bench-open-path", Input)
        box.display = True
        box.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "bench-open-path":
            return
        event.stop()
        self.open_results(event.value.strip())

    def open_results(self, path: str) -> None:
        """Read ``path`` (a local text file, at most :data:`OPEN_MAX_BYTES`), add every benchmark result found in
        it to the runs table (``imported``) and say what was found, or why nothing was, in the status line."""
        from pathlib import Path

        from specdash.bench.imported import find_results

        box = self.query_one("#bench-open-path", Input)
        if not path:
            self._set_status("no file named", error=True)
            return
        try:
            with open(Path(path).expanduser(), "rb") as handle:
                data = handle.read(OPEN_MAX_BYTES + 1)
        except OSError as exc:
            self._set_status(f"cannot read {path}: {exc.strerror or exc}", error=True)
            return
        if len(data) > OPEN_MAX_BYTES:
            self._set_status(f"{path} is over {OPEN_MAX_BYTES // 1_000_000} MB: not a pasted benchmark output",
                             error=True)
            return
        results = find_results(data.decode("utf-8", "replace"))
        records = [r for res in results for r in res.records if r.metrics]
        if not records:
            self._set_status(f"{path}: no benchmark output found", error=True)
            return
        box.display = False
        self.focus()
        table = self.query_one("#bench-runs", DataTable)
        for record in records:
            self.imported.append(record)
            table.add_row(*shown(imported_row(record)))
        table.move_cursor(row=table.row_count - 1)
        tools = ", ".join(sorted({r.tool for r in records}))
        findings = [f"line {f.line}: {f.message}" for r in records for f in r.findings]
        self._set_status(f"opened {path}: {len(records)} result{'s' if len(records) != 1 else ''} ({tools})"
                         + (f", {len(findings)} finding{'s' if len(findings) != 1 else ''} below" if findings else ""))
        self.query_one("#bench-warnings", Static).update(markup("\n".join(findings)))

    def action_cancel(self) -> None:
        """``esc``: cancel the running benchmark or sweep (what finished is kept, marked partial); closes the file
        box of ``o`` when it is open."""
        box = self.query_one("#bench-open-path", Input)
        if box.display and self._runner is None and self._sweep is None:
            box.display = False
            self.focus()
            return
        if self._runner is not None:
            self._runner.cancel()
            self._set_status("cancelling - finished requests are kept")
        if self._sweep is not None:
            self._sweep.cancel()
            self._set_status("cancelling the sweep - measured points are kept in its checkpoint")

    def attach(self, *, restart_server: Callable[..., Awaitable[str]] | None,
               log_accept_samples: Callable[[], Any] | None, command: str | None,
               flag_release: str | None, startup_seconds: Callable[[], float | None] | None = None) -> None:
        """Attach the pane to the session in one call: the server lifecycle's ``restart_server(command[, action])
        -> url`` (for ``S``; ``action`` only for the restart at a sweep's end, see :meth:`_restart`), the log's
        accept-length samples, and the builder's command with its flag-table release (see :meth:`use_command`).
        The server's URL follows separately, once a server is up (``server_url``)."""
        self.restart_server = restart_server
        self.log_accept_samples = log_accept_samples
        self.startup_seconds = startup_seconds
        self.use_command(command, flag_release)

    def set_gpu_name(self, name: str | None) -> None:
        """The GPU the followed server runs on as the sampler shows it (:func:`specdash.bench.gpu_name.run_gpu_name`;
        None: not known), stored with the next results as ``effective_config["gpu_name"]``."""
        if name:
            self.effective_config["gpu_name"] = name
        else:
            self.effective_config.pop("gpu_name", None)

    def use_command(self, command: str | None, flag_release: str | None) -> None:
        """The launch command the sweep edits per point (the builder's, ``None``: none yet) and the flag-table
        release whose argparse reads it (``None``: the newest)."""
        self.base_command = command or None
        self.flag_release = flag_release

    def action_sweep(self) -> None:
        """``S``: run (or resume) the depth sweep through the injected server lifecycle."""
        self._cancel_note = ""
        if self.readonly:
            self._set_status("read-only: the sweep is off in this session", error=True)
            return
        if self.running:
            self._set_status(f"a benchmark is already running ({self._key('cancel')} cancels it)", error=True)
            return
        if self.followed_elsewhere:  # never a restart of (or a second server next to) one started elsewhere
            self._set_status(FOLLOWED_NO_SWEEP.format(sweep=self._key("sweep"), launch=self._key("launch"))
                             if self.server_url else self.followed_elsewhere, error=True)
            return
        if self.restart_server is None or not self.base_command:
            self._set_status(SWEEP_NEEDS_LIFECYCLE, error=True)
            return
        try:
            settings = self.settings_for(self.server_url or "http://127.0.0.1")
            sweep = SweepRunner(
                self.sweep_definition,
                self.base_command,
                self._restart,
                settings,
                effective_config=self.effective_config,
                on_event=self._on_sweep_event,
                log_accept_samples=self.log_accept_samples,
                flag_release=self.flag_release,
            )
        except (ValueError, SweepError) as exc:
            self._set_status(f"cannot start the sweep: {exc}", error=True)
            return
        from specdash.bench.store import results_dir

        sweep.checkpoint = results_dir() / f"sweep-{sweep.key}.json"
        from specdash.app.modals.confirm import ConfirmScreen
        from specdash.bench.sweep_plan import plan_sweep

        plan = plan_sweep(sweep, self._startup_estimate())
        details = _lines("\n".join(plan.lines()))

        def answered(yes: bool | None) -> None:
            if not yes:
                self._set_status("depth sweep not started")
                return
            if self.running:
                self._set_status(f"a benchmark is already running ({self._key('cancel')} cancels it)", error=True)
                return
            self._sweep = sweep
            self._set_status(f"depth sweep: {len(self.sweep_definition.points)} configs - "
                             f"{self._key('cancel')} cancels")
            self._sweep_worker(sweep)

        self.app.push_screen(ConfirmScreen("Run the depth sweep?", details, "Run the sweep"), answered)

    @property
    def sweeping(self) -> tuple[int, int, str] | None:
        """While a sweep runs: (configuration k, of n, its name; k is 1-based); else None."""
        if self._sweep is None:
            return None
        return self._sweep_at or (1, len(self._sweep.definition.points), self._sweep.definition.points[0].name)

    def cancel_sweep(self) -> None:
        """Cancel a running sweep at once, also in the middle of a restart (the points measured so far stay in
        its checkpoint; the server that is up stays up)."""
        if self._sweep is None:
            return
        partial = self._sweep.partial
        self._sweep.cancel()
        self.workers.cancel_group(self, "bench")
        if partial is not None and self._tables_ready:  # the line under the chart said "sweep running"
            self.query_one("#bench-recommendation", Static).update(
                self._unfinished_line(dataclasses.replace(partial, cancelled=True)))
        self._sweep = None
        self._sweep_at = None
        self._cancel_note = ("depth sweep cancelled - measured configs are kept in its checkpoint; "
                             f"{self._key('sweep')} resumes it. ")
        self._set_status(self._cancel_note.strip())

    def hold_sweep(self) -> None:
        """Hold the running sweep while the user answers a question about the server (:meth:`SweepRunner.hold`);
        the status says so."""
        if self._sweep is not None:
            self._sweep.hold()
            self._before_hold = self.status
            self._set_status(f"{self.status.split(' - ')[0]} - held: nothing new starts until you answer")

    def release_sweep(self) -> None:
        """Let a held sweep go on (the question was answered no)."""
        if self._sweep is not None and self._sweep.held:
            self._sweep.release()
            if "held" in self.status:
                self._set_status(self._before_hold)

    _before_hold = ""

    async def _restart(self, command: str, action: str | None = None) -> str:
        """Restart through the lifecycle's hook; ``action`` (the end of a sweep: ``SWEEP_KEPT`` / ``SWEEP_RESTORED``
        of :mod:`specdash.session.events`) is what the session records instead of a sweep configuration's restart."""
        assert self.restart_server is not None
        if self._sweep is not None and self._sweep_at is not None:
            self._sweep_configs[command] = self._sweep_at[2]
        url = await (self.restart_server(command, action) if action else self.restart_server(command))
        self.server_url = url
        self._serving = command
        return url

    def _startup_estimate(self) -> float | None:
        """Seconds the followed server's start-up took (``startup_seconds``), else the last start-up this pane saw
        timed (a sweep's restarts, a server since stopped), else None."""
        startup_s = None
        if self.startup_seconds is not None:
            try:
                startup_s = self.startup_seconds()
            except Exception:  # noqa: BLE001 - an estimate, never a reason not to sweep
                startup_s = None
        if startup_s is not None:
            self._startup_seen_s = startup_s
        return startup_s if startup_s is not None else self._startup_seen_s

    def _on_sweep_event(self, event: SweepEvent) -> None:
        if event.bench is not None:
            self._on_progress(event.bench)
            return
        self._startup_estimate()  # a restart of the sweep is timed by its log: kept for a resume's estimate
        k = min(event.index + 1, event.total)
        if event.phase == "held":  # waiting for the answer to x/r's question (esc answers it, it does not cancel
            # the sweep); what is named next has not started
            self._set_status(f"depth sweep held until you answer; next: {event.message} (config {k} of "
                             f"{event.total})")
            return
        if event.point:
            self._sweep_at = (k, event.total, event.point)
        sweep = self._sweep
        if event.phase == "point-done" and sweep is not None and sweep.partial is not None and self._tables_ready:
            self._render_sweep(sweep.partial, partial=True)  # each configuration's row as soon as it is measured
        if event.message:
            self._set_status(f"sweep config {k} of {event.total}: {event.message} - {self._key('cancel')} cancels")

    def action_runs_right(self) -> None:
        """``right``: scroll the runs and sweep tables right (their later columns at narrow widths)."""
        for table in self.query(DataTable):
            table.scroll_relative(x=TABLE_SCROLL_CELLS, animate=False)

    def action_runs_left(self) -> None:
        """``left``: scroll the runs and sweep tables back left."""
        for table in self.query(DataTable):
            table.scroll_relative(x=-TABLE_SCROLL_CELLS, animate=False)

    # -- workers --------------------------------------------------------------------------------------------------

    @work(exclusive=True, group="bench")
    async def _bench_worker(self, runner: BenchRunner) -> None:
        try:
            result = await runner.run()
        except BenchError as exc:
            self._set_status(str(exc), error=True)
            return
        finally:
            self._runner = None
        path = await self._save(result)
        self.show_run(result)
        verb = "cancelled - partial result kept" if result.partial else "done"
        where = f", saved {path}" if path else ""
        self._set_status(f"benchmark {verb}: {result.output_tokens_per_s:.1f} output tokens/s{where}")
        self.post_message(self.RunFinished(result, path))

    async def _save(self, result: RunResult):
        if not self.save_results:
            return None
        from specdash.bench.store import save_run

        try:
            return await asyncio.to_thread(save_run, result)
        except OSError as exc:
            self.notify(f"benchmark result not saved: {markup(exc)}", severity="warning")
            return None

    @work(exclusive=True, group="bench")
    async def _sweep_worker(self, sweep: SweepRunner) -> None:
        try:
            result = await sweep.run()
        except (SweepError, OSError) as exc:
            self._set_status(f"sweep stopped: {exc}", error=True)
            return
        finally:
            self._sweep = None
        self.show_sweep(result)
        state = f"cancelled - resume with {self._key('sweep')}" if result.cancelled else "done"
        name = self.sweep_config_of(self._serving)
        serving = (f"; the server now runs sweep config {name}, not the builder's command ({self._key('restart')} "
                   "restarts it with the builder's command)") if name else ""
        measured = sum(1 for p in result.points if p.done)
        failed = ", ".join(p.point.name for p in result.points if p.status == "failed")
        self._set_status(f"depth sweep {state}: {measured} configuration{'' if measured == 1 else 's'} "
                         f"measured{f' ({failed} failed)' if failed else ''}{serving}; "
                         f"saved {sweep.checkpoint}")
        self.post_message(self.SweepFinished(result, sweep.checkpoint))
        if not result.cancelled:
            self._sweep_settings = sweep.settings  # a measure-again resumes the same sweep (same key)
            self._ask_keep_or_restore(result, sweep.base_command)

    def _ask_keep_or_restore(self, result: SweepResult, original: str) -> None:
        """End of a sweep: keep the fastest stable configuration (by mean output tokens/s, ties to the smaller depth:
        :meth:`SweepResult.recommendation`) or restore the original command; either way the server ends up running
        the chosen command and the builder shows it (:class:`SweepChoice`). When configurations were unstable the
        dialog says which and by how much, why they cannot be kept (nor a speedup over an unstable baseline be
        trusted), and offers ``m``: measure them again (:meth:`measure_unstable_again`)."""
        from specdash.app.bench.end_dialog import KEEP, LEAVE, MORE, RESTORE, SweepEndScreen

        rec = result.recommendation()
        best = result.point(rec.name) if rec.name else None
        serving = self._serving or ""
        unstable = result.unstable()
        more = None
        unstable_text = ""
        # the keys the dialog's buttons name
        yes, no, again = (key_for(self, i) for i in ("confirm.yes", "confirm.no", "sweep.measure_again"))
        if unstable:
            names = ", ".join(p.point.name for p in unstable)
            more = "Measure again"
            base = result.baseline()
            repeats = result.definition.repeats
            unstable_text = (
                "\nUnstable, never kept (repeats disagree; usually other work on the machine):\n"
                + "\n".join(f"  {line}" for line in result.unstable_lines())
                + ("\nThe baseline is unstable: no speedup over it can be trusted yet."
                   if base is not None and base.status == "unstable" and best is not None and best is not base else "")
                + f"\nMeasure again ({yes if best is None or not best.command else again}): {repeats} new "
                  f"repeat{'s' if repeats != 1 else ''} of {names} (a restart each); the stable configurations are "
                  "kept, not measured again.")

        failed = [p for p in result.points if p.status == "failed"]
        if failed:  # a config whose server did not start was never measured: said, with its error
            why = [f"{p.point.name} ({clean(p.error, max_chars=200) if p.error else 'no reason recorded'})"
                   for p in failed]
            unstable_text = ("\nFailed, not measured: " + "; ".join(why)
                + ("\nThe baseline (no speculation) was not measured: whether speculation is faster here is unknown."
                   if any(not p.point.speculative for p in failed) else "") + unstable_text)

        def chose(answer: Any) -> None:  # the SweepEndScreen answer (a string)
            if answer == MORE:
                self.measure_unstable_again(result, original)
            elif answer == KEEP and best is not None:
                self._go_on_with(best.command, True)
            elif answer == RESTORE:
                self._go_on_with(original, False)
            else:
                self._set_status("the server keeps running the sweep's last configuration")

        if best is None or not best.command:
            if unstable:  # the question asked is the one y answers; n restores, as in the keep dialog
                details = (f"No configuration to keep ({rec.reason}).{unstable_text}\n"
                           f"Restore ({no}): the server is restarted with your command.")
                self.app.push_screen(SweepEndScreen("Nothing to keep yet: measure the unstable configurations again?",
                                                    _lines(details), ("Measure again", MORE),
                                                    ("Restore my command", RESTORE)), chose)
                return
            details = (f"No configuration to keep ({rec.reason}).\n"
                       f"Restore ({yes}): the server is restarted with your command. "
                       f"No ({no}): the server keeps running the sweep's last configuration.")
            self.app.push_screen(SweepEndScreen("Restore your launch command?", _lines(details),
                                                ("Restore my command", RESTORE), ("No", LEAVE)), chose)
            return
        details = (f"By output tokens/s: {rec.reason}.{unstable_text}\n"
                   f"Keep ({yes}): the builder gets {best.point.name}'s command"
                   f"{'' if best.command == serving else ' and the server is restarted with it'}.\n"
                   f"Restore ({no}): the server is restarted with your original command.")
        self.app.push_screen(SweepEndScreen(f"Keep {best.point.name}?", _lines(details),
                                            (f"Keep {best.point.name}", KEEP), ("Restore my command", RESTORE), more),
                             chose)

    def measure_unstable_again(self, result: SweepResult, original: str) -> None:
        """Resume the sweep's checkpoint measuring its unstable configurations again (``m`` at the end of a
        sweep; :class:`SweepRunner` ``remeasure``); at its end the keep/restore dialog asks again."""
        names = tuple(p.point.name for p in result.unstable())
        if not names or self.running:
            return
        try:
            sweep = SweepRunner(
                result.definition, original, self._restart,
                getattr(self, "_sweep_settings", None) or self.settings_for(self.server_url or "http://127.0.0.1"),
                effective_config=self.effective_config, on_event=self._on_sweep_event,
                log_accept_samples=self.log_accept_samples, flag_release=self.flag_release, remeasure=names)
        except (ValueError, SweepError) as exc:
            self._set_status(f"cannot measure again: {exc}", error=True)
            return
        from specdash.bench.store import results_dir

        sweep.checkpoint = results_dir() / f"sweep-{sweep.key}.json"
        self._sweep = sweep
        self._set_status(f"depth sweep: measuring {', '.join(names)} again - {self._key('cancel')} cancels")
        self._sweep_worker(sweep)

    def _go_on_with(self, command: str, kept: bool) -> None:
        restart = command != self._serving and self.restart_server is not None
        self.post_message(self.SweepChoice(command, kept, restart))
        if restart:
            self._restart_worker(command, SWEEP_KEPT if kept else SWEEP_RESTORED)
        else:
            self._set_status("the server runs the configuration you kept")

    @work(exclusive=True, group="bench")
    async def _restart_worker(self, command: str, action: str) -> None:
        self._set_status("restarting the server with the chosen command")
        try:
            await self._restart(command, action)
        except Exception as exc:  # noqa: BLE001 - shown; the user can restart with r
            self._set_status(f"restart failed: {exc}", error=True)
            return
        self._set_status("the server runs the chosen command")

    # -- display --------------------------------------------------------------------------------------------------

    def show_run(self, result: RunResult) -> None:
        """Add ``result`` to the results table (also for results read from a session or a file); a draft that
        barely helps is called out under the tables. Before the pane is mounted it is kept and shown on mount."""
        self.results.append(result)
        if self._tables_ready:
            self._add_run_row(result)

    def _add_run_row(self, result: RunResult) -> None:
        table = self.query_one("#bench-runs", DataTable)
        table.add_row(*shown(run_row(result)))
        table.move_cursor(row=table.row_count - 1)
        warning = low_acceptance_warning(
            result.accept_length, result.effective_config.get("speculative_num_draft_tokens")
        )
        self.query_one("#bench-warnings", Static).update(warning or "")

    def add_workload(self, workload: Workload, select: bool = True) -> None:
        """Offer ``workload`` (e.g. from :func:`specdash.bench.workload.load_file`) in the selector."""
        self.workloads[workload.name] = workload
        selector = self.query_one("#bench-workload", Select)
        selector.set_options([(f"workload: {n}", n) for n in self.workloads])
        if select:
            selector.value = workload.name

    def show_sweep(self, result: SweepResult) -> None:
        """Show a sweep: table (speedups computed against its baseline), chart, recommendation and warnings. Before
        the pane is mounted it is kept and shown on mount."""
        self.sweep_result = result
        if self._tables_ready:
            self._render_sweep(result)

    def _render_sweep(self, result: SweepResult, partial: bool = False) -> None:
        """Table, chart, recommendation and warnings of ``result``; ``partial``: a sweep still running (its
        measured configurations so far: no recommendation yet, the view is not scrolled under the user)."""
        table = self.query_one("#bench-sweep", DataTable)
        table.clear()
        rows = result.rows()
        for row in rows:
            row_cells = sweep_row(row)
            table.add_row(*(row_cells[i] for i in SWEEP_ORDER))
        self.query_one("#bench-sweep-notes", Static).update(_lines("\n".join(sweep_notes(rows))))
        self._draw_chart(result)
        widget = self.query_one("#bench-recommendation", Static)
        total = len(result.definition.points)
        if partial:
            widget.update(self._unfinished_line(result, running=True))
            widget.set_class(False, "-none")
            return
        if not result.finished and len(result.points) < total:  # cancelled: no recommendation from a part
            widget.update(self._unfinished_line(result))
            widget.set_class(True, "-none")
        else:
            rec = result.recommendation()
            # a point no faster than the baseline beyond noise is named, never "recommended" as a speedup
            widget.update(f"no recommendation: {rec.reason}" if rec.name is None else
                          rec.reason if rec.beats_baseline is False else f"recommended: {rec.reason}")
            widget.set_class(rec.name is None, "-none")
        warnings = sorted({p.warning for p in result.points if p.warning})
        self.query_one("#bench-warnings", Static).update("\n".join(warnings))
        # a small screen shows the runs above: bring the sweep's table (and what follows it) into view, now or
        # when the pane is next shown (a sweep read from a session while another tab is in front)
        self._sweep_to_view = True
        self.call_after_refresh(self._bring_sweep_into_view)

    def _unfinished_line(self, result: SweepResult, running: bool = False) -> str:
        """The line under the chart for a sweep not (yet) finished: ``sweep running: 1 of 4 configs measured so
        far (baseline failed) - ...``, ``sweep cancelled: 1 of 4 configs measured (baseline failed) - no
        recommendation from part of a sweep; S resumes it`` (``sweep not finished`` when it was not cancelled,
        e.g. read from a session). A failed configuration is named as failed, never counted as measured; the key
        is the one bound."""
        total = len(result.definition.points)
        measured = sum(1 for p in result.points if p.done)
        failed = [p.point.name for p in result.points if p.status == "failed"]
        count = f"{measured} of {total} config{'' if total == 1 else 's'} measured{' so far' if running else ''}" + (
            f" ({', '.join(failed)} failed)" if failed else "")
        if running:
            return f"sweep running: {count} - the recommendation comes when it ends"
        return (f"sweep {'cancelled' if result.cancelled else 'not finished'}: {count} - no recommendation from "
                f"part of a sweep; {self._key('sweep')} resumes it")

    def _bring_sweep_into_view(self) -> None:
        if not self._sweep_to_view or not self.region.height:
            return  # not shown: on_show does it
        self._sweep_to_view = False
        self.scroll_to_widget(self.query_one("#bench-sweep", DataTable), animate=False, top=True)

    def on_show(self) -> None:
        if self._sweep_to_view:
            self.call_after_refresh(self._bring_sweep_into_view)

    def _draw_chart(self, result: SweepResult | None) -> None:
        chart = self.query_one("#bench-chart", PlotextPlot)
        plt = chart.plt
        plt.clear_data()
        plt.clear_figure()
        measured = [(p.point.name, p.throughput.mean) for p in result.points if p.throughput] if result else []
        floor = chart_floor([mean for _, mean in measured])
        plt.title("output tokens/s per config" + (f" (axis from {floor:.0f}, not 0)" if floor else ""))
        if measured:
            plt.bar([name for name, _ in measured], [mean for _, mean in measured], minimum=floor)
            top = max(mean for _, mean in measured)
            ceiling = top + (top - floor) * 0.1
            plt.ylim(floor, ceiling)
            ticks = axis_ticks(floor, ceiling)
            plt.yticks(ticks, [f"{t:g}" for t in ticks])
        chart.refresh()


def _lines(text: str) -> str:
    """``text`` as markup that keeps its line breaks (:func:`markup` with ``newlines=True``)."""
    return markup(text, newlines=True)


__all__ = ["BenchPane"]
