"""Replay in the app: :func:`run_replay` opens the console on a :class:`~specdash.session.replay_host.ReplayHost`,
read-only, and feeds every pane from the session file through a :class:`~specdash.session.replay.ReplayPlayer`.

What goes where:

* ``log`` lines -> :meth:`LogPane.feed` (a new ``source`` resets the pane, as following a new file does live).
  Findings and metrics are re-derived by the pane's analyzer (deterministic); every recorded ``finding`` is
  checked against what the analyzer derived, and the replay bar says when they differ (another specdash
  version analysed the log differently);
* ``marker`` -> :meth:`LogPane.marker`; ``partial`` (a capture bar still being written) -> :meth:`LogPane.partial`;
* ``gpu`` -> :meth:`GpuPane.show_recorded` with the recorded classification (the GPU pane never samples the
  replay host); ``kill`` -> the GPU pane's status line;
* ``command`` -> the builder shows the command (:meth:`BuilderPane.set_command`);
* ``bench`` / ``sweep`` -> :meth:`BenchPane.show_run` / :meth:`BenchPane.show_sweep` (from the full result the
  recorder keeps in ``run`` / ``sweep``);
* ``connection`` / ``action`` -> the replay bar; a recorded tab switch (F2/F3/F4) is named there, never applied:
  which pane is on screen is the viewer's choice.

A :class:`~specdash.session.replay.Rewind` clears every pane and the notices on screen; the events that follow
rebuild them. A notice the replayed log raises (the low-acceptance pointer) is shown when playback reaches its event
at the recorded pace or by a step forward, never for the events a seek skips over (they are the past of the new
position), and once between two seeks.

Keys: ``p`` pause/resume, ``[`` / ``]`` step back/forward one event, ``{`` / ``}`` previous/next finding, ``+`` /
``-`` double/halve the speed, ``g`` seek to a time (``mm:ss``, ``hh:mm:ss`` or seconds).
"""

from __future__ import annotations

import re
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import DataTable, Input, Static

from specdash.app.lifecycle import LIFECYCLE_BINDINGS
from specdash.app.main import SpecdashApp
from specdash.app.styles import load_tcss
from specdash.logs.state import ServerState
from specdash.session.events import (
    SWEEP_KEPT,
    SWEEP_KEPT_RUNNING,
    SWEEP_RESTARTED,
    SWEEP_RESTORED,
    ActionEvent,
    BenchEvent,
    CommandEvent,
    ConnectionEvent,
    Event,
    FindingEvent,
    GpuEvent,
    KillEvent,
    LogEvent,
    MarkerEvent,
    PartialEvent,
    SweepEvent,
    gpu_snapshot_from_event,
    process_classes,
    process_parents,
)
from specdash.session.reader import SessionLog
from specdash.session.replay import ReplayPlayer, Rewind, format_clock
from specdash.text.display import clean, markup

#: Recorded binding ids that switched the visible tab; replayed as view changes.
_RECORDED_TABS = {"app.tab_log": "log", "app.tab_builder": "builder", "app.tab_bench": "bench"}
#: Speed factors ``+`` / ``-`` move between (doubling / halving).
MIN_SPEED, MAX_SPEED = 0.125, 256.0
#: The replay bar refreshes this often (seconds).
STATUS_REFRESH_S = 0.25
#: findings kept as "news" at most (each leaves the list when its notice is handled; a bound all the same)
NEWS_KEPT = 200

_CLOCK_RE = re.compile(r"^\s*(?:(\d+):)?(\d+):(\d+(?:\.\d+)?)\s*$")
_SECONDS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*s?\s*$")


def parse_seek_time(text: str) -> float:
    """Seconds from ``"mm:ss"``, ``"hh:mm:ss"``, ``"90"`` or ``"90s"``. Raises ValueError (one line) otherwise."""
    match = _CLOCK_RE.match(text)
    if match:
        hours, minutes, seconds = match.groups()
        return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)
    match = _SECONDS_RE.match(text)
    if match:
        return float(match.group(1))
    raise ValueError(f"not a time: {text!r} (use mm:ss, hh:mm:ss or seconds)")


def _finding_codes(findings: list[Any]) -> set[str]:
    return {str(getattr(f, "kind", "")) for f in findings}


class ReplayBar(Vertical):
    """Under the panes: the player status (``▶ 00:01:23 / 00:10:00  x2  event 120/3400`` + last event), the
    reader's problems and replay notices, and the seek input (hidden until ``g``)."""

    DEFAULT_CSS = load_tcss(__file__, "replay.tcss")

    def compose(self) -> ComposeResult:
        yield Static("", id="replay-status")
        yield Static("", id="replay-notes", classes="-empty")
        yield Input(placeholder="seek to (mm:ss, hh:mm:ss or seconds) — enter jumps, escape closes",
                    id="replay-seek")


def recorded_log_title(path: str | None) -> str:
    """The log pane's title for a log recorded on another machine: a path there means nothing here, so a run
    specdash launched (``…/specdash/runs/<run>/<file>``) is named by its run, any other path is marked as the
    recorded one.

    >>> recorded_log_title("/tmp/specdash-demo-27kfh3v7/state/specdash/runs/20261201-190934-38380/server.log")
    'recorded log: run 20261201-190934-38380/server.log'
    >>> recorded_log_title("/data/sglang/server.log")
    'recorded log: /data/sglang/server.log'
    """
    if not path:
        return "recorded log"
    parts = path.replace("\\", "/").split("/")
    if len(parts) >= 4 and parts[-3] == "runs" and parts[-4] == "specdash":
        return f"recorded log: run {parts[-2]}/{parts[-1]}"
    return f"recorded log: {path}"


class ReplayApp(SpecdashApp):
    """The console in replay mode: ``host`` is a ReplayHost, always read-only; the panes are fed by the player.

    Public state for tests: ``player`` (the :class:`ReplayPlayer`), ``notices`` (lines shown in the replay bar:
    the reader's problems, then finding mismatches), ``last_event`` (one line about the last event fed).
    """

    readonly_history = True

    gpu_sampling = False
    BINDINGS = [
        Binding("p", "replay_pause", "Pause/resume", id="replay.pause"),
        Binding("left_square_bracket", "replay_step(-1)", "Step back", show=False, id="replay.step_back"),
        Binding("right_square_bracket", "replay_step(1)", "Step", id="replay.step_forward"),
        Binding("right_curly_bracket", "replay_finding(1)", "Next finding", id="replay.next_finding"),
        Binding("left_curly_bracket", "replay_finding(-1)", "Prev finding", show=False,
                id="replay.previous_finding"),
        Binding("plus", "replay_speed(2.0)", "Faster", id="replay.faster"),
        Binding("minus", "replay_speed(0.5)", "Slower", show=False, id="replay.slower"),
        Binding("g", "replay_seek", "Seek", id="replay.seek"),
        # the lifecycle keys stay bound (their read-only check says why nothing happens) but leave the footer to
        # the replay keys
        *[Binding(b.key, b.action, b.description, show=False, id=b.id) for b in LIFECYCLE_BINDINGS],
    ]

    def __init__(self, session_log: SessionLog, speed: float = 1.0, *, start_paused: bool = False,
                 theme: str | None = None, player: ReplayPlayer | None = None,
                 keymap: dict[str, str] | None = None) -> None:
        from specdash.session.replay_host import ReplayHost

        first_log = next((e for e in session_log.events if isinstance(e, LogEvent) and e.source), None)
        super().__init__(ReplayHost(session_log), log_path=first_log.source if first_log else None, readonly=True,
                         theme=theme, keymap=keymap)
        self.session_log = session_log
        self.player = player or ReplayPlayer(session_log, speed, start_paused=start_paused)
        self.notices: list[str] = list(session_log.problems)
        self.last_event = ""
        self._source: str | None = first_log.source if first_log else None
        #: logs of depth sweep configurations (their servers were restarted by the sweep): no depth advice there
        self._sweep_logs = {e.log_path for e in session_log.events
                            if isinstance(e, CommandEvent) and e.action == SWEEP_RESTARTED and e.log_path}
        self._mismatched: list[str] = []
        self._recorded_connection = ""
        self._server_stopped = False
        self._replaying_event = False
        self._event_notices: set[tuple[str, str]] = set()
        #: findings the replayed log raised at the recorded pace (not skipped over by a seek): only these toast
        self._news: list[Any] = []
        self._quiet_event = False

    # -- layout -------------------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        from textual.widgets import Footer

        for widget in super().compose():
            if isinstance(widget, Footer):
                yield ReplayBar(id="replay-bar")  # above the key footer
            yield widget

    def on_mount(self) -> None:
        self.set_interval(STATUS_REFRESH_S, self._refresh_bar)
        if self.log_pane is not None:
            self.log_pane.set_title(recorded_log_title(self._source))
        header = self.session_log.header
        if header is not None and header.demo:
            # short: a toast must not cover the panes on a small terminal; the recorder's full note is in --summary
            self.notify("Recorded against the SGLang test double, not a real GPU run (the full note: specdash replay "
                        "--summary FILE).", title="Demonstration session", timeout=8)
        if self.session_log.problems:
            self.notify(f"{len(self.session_log.problems)} problem(s) reading {markup(self.session_log.path)}: see the "
                        "bottom bar", severity="warning", timeout=10)
        self._refresh_bar()

    def _on_host_state(self, status: Any) -> None:
        self.status_bar.connection = status

    def _wire_deferred_panes(self) -> None:
        """Once the builder is built (after the first frame, or at the first recorded command): judge the recorded
        commands by the recorded server's rules. Nothing is wired to a host in a replay."""
        builder = self._deferred_panes.get("builder")
        if builder is None or "builder" in self._wired:
            return
        self._wired.add("builder")
        header = self.session_log.header
        if header is not None and header.sglang_version:
            try:
                builder.set_sglang_version(str(header.sglang_version).split()[0])
            except ValueError:
                pass

    # -- the replay loop (instead of connect + follow) ----------------------------------------------------------
    @work(exclusive=True, group="session")
    async def start_session(self) -> None:
        """Mark the replay host connected, then hand every event the player yields to its pane until exit."""
        await self.host.connect()
        await self.deferred_panes_ready()  # the bench pane's show_run/show_sweep need its tables mounted
        first = next(iter(self.player.session.events), None)
        if first is not None and first.t > 1.0 and self.player.status().index == 0:
            self.player.seek(first.t - 0.5)  # skip the silence before the first event
        async for item in self.player.events():
            try:
                if isinstance(item, Rewind):
                    self.clear_notifications()  # a seek replays the notices again: no stack of old ones
                    self._event_notices.clear()
                    self.clear_panes()
                elif self.player.jumping or not isinstance(item, LogEvent) or self.log_pane is None:
                    self.apply_event(item)
                else:
                    self._apply_log_event(item, self.log_pane)
            except Exception as exc:  # noqa: BLE001 - one odd event must not end the replay
                self._add_notice(f"event at {format_clock(getattr(item, 't', 0.0))} not shown: {exc}")

    def clear_panes(self) -> None:
        """Empty every pane (replay moved backwards)."""
        log = self.log_pane
        if log is not None:
            log.reset(recorded_log_title(self.log_path))
            log.analyzer.engine.in_depth_sweep = self.log_path in self._sweep_logs
        self._source = self.log_path
        gpu = self.gpu_pane
        if gpu is not None:
            gpu.clear()
        builder = self.builder_pane
        if builder is not None:
            builder.set_command("")
        bench = self.bench_pane
        if bench is not None:
            _clear_bench(bench)
        self.status_bar.server_state = ServerState.UNKNOWN
        self.status_bar.server_detail = ""
        self._mismatched.clear()
        self._server_stopped = False
        self.last_event = ""

    def _apply_log_event(self, event: LogEvent, pane: Any) -> None:
        """:meth:`apply_event` for a log event reached at the recorded pace: the findings it raises are news (their
        notices are shown); reading ``findings`` first brings the derived ones (acceptance) up to date, so that
        those of earlier, skipped events are not counted as this event's."""
        before = {id(f) for f in pane.analyzer.findings}
        self.apply_event(event)
        if self.log_pane is pane:  # (still the same pane)
            self._news.extend(f for f in self.log_pane.analyzer.findings if id(f) not in before)
            del self._news[:-NEWS_KEPT]

    def apply_event(self, event: Event) -> None:
        """Feed one recorded event to its pane (see the module docstring)."""
        at = format_clock(event.t)
        if isinstance(event, LogEvent):
            pane = self.log_pane
            if pane is None:
                return
            if event.source and event.source != self._source:
                self._source = event.source
                pane.reset(recorded_log_title(event.source))
                pane.analyzer.engine.in_depth_sweep = event.source in self._sweep_logs
            pane.feed([text for _, text in event.lines])
        elif isinstance(event, MarkerEvent):
            self._log_marker(event.text)
        elif isinstance(event, PartialEvent):
            pane = self.log_pane
            if pane is not None:
                pane.partial(event.text)
        elif isinstance(event, FindingEvent):
            self._check_finding(event)
            self.last_event = f"{at} finding [{event.severity}] {event.message}"
        elif isinstance(event, GpuEvent):
            gpus = self.gpu_pane
            if gpus is not None:
                gpus.show_recorded(gpu_snapshot_from_event(event, event.t), process_classes(event),
                                   process_parents(event))
        elif isinstance(event, KillEvent):
            text = f"recorded kill at {at}: {event.outcome} — {event.detail}"
            if self.gpu_pane is not None:
                self.gpu_pane.show_note(text)
            self.last_event = text
        elif isinstance(event, CommandEvent):
            builder = self.builder_pane
            if builder is not None and event.command and event.command != builder.command \
                    and event.action != SWEEP_RESTARTED:  # a sweep's configuration never was the builder's command
                builder.set_command(event.command)
            if event.action in ("launched", "restarted", SWEEP_RESTARTED, SWEEP_KEPT, SWEEP_RESTORED) \
                    and event.pgid is not None:
                self._server_stopped = False
                # a new server: the previous one's state (crashed, stopped) is not this one's; its log says more
                self.status_bar.server_state = ServerState.STARTING
                self.status_bar.server_detail = f"{event.action}, PGID {event.pgid}"
            elif event.action == SWEEP_KEPT_RUNNING and event.log_path:  # the user's server from now on
                log = self.log_pane
                if log is not None and event.log_path == self._source:
                    log.analyzer.engine.in_depth_sweep = False
            elif event.action == "stopped":
                self._server_stopped = True
                self.status_bar.server_state = ServerState.STOPPED
                self.status_bar.server_detail = event.exit_reason or ""
            self.last_event = f"{at} command {event.action}: {event.command[:80]}"
        elif isinstance(event, BenchEvent):
            bench = self.bench_pane
            run = event.run
            if bench is not None and isinstance(run, dict) and run:
                from specdash.bench.results import RunResult

                bench.show_run(RunResult.from_dict(run))
            self.last_event = f"{at} benchmark {event.label or event.workload}: " \
                              f"{event.result.get('output_tokens_per_s', '?')} output tokens/s"
        elif isinstance(event, SweepEvent):
            bench = self.bench_pane
            data = event.sweep
            said = event.recommendation
            if bench is not None and isinstance(data, dict) and data:
                from specdash.bench.sweep import SweepResult

                sweep = SweepResult.from_dict(data)
                bench.show_sweep(sweep)
                said = sweep.recommendation().reason  # as the pane says it (the recorded text may be older)
            self.last_event = f"{at} depth sweep: {said}"
        elif isinstance(event, ConnectionEvent):
            self._recorded_connection = f"recorded connection: {event.state}" + (
                f" ({event.detail})" if event.detail else "")
        elif isinstance(event, ActionEvent):
            tab = _RECORDED_TABS.get(event.binding)
            if tab is not None:  # the view stays the viewer's choice: say which pane the recorded user looked at
                binding_id = event.binding
                label = self.key_label(binding_id, f"shows it — the recorded user looked at the {tab} pane")
                self.last_event = f"{at} key: {event.binding} ({label})"
            else:
                self.last_event = f"{at} key: {event.binding}"

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Textual's notify, except for a notice raised by replayed events (the low-acceptance pointer): none for an
        event a seek skipped over, and once between two seeks (a re-derived finding would stack copies)."""
        if self._replaying_event:
            if self._quiet_event:
                return  # raised by an event a seek skipped over: the past of the new position, not news
            key = (title, str(message))
            if key in self._event_notices:
                return
            self._event_notices.add(key)
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def on_log_pane_finding_added(self, message: Any) -> None:
        """The console's handling, with its notices shown once per replay (see :meth:`notify`)."""
        message.prevent_default()  # the console's handler runs here, once, not again after this one
        news = any(f is message.finding for f in self._news)
        if news:
            self._news = [f for f in self._news if f is not message.finding]
        self._replaying_event, self._quiet_event = True, not news
        try:
            super().on_log_pane_finding_added(message)
        finally:
            self._replaying_event = self._quiet_event = False

    def on_log_pane_server_state_changed(self, message: Any) -> None:
        if self._server_stopped:
            message.prevent_default()  # the recorded stop wins over what the (older) log lines said

    def _check_finding(self, event: FindingEvent) -> None:
        pane = self.log_pane
        if pane is None:
            return
        if event.code not in _finding_codes(pane.analyzer.findings):
            self._mismatched.append(event.code)
            self._add_notice(f"recorded finding {event.code!r} at {format_clock(event.t)} was not re-derived by "
                             "this specdash version's log analysis (recorded: "
                             f"{event.message[:80]})")

    def _add_notice(self, text: str) -> None:
        if text not in self.notices:
            self.notices.append(text)
            self._refresh_bar()

    # -- replay bar ----------------------------------------------------------------------------------------------
    def _refresh_bar(self) -> None:
        try:
            bar = self.query_one(ReplayBar)
            status_bar = self.status_bar
            status_widget = bar.query_one("#replay-status", Static)
            notes = bar.query_one("#replay-notes", Static)
        except NoMatches:  # not composed yet / shutting down
            return
        status = self.player.status()
        status_bar.mode = f"read-only replay  {status.describe()}"
        line = status.describe()
        if self.last_event:
            line += f"  │  {self.last_event}"
        elif self._recorded_connection:
            line += f"  │  {self._recorded_connection}"
        status_widget.update(_plain(line))
        if self.notices:
            shown = self.notices[-3:]
            more = len(self.notices) - len(shown)
            text = "\n".join(f"⚠ {n}" for n in shown) + (f"\n… and {more} more (specdash replay --summary)"
                                                         if more else "")
            notes.update(_plain(text))
        notes.set_class(not self.notices, "-empty")

    # -- actions -------------------------------------------------------------------------------------------------
    def action_replay_pause(self) -> None:
        """``p``: pause or resume."""
        self.player.toggle_pause()
        self._refresh_bar()

    def action_replay_step(self, direction: int) -> None:
        """``]`` one event forward, ``[`` one back (pauses)."""
        if direction > 0:
            event = self.player.step_forward()
            if event is None:
                self.notify("At the end of the session.", severity="warning")
        else:
            if self.player.step_back() is None:
                self.notify("At the start of the session.", severity="warning")
        self._refresh_bar()

    def action_replay_finding(self, direction: int) -> None:
        """``}`` next finding, ``{`` previous finding."""
        found = self.player.seek_next_finding() if direction > 0 else self.player.seek_previous_finding()
        if found is None and not self.player.finding_count:
            self.notify("No findings were recorded in this session.", severity="warning")
        elif found is None:
            self.notify("No more findings " + ("ahead." if direction > 0 else "before this point."),
                        severity="warning")
        else:
            self.last_event = f"{format_clock(found.t)} finding [{found.severity}] {found.message}"
        self._refresh_bar()

    def action_replay_speed(self, factor: float) -> None:
        """``+`` doubles, ``-`` halves the speed (between 1/8 and 256)."""
        speed = min(max(self.player.speed * float(factor), MIN_SPEED), MAX_SPEED)
        self.player.set_speed(speed)
        self._refresh_bar()

    def action_replay_seek(self) -> None:
        """``g``: open the seek input."""
        field = self.query_one("#replay-seek", Input)
        field.value = ""
        field.add_class("-open")
        field.focus()

    @on(Input.Submitted, "#replay-seek")
    def _seek_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            target = parse_seek_time(event.value)
        except ValueError as exc:
            self.notify(markup(exc), severity="error")
            return
        self.player.seek(target)
        if self.log_pane is not None:
            self.log_pane.clear_filter()  # a filter typed for other lines would show "filter: 0 lines"
        self._close_seek()
        self._refresh_bar()

    def on_key(self, event: Any) -> None:
        if event.key == "escape":
            field = self.query_one("#replay-seek", Input)
            if field.has_class("-open"):
                event.stop()
                self._close_seek()

    def _close_seek(self) -> None:
        field = self.query_one("#replay-seek", Input)
        field.remove_class("-open")
        self.set_focus(None)

    async def on_unmount(self) -> None:
        self.player.close()


def _plain(text: str):
    from rich.text import Text

    return Text(clean(text, newlines=True))


def _clear_bench(pane: Any) -> None:
    """Empty the bench pane's results (rewind). Uses ``BenchPane.clear_results()`` when the pane has it; else its
    public ``results``/``sweep_result`` state and tables."""
    clear = getattr(pane, "clear_results", None)
    if callable(clear):
        clear()
        return
    pane.results.clear()
    pane.sweep_result = None
    for table_id in ("#bench-runs", "#bench-sweep"):
        try:
            pane.query_one(table_id, DataTable).clear()
        except Exception:  # noqa: BLE001 - the pane changed its layout
            pass
    try:
        pane.query_one("#bench-recommendation", Static).update("")
        pane.query_one("#bench-warnings", Static).update("")
    except Exception:  # noqa: BLE001
        pass


def run_replay(session_log: SessionLog, speed: float = 1.0, theme: str | None = None,
               keymap: dict[str, str] | None = None) -> int:
    """Open the replay UI for ``session_log`` at ``speed`` (1.0 = the recorded pace) and return the exit code.
    ``keymap``: binding id -> keys, from config.yaml, as for the live console."""
    app = ReplayApp(session_log, speed, theme=theme, keymap=keymap)
    app.run()
    return int(app.return_code or 0)
