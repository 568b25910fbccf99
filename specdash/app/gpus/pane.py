"""GpuPane: per-GPU memory/utilisation, the classified GPU processes, tagging and safe kill.

Data flow: a Textual worker runs :class:`specdash.gpu.sampler.GpuSampler` on the host, joins each snapshot with
the host's ``ps`` table (:func:`specdash.gpu.inspect.inspect_host`) and renders the resulting view. ``K`` kills
the focused or tagged rows through :func:`specdash.gpu.kill.safe_kill` after a confirmation modal; ``--readonly``
is checked inside the action and again in the kill worker.
"""

from __future__ import annotations

import asyncio
import contextlib

from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.coordinate import Coordinate
from textual.css.query import NoMatches
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from specdash.app.gpus.kill_modal import KillConfirmScreen
from specdash.app.gpus.render import CLASS_VARIABLE, devices_markup, summary_markup
from specdash.app.keymap import key_for
from specdash.app.readonly_keys import hidden, refusal_text
from specdash.app.styles import load_tcss
from specdash.gpu.classify import ClassifiedProcess
from specdash.gpu.container import ContainerInfo, detect_container
from specdash.gpu.inspect import GpuView, build_view, inspect_host
from specdash.gpu.kill import KillReport, refusal, safe_kill
from specdash.gpu.model import GpuSnapshot
from specdash.gpu.proctable import current_user
from specdash.gpu.sampler import make_sampler
from specdash.hosts.base import ConnState, Host, HostError
from specdash.text.display import markup


def _gpu_cell(proc: ClassifiedProcess) -> str:
    if proc.source != "driver":
        return "?" if proc.source == "device files" else "-"
    return "?" if proc.gpu_index is None else str(proc.gpu_index)


def _mib_cell(proc: ClassifiedProcess) -> str:
    if proc.source != "driver":
        return "?" if proc.source == "device files" else "-"
    return "[N/A]" if proc.used_mib is None else str(proc.used_mib)


_COLUMNS = (("", "tag"), ("PID", "pid"), ("GPU", "gpu"), ("MiB", "mib"), ("Class", "class"), ("User", "user"),
            ("PPID", "ppid"), ("Command", "command"))


class GpuPane(Widget, can_focus=False):
    """The GPUs/processes pane for ``host``, sampling every ``interval_s`` seconds.

    ``readonly`` disables killing. ``source`` forces the sampler (``"nvidia-smi"`` / ``"nvml"``; None = NVML on
    this machine when it starts, nvidia-smi otherwise). ``grace_s`` is the SIGTERM -> SIGKILL delay.
    Public state: ``view`` (last :class:`~specdash.gpu.inspect.GpuView` or None), ``tagged`` (set of PIDs),
    ``last_report`` (last :class:`~specdash.gpu.kill.KillReport`). Posts :class:`GpuPane.KillFinished` and, after
    every sample, :class:`GpuPane.Sampled` (the session recorder listens).

    ``detect_container=False`` skips looking for a container (its note depends on the machine; snapshot tests).
    ``sample=False`` (replay): the pane never samples its host; the app feeds recorded samples through
    :meth:`show_recorded` and clears it with :meth:`clear`.
    """

    DEFAULT_CSS = load_tcss(__file__)
    BINDINGS = [
        Binding("space", "tag", "Tag", id="gpus.tag"),
        Binding("K", "kill", "Kill tagged/focused", id="gpus.kill"),
        Binding("escape", "untag_all", "Untag all", show=False, id="gpus.untag"),
    ]

    class KillFinished(Message):
        """A kill finished: ``report`` (:class:`~specdash.gpu.kill.KillReport`)."""

        def __init__(self, report: KillReport) -> None:
            super().__init__()
            self.report = report

    class Sampled(Message):
        """A live sample was rendered: ``view`` (:class:`~specdash.gpu.inspect.GpuView`)."""

        def __init__(self, view: GpuView) -> None:
            super().__init__()
            self.view = view

    def __init__(self, host: Host, interval_s: float = 2.0, readonly: bool = False, *, source: str | None = None,
                 grace_s: float = 10.0, sample: bool = True, detect_container: bool = True, name: str | None = None,
                 id: str | None = None, classes: str | None = None, sample_on_mount: bool = True) -> None:
        """``sample``: sample the host (False: a replay shows recorded samples). ``sample_on_mount``: start
        sampling when mounted; False: when :meth:`start_sampling` is called (the console starts it once the log's
        first lines are painted, so the host commands of the first sample do not delay them)."""
        super().__init__(name=name, id=id, classes=classes)
        self.host = host
        self.interval_s = interval_s
        self.readonly = readonly
        self.source = source
        self.grace_s = grace_s
        self.sample = sample
        self.sample_on_mount = sample_on_mount
        self._sampling = False
        self.detect_container = detect_container
        self.view: GpuView | None = None
        self.tagged: set[int] = set()
        self.last_report: KillReport | None = None
        self.user: str | None = None
        self.container: ContainerInfo | None = None
        self._server_pgids: frozenset[int] = frozenset()
        #: put before the border title, e.g. ``"F5 "`` (the app's key to focus the pane)
        self.title_prefix = ""
        self._killing = False
        # a kill's result keeps the status line until the user presses a key or clicks in the pane: the table
        # refills after the kill (the killed rows go, the cursor lands on another row) and the row explanation must
        # not replace the result then, however long the user takes to read it
        self._holding_result = False

    # -- layout -----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield Static("GPUs — " + self.host.name, id="gpu-title")
        # the GPU lines and notes scroll on their own when long, so the process table keeps rows (a short terminal)
        with VerticalScroll(id="gpu-text", can_focus=False):
            yield Static(devices_markup(None), id="gpu-devices")
            yield Static("", id="gpu-summary")
        table: DataTable = DataTable(id="gpu-processes", cursor_type="row", zebra_stripes=False)
        for label, key in _COLUMNS:
            table.add_column(label, key=key)
        yield table
        yield Static("", id="gpu-status")

    def on_mount(self) -> None:
        # "(read-only)", not "[read-only]": a border title is markup, where the brackets made a style tag (unseen)
        self.border_title = self.title_prefix + "GPUs & processes" + (" (read-only)" if self.readonly else "")
        if not self.sample:
            self._set_status("replay: showing recorded GPU samples")
        elif self.sample_on_mount:
            self.start_sampling()

    def start_sampling(self) -> None:
        """Start sampling the host (once; nothing for a pane that shows recorded samples or is not mounted)."""
        if self.sample and not self._sampling and self.is_attached:
            self._sampling = True
            self.run_sampler()

    def focus(self, scroll_visible: bool = True) -> GpuPane:
        """Focus the process table (the pane itself takes no focus)."""
        self.query_one(DataTable).focus(scroll_visible)
        return self

    # -- public API for the app -------------------------------------------------------------------
    def set_server_pgids(self, pgids: set[int] | frozenset[int]) -> None:
        """Tell the pane which process groups belong to the live server (classified ``server``); re-renders."""
        self._server_pgids = frozenset(pgids)
        if self.view is not None:
            v = self.view
            self._show(build_view(v.snapshot, v.table, v.user, self._server_pgids, holders=v.holders,
                                  holders_error=v.holders_error, container=v.container))

    def show_recorded(self, snapshot: GpuSnapshot, classes: dict[int, tuple[str | None, str | None, str | None]],
                      parents: dict[int, tuple[int | None, int | None]] | None = None) -> None:
        """Render a recorded sample (replay): ``snapshot`` as recorded and ``classes`` PID -> (class, user, reason)
        as classified live (not re-classified: the recording has no process table), ``parents`` PID -> (PPID,
        PGID) as recorded (``-`` where not recorded). A PID without a recorded class shows as ``unknown``."""
        from specdash.gpu.attribution import beyond_baseline, unattributed_mib
        from specdash.gpu.classify import UNKNOWN, summarize
        from specdash.gpu.proctable import ProcessTable

        processes = []
        for proc in snapshot.processes:
            klass, user, reason = classes.get(proc.pid, (None, None, None))
            ppid, pgid = (parents or {}).get(proc.pid, (None, None))
            processes.append(ClassifiedProcess(
                pid=proc.pid, gpu_index=proc.gpu_index, gpu_uuid=proc.gpu_uuid, used_mib=proc.used_mib,
                name=proc.name, command=proc.name, user=user, ppid=ppid, pgid=pgid, stat=None, start_ticks=None,
                process_class=klass if klass in CLASS_VARIABLE else UNKNOWN, reason=reason or ""))
        unattributed = {} if snapshot.error else unattributed_mib(snapshot)
        unaccounted = beyond_baseline(unattributed)
        summary = snapshot.error or summarize(processes, unaccounted)
        self._show(GpuView(snapshot=snapshot, table=ProcessTable(rows={}), processes=tuple(processes),
                           summary=summary, user="", unattributed_mib=unattributed, unaccounted_mib=unaccounted))

    def show_note(self, text: str) -> None:
        """Show ``text`` on the pane's status line (e.g. a recorded kill's outcome in a replay)."""
        self._set_status(text)

    def clear(self) -> None:
        """Forget the sample on screen (replay rewind): no devices, no rows."""
        self.view = None
        self.tagged.clear()
        self.query_one("#gpu-devices", Static).update(devices_markup(None))
        self.query_one("#gpu-summary", Static).update("")
        self.query_one(DataTable).clear()
        self._set_status("")

    @property
    def processes(self) -> tuple[ClassifiedProcess, ...]:
        """The classified processes on screen (one per PID and GPU)."""
        return self.view.processes if self.view is not None else ()

    # -- sampling ---------------------------------------------------------------------------------
    @work(exclusive=True, group="gpu-sampler")
    async def run_sampler(self) -> None:
        """Wait for the host connection, then sample, classify and render until the pane is removed."""
        while self.host.status.state is not ConnState.CONNECTED:
            self._set_status(f"waiting for {self.host.name}: {self.host.status.describe()}")
            await asyncio.sleep(0.2)
        self._set_status("")
        if self.detect_container:
            self.container = await detect_container(self.host)
        while True:
            sampler = make_sampler(self.host, self.interval_s, source=self.source)
            try:
                async with contextlib.aclosing(sampler.snapshots()) as snapshots:
                    async for snapshot in snapshots:
                        if self.user is None and not snapshot.error:
                            try:
                                self.user = await current_user(self.host)
                            except HostError as exc:
                                self._set_status(f"cannot tell the remote user: {exc}")
                        pgids = self._server_pgids
                        try:
                            view = await inspect_host(self.host, snapshot, self.user or "", pgids,
                                                      container=self.container)
                        except HostError as exc:
                            self._set_status(f"process table unavailable: {exc}")
                            continue
                        if self._server_pgids != pgids:
                            # the server crashed or stopped (or one was launched) while this sample was inspected:
                            # classify it with the groups as they are now, never show a crashed server's orphans
                            # as "server" until the next sample
                            view = build_view(view.snapshot, view.table, view.user, self._server_pgids,
                                              holders=view.holders, holders_error=view.holders_error,
                                              container=view.container)
                        self._show(view)
                        self.post_message(self.Sampled(view))
                return
            except Exception as exc:  # noqa: BLE001 - a GPU pane problem must not take the console down
                self._set_status(f"GPU sampling failed: {exc}; retrying")
                await asyncio.sleep(max(self.interval_s, 1.0))
            finally:
                await sampler.close()

    def _show(self, view: GpuView) -> None:
        self.view = view
        if not self.is_attached or not self.children:
            return  # the app is shutting down: nothing to render into
        try:
            self._render_view(view)
        except NoMatches:  # the app is tearing the pane down (a stop's last poll can land here): nothing to render
            pass

    def _render_view(self, view: GpuView) -> None:
        self.query_one("#gpu-devices", Static).update(devices_markup(view.snapshot, self.size.width))
        no_gpu = bool(view.snapshot.error)
        summary = "" if no_gpu else summary_markup(view.summary, view.processes,
                                                   [view.short_note] if view.short_note else [],
                                                   bool(view.unaccounted_mib))
        self.query_one("#gpu-summary", Static).update(summary)
        self.query_one("#gpu-summary", Static).display = not no_gpu
        self.query_one(DataTable).display = not no_gpu  # no GPU is a state, not an empty table
        self.set_class(no_gpu, "-no-gpu")
        self._fill_table()

    def on_resize(self) -> None:
        """Re-render the GPU lines for the new width (short form below ``COMPACT_BELOW`` columns)."""
        if self.view is not None and self.children:
            self.query_one("#gpu-devices", Static).update(devices_markup(self.view.snapshot, self.size.width))

    def _row_key(self, proc: ClassifiedProcess) -> str:
        return f"{proc.pid}:{proc.gpu_index}"

    def _fill_table(self) -> None:
        table = self.query_one(DataTable)
        colours = self.app.get_css_variables()
        cursor_key = None
        if table.row_count and 0 <= table.cursor_row < table.row_count:
            cursor_key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        alive = {p.pid for p in self.processes}
        self.tagged &= alive
        table.clear()
        for proc in self.processes:
            style = colours.get(CLASS_VARIABLE[proc.process_class], "")
            table.add_row(
                Text("✓" if proc.pid in self.tagged else " ", style=colours.get("accent", "")),
                str(proc.pid),
                _gpu_cell(proc),
                _mib_cell(proc),
                Text(proc.process_class, style=style),
                proc.user or "?",
                "-" if proc.ppid is None else str(proc.ppid),
                Text((proc.command or proc.name)[:160]),
                key=self._row_key(proc),
            )
        if cursor_key is not None:
            try:
                table.move_cursor(row=table.get_row_index(cursor_key))
            except Exception:  # the row is gone
                pass
        self._refresh_row_status()

    def crashed_server_of(self, chosen: list[ClassifiedProcess]) -> list[ClassifiedProcess]:
        """``chosen`` plus every other member of the crashed servers (orphans' process groups) among them that may
        be cleaned: killing part of a crashed server leaves the rest (the detokenizer, ...) behind."""
        groups = {p.crashed_group for p in chosen if p.crashed_group is not None and p.cleanable}
        pids = {p.pid for p in chosen}
        extra = [p for p in self.processes if p.crashed_group in groups and p.cleanable and p.pid not in pids]
        return chosen + extra

    def _set_status(self, text: str, *, row: bool = False) -> None:
        #: the focused row's reason while the status line shows it (``row``), else None (another message)
        self._row_reason = text if row else None
        try:
            self.query_one("#gpu-status", Static).update(text)
        except Exception:  # not composed yet / already removed
            pass

    def _focused_process(self) -> ClassifiedProcess | None:
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(Coordinate(table.cursor_row, 0)).row_key.value
        return next((p for p in self.processes if self._row_key(p) == key), None)

    def cursor_row_on_screen(self) -> bool:
        """True when the process table's cursor row is drawn on screen (not clipped by a short pane, scrolled
        away, or covered): the row ``K`` acts on when nothing is tagged."""
        table = self.query_one(DataTable)
        if not table.row_count or not table.display:
            return False
        y = table.region.y + table.header_height + table.cursor_row - round(table.scroll_y)
        x = table.region.x + 1
        try:
            widget, _ = self.screen.get_widget_at(x, y)
        except Exception:  # noqa: BLE001 - the coordinate is off screen: not visible
            return False
        return widget is table

    def on_key(self, event: events.Key) -> None:
        """A key in the pane (before it moves the cursor): a kill's result gives way to the rows' explanations."""
        self._holding_result = False

    def on_click(self, event: events.Click) -> None:
        self._holding_result = False

    @on(DataTable.RowHighlighted)
    def _on_row(self, event: DataTable.RowHighlighted) -> None:
        proc = self._focused_process()
        if self._holding_result:
            return  # a refill moved the cursor, not the user: the kill's result stays
        if proc is not None and not self._killing:
            self._set_status(proc.reason, row=True)

    def _refresh_row_status(self) -> None:
        """After the rows changed: a status line showing a row's reason shows the focused row's current one, or
        nothing when no row is left (a stopped server's rows are gone: no "running server" line stays behind)."""
        shown = getattr(self, "_row_reason", None)
        if shown is None or self._killing:
            return
        proc = self._focused_process()
        reason = proc.reason if proc is not None else ""
        if reason != shown:
            self._set_status(reason, row=bool(reason))

    # -- actions ----------------------------------------------------------------------------------
    def action_tag(self) -> None:
        """Toggle the tag of the focused process (all its GPU rows)."""
        proc = self._focused_process()
        if proc is None:
            return
        self.tagged ^= {proc.pid}
        row = self.query_one(DataTable).cursor_row
        self._fill_table()
        table = self.query_one(DataTable)
        if row + 1 < table.row_count:
            table.move_cursor(row=row + 1)

    def action_untag_all(self) -> None:
        """Clear every tag."""
        self.tagged.clear()
        self._fill_table()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only: the mutating keys are hidden from the footer and help (:mod:`specdash.app.readonly_keys`)."""
        return False if hidden(self.readonly, action) else True

    def action_kill(self) -> None:
        """Kill the tagged processes (or the focused one) after confirmation. Disabled by ``--readonly``."""
        if self.readonly:
            self.notify(refusal_text("killing"), severity="warning")
            return
        if self._killing:
            self.notify("A kill is already in progress.", severity="warning")
            return
        if self.tagged:
            chosen = [p for p in self.processes if p.pid in self.tagged]
        else:
            if self._focused_process() is not None and not self.cursor_row_on_screen():
                # never ask about a row the user cannot see (a short terminal, the notes above fill the pane)
                self.notify("The focused process row is not on screen (too few rows for the process table): make "
                            f"the terminal taller, then press {key_for(self, 'gpus.kill')} again.", severity="warning")
                return
            focused = self._focused_process()
            chosen = [p for p in self.processes if focused is not None and p.pid == focused.pid]
        if not chosen:
            self.notify("Nothing to kill: focus a process row or tag rows with space.", severity="warning")
            return
        chosen = self.crashed_server_of(chosen)
        user = self.user or ""
        allowed = [p for p in chosen if refusal(p, user) is None]
        refused = [(p, refusal(p, user) or "") for p in chosen if refusal(p, user) is not None]
        if not allowed:
            self.notify("; ".join(f"PID {p.pid}: {markup(why)}" for p, why in refused[:3]), title="Not killed",
                        severity="warning")
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.kill(allowed)

        table = self.view.table if self.view is not None else None
        groups = {pgid: [r.pid for r in table.group(pgid) if not r.is_zombie]
                  for pgid in {p.pgid for p in allowed if p.pgid is not None and p.pgid > 1}} if table else {}
        self.app.push_screen(KillConfirmScreen(allowed, refused, self.grace_s, {g: m for g, m in groups.items() if m},
                                               self._server_pgids), confirmed)

    @work(exclusive=True, group="gpu-kill")
    async def kill(self, targets: list[ClassifiedProcess]) -> KillReport | None:
        """Run :func:`safe_kill` on ``targets`` and show progress and the before/after MiB."""
        if self.readonly:  # checked again here: no path around --readonly
            self.notify(refusal_text("killing"), severity="warning")
            return None
        self._killing = True
        sampler = make_sampler(self.host, self.interval_s, source=self.source)
        try:
            report = await safe_kill(self.host, targets, self.user or "", sampler.sample_once, grace_s=self.grace_s,
                                     on_progress=self._set_status)
        except HostError as exc:
            self._set_status(f"kill interrupted: {exc}")
            self.notify(str(exc), title="Kill interrupted", severity="error")
            return None
        finally:
            self._killing = False
            await sampler.close()
        self.last_report = report
        self.tagged -= {o.pid for o in report.outcomes}
        self._set_status(report.summary())
        self._holding_result = True
        self.notify(report.summary(), title="GPU memory released" if report.released else "GPU memory NOT released",
                    severity="information" if report.released else "error", timeout=10)
        self.post_message(self.KillFinished(report))
        return report
