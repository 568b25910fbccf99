"""LogPane: the live server log with findings, metrics strip and start-up progress.

The app feeds it decoded lines in batches (``feed``), inserts markers (``marker``) and switches files (``reset``).
It posts :class:`LogPane.ServerStateChanged` and :class:`LogPane.FindingAdded`.

Keys: ``/`` live filter (plain text; a leading ``!`` makes it a regex), ``n``/``N`` next/previous hit,
``w``/``W`` next/previous warning, ``e``/``E`` next/previous error, ``f`` follow on/off, ``F`` shows/hides the
findings panel (hidden by default below :data:`NARROW_WIDTH` columns, e.g. at 80×24), ``tab`` to the findings
list where ``enter`` jumps to the finding's line.

Memory: the view keeps at most :data:`specdash.app.log.view.MAX_LINES` lines (100 000); older lines are dropped with
a marker. The analyzer keeps bounded state (5 000 decode samples, findings deduplicated).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Static

from specdash.app.keymap import key_for
from specdash.app.log.findings_panel import FindingsPanel
from specdash.app.log.metrics_strip import MetricsStrip
from specdash.app.log.startup_bar import StartupBar
from specdash.app.log.view import SYNC_INTERVAL_FAST_S, FilterError, LogView
from specdash.app.styles import load_tcss
from specdash.logs.analyzer import LogAnalyzer
from specdash.logs.bulk import BulkReader
from specdash.logs.findings import Finding
from specdash.logs.line_index import LineIndex
from specdash.logs.own_traffic import without_own_lines
from specdash.logs.parser import LineKind, LogParser
from specdash.logs.startup import StartupHistory
from specdash.logs.state import ServerState
from specdash.severity import severity_rank
from specdash.sglang.known_issues import KnownIssueLogScanner
from specdash.sglang.launch_check import MISMATCH_EXPLANATION, config_mismatches, mismatch_message
from specdash.text.display import markup
from specdash.text.redaction import redact_text

#: Seconds between redraws of the findings list, metrics strip and start-up bar (lines render immediately). While
#: lines stream, the redraw rides on the log view's next frame; a timer covers quiet times (the ETA counts down).
PANEL_REFRESH_S = 0.25
#: below this pane width the findings panel (60 columns) starts hidden: F shows it
NARROW_WIDTH = 120
#: A jump to a finding above the window reads the history between them when it is at most this many lines (the
#: window holds MAX_LINES); further up the notice says the line is not in the window.
HISTORY_JUMP_LINES = 50_000
#: Live lines kept waiting for the analyzer while the history is read; beyond this the history analysis stops
#: where it is (memory stays bounded; the live log matters more than the oldest lines).
HISTORY_PENDING_MAX = 200_000


def fit_title(title: str, width: int) -> str:
    """``title`` in at most ``width`` characters (``width`` below 12: unchanged, the border cuts it). A title
    ``PATH · MARKER`` keeps its marker whole and loses the start of the path (``…`` + its end, where the file name
    is); a title without a marker, or whose marker leaves the path under 12 characters, keeps its end."""
    if len(title) <= width or width < 12:
        return title
    path, sep, marker = title.partition(" · ")
    room = width - len(sep) - len(marker) - 1
    if sep and room >= 12:
        return "…" + path[-room:] + sep + marker
    return "…" + title[-(width - 1):]


@dataclasses.dataclass
class HistoryProgress:
    """The background analysis of the bytes before the tail shown first: ``total_bytes`` to analyse,
    ``done_bytes`` so far; ``pending`` the lines shown meanwhile, waiting for their turn in the analyzer;
    ``index`` the offsets of every N-th history line (bounded, :class:`specdash.logs.line_index.LineIndex`)."""

    total_bytes: int
    done_bytes: int = 0
    finished: bool = False
    counted: bool = False
    abandoned: bool = False
    history_lines: int = 0
    pending: list[str] = dataclasses.field(default_factory=list)
    index: LineIndex = dataclasses.field(default_factory=LineIndex)
    display_parser: LogParser = dataclasses.field(default_factory=LogParser)
    #: the bulk reader of :meth:`LogPane.feed_history_bytes` (made at its first block)
    reader: BulkReader | None = None
    #: the :attr:`percent` the panels last showed (they move with the analysis, see LogPane._refresh_panels)
    shown_percent: int | None = None

    @property
    def percent(self) -> int:
        """Whole percent of the history analysed (100 only when all of it is)."""
        if self.total_bytes <= 0 or self.done_bytes >= self.total_bytes:
            return 100
        return min(99, self.done_bytes * 100 // self.total_bytes)


#: a marker line is never cut narrower than this many cells (a view not laid out yet reads 0 wide)
MARKER_MIN_WIDTH = 30


class LogPane(Widget):
    """The log pane. ``history``: where start-up durations are remembered (default: the user state dir);
    ``host``: the host name, part of the start-up history key."""

    DEFAULT_CSS = load_tcss(__file__)

    BINDINGS = [
        Binding("slash", "filter", "Filter", id="log.filter"),
        Binding("n", "hit(1)", "Next hit", id="log.next_hit"),
        Binding("N", "hit(-1)", "Prev hit", show=False, id="log.prev_hit"),
        Binding("w", "jump(1, 'warning')", "Next warn", id="log.next_warning"),
        Binding("W", "jump(-1, 'warning')", "Prev warn", show=False, id="log.prev_warning"),
        Binding("e", "jump(1, 'error')", "Next error", id="log.next_error"),
        Binding("E", "jump(-1, 'error')", "Prev error", show=False, id="log.prev_error"),
        Binding("f", "toggle_follow", "Follow", id="log.follow"),
        Binding("y", "copy_lines", "Copy lines", show=False, id="log.copy"),
        Binding("F", "toggle_findings", "Findings", id="log.findings"),
        Binding("Z", "toggle_wrap", "Wrap", id="log.wrap"),
    ]

    class ServerStateChanged(Message):
        """The server state read from the log changed: ``state`` (:class:`~specdash.logs.state.ServerState`) is
        ``starting`` (``detail``: the phase), ``ready`` (``detail``: e.g. "ready after 45 s") or ``crashed``
        (``detail``: the crash reason)."""

        def __init__(self, state: ServerState, detail: str) -> None:
            super().__init__()
            self.state = state
            self.detail = detail

    class FindingAdded(Message):
        """A new :class:`~specdash.logs.findings.Finding` was pinned."""

        def __init__(self, finding: Finding) -> None:
            super().__init__()
            self.finding = finding

    def __init__(self, title: str = "log", *, history: StartupHistory | None = None, host: str = "",
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._title = title
        self._fit_title()
        self._history = history if history is not None else StartupHistory()
        self._host = host
        self._dirty = False
        self._sglang_version: str | None = None
        #: access-log lines of specdash's own status poll left out since the last reset
        self.own_lines_hidden = 0
        #: (log path, effective values specdash predicted for the command that writes it): see expect_config
        self._predicted: tuple[str, dict[str, Any]] | None = None
        self._launch_findings: list[Finding] = []
        self.analyzer = self._new_analyzer()
        self._progress: HistoryProgress | None = None
        #: ``async (offset) -> TailLines``: the lines just before byte ``offset`` of the followed file (set by the
        #: app for a tail-first log; None: nothing to scroll back into)
        self.earlier_reader: Callable[[int], Awaitable[Any]] | None = None
        #: ``(start, end) -> async iterator of TailLines``: bytes ``start..end`` of the followed file, as lines (set by
        #: the app with :attr:`earlier_reader`); a jump to a finding in the history reads through it
        self.range_reader: Callable[[int, int], AsyncIterator[Any]] | None = None
        self._first_offset: int | None = None  # byte offset of the first line in the window, when known
        self._reading_earlier = False

    def _new_analyzer(self) -> LogAnalyzer:
        #: known SGLang issues matched line by line (:mod:`specdash.sglang.known_issues`), listed with the findings
        self.known_issues = KnownIssueLogScanner(self._sglang_version)
        return LogAnalyzer(
            on_finding=self._on_finding,
            on_state=self._on_state,
            on_finding_update=self._on_finding_update,
            history=self._history,
            host=self._host,
        )

    def compose(self) -> ComposeResult:
        yield StartupBar(id="log-startup")
        yield MetricsStrip(id="log-metrics")
        with Horizontal(id="log-body"):
            yield LogView(id="log-view")
            yield FindingsPanel(id="log-findings")
        yield Input(placeholder="filter: plain text, or !regex — enter keeps it, escape closes", id="log-filter")
        yield Static("", id="log-status")

    def on_mount(self) -> None:
        #: the user's choice with F (True shown, False hidden); None: automatic, hidden below NARROW_WIDTH columns
        self.findings_choice: bool | None = None
        self._view = self.query_one(LogView)
        self._startup_bar = self.query_one(StartupBar)
        self._panels_at = 0.0
        self._view.after_sync = self._panels_with_frame
        self.set_interval(PANEL_REFRESH_S, self._panels_on_timer)
        self._update_status()

    # ---- API the app calls ------------------------------------------------------------------------------------
    @property
    def view(self) -> LogView:
        """The scrolling line view."""
        view = getattr(self, "_view", None)
        return view if view is not None else self.query_one(LogView)

    def feed(self, lines: list[str]) -> None:
        """Add decoded lines (no trailing newline), as a batch, in stream order. While the history above them is
        being analysed (:meth:`start_history`) they are shown at once and analysed after the history. The
        access-log lines of specdash's own status poll (:mod:`specdash.logs.own_traffic`) are left out and counted
        in the status line."""
        lines, own = without_own_lines(lines)
        if own:
            self.own_lines_hidden += own
            self._dirty = True  # the status line says so at the next panel refresh
        if not lines:
            return
        history = self._progress
        if history is not None and not history.finished:
            parsed = history.display_parser.feed_many(lines)
            history.pending.extend(lines)
            if len(history.pending) > HISTORY_PENDING_MAX and not history.abandoned:
                history.abandoned = True  # the history worker stops at its next batch and catches up
                self.marker(f"history analysis stopped at {history.percent} %: the live log comes faster than the "
                            f"history is read; line numbers from here on are not the file's")
        else:
            parsed = self._analyse(lines)
        self.view.append(parsed)
        bar = getattr(self, "_startup_bar", None)
        if bar is not None:
            bar.line_arrived()
        self._dirty = True

    def _analyse(self, lines: list[str]) -> list:
        """The analyzer and the known-issue scanner read ``lines`` (the next lines of the file, in order)."""
        parsed = self.analyzer.feed_many(lines)
        feed_issue = self.known_issues.feed
        for line in parsed:
            feed_issue(line.number, line.text)
            if line.kind is LineKind.server_args and self._predicted is not None and line.info:
                self._check_launch(line)
        return parsed

    def expect_config(self, log_path: str, predicted: dict[str, Any]) -> None:
        """The server writing ``log_path`` was launched from here with a command whose effective values specdash
        predicted as ``predicted`` (ServerArgs field -> value): each ``server_args=`` line of that log that states
        other speculative values becomes a warning finding ("the server runs X, the command predicted Y")."""
        self._predicted = (log_path, dict(predicted))

    def _history_line(self, number: int, text: str) -> None:
        """A history line the bulk reader did not analyse inline (see :meth:`feed_history_bytes`): the known-issue
        scanner sees it, and a ``server_args=`` line is checked against the launched command's prediction (a
        re-attached server's start-up is in the history of a long log)."""
        text = text.rstrip("\r")
        self.known_issues.feed(number, text)
        if self._predicted is not None and "server_args=" in text:
            line = LogParser().feed(text)
            if line.kind is LineKind.server_args and line.info:
                line.number = number
                self._check_launch(line)

    def _check_launch(self, line: Any) -> None:
        assert self._predicted is not None
        mismatches = config_mismatches(self._predicted[1], line.info)
        if not mismatches:
            return
        finding = Finding(kind="launch_mismatch", severity="warning", line=line.number,
                          message=mismatch_message(mismatches), explanation=MISMATCH_EXPLANATION,
                          time=line.timestamp, key=f"launch_mismatch:{line.number}",
                          data={"server": {f: got for f, got, _ in mismatches},
                                "predicted": {f: want for f, _, want in mismatches}})
        self._launch_findings.append(finding)
        self._on_finding(finding)

    # ---- tail first, history behind ----------------------------------------------------------------------------
    def start_history(self, history_bytes: int) -> None:
        """The lines fed from now on start at byte ``history_bytes`` of the file: the bytes before it (the
        history) are analysed in the background through :meth:`feed_history`, then :meth:`finish_history`. Until
        then the lines shown are numbered from the first one fed, the analyzer sees nothing of them (they are
        analysed after the history, in file order) and the status line shows the progress."""
        self._progress = HistoryProgress(history_bytes)
        self._first_offset = history_bytes
        self.view.earlier_exists = history_bytes > 0 and self.earlier_reader is not None
        self._update_status()

    @property
    def history(self) -> HistoryProgress | None:
        """The background analysis of the history (None when the whole file was fed from its start)."""
        return self._progress

    def feed_history(self, lines: list[str], offsets: list[int], done_bytes: int) -> None:
        """Analyse a batch of history lines (in file order, each with its byte offset); ``done_bytes``: bytes of the
        history analysed once this batch is."""
        history = self._progress
        if history is None or history.finished or history.abandoned or not lines:
            return
        self._analyse(lines)
        history.index.add(offsets)
        history.done_bytes = min(done_bytes, history.total_bytes)
        self._dirty = True

    def feed_history_bytes(self, block: bytes, offset: int, done_bytes: int) -> None:
        """Analyse a block of the history as bytes (whole lines in file order, starting at byte ``offset``; a last
        line without newline waits for the next block or :meth:`finish_history`) through the bulk reader
        (:class:`specdash.logs.bulk.BulkReader`: the same analysis as :meth:`feed_history`, most lines without a
        Python call chain each); ``done_bytes``: bytes of the history analysed once this block is."""
        history = self._progress
        if history is None or history.finished or history.abandoned or not block:
            return
        reader = history.reader
        if reader is None:
            from specdash.sglang.known_issues import KNOWN_ISSUES

            reader = history.reader = BulkReader(
                self.analyzer, on_line=self._history_line,
                watch=(pattern.needle for entry in KNOWN_ISSUES for pattern in entry.logs))
        reader.feed(block)
        history.index.add_block(block, offset)
        history.done_bytes = min(done_bytes, history.total_bytes)
        self._dirty = True

    def finish_history(self, batch_lines: int = 0) -> bool:
        """The history is analysed: analyse the lines shown meanwhile (at most ``batch_lines`` of them per call;
        0: all), then number the lines shown as the file numbers them. Returns True once done (call again until
        then)."""
        history = self._progress
        if history is None or history.finished:
            return True
        if not history.counted:
            history.counted = True
            if history.reader is not None:
                history.reader.close()  # a last history line without newline
            history.history_lines = self.analyzer.lines  # abandoned: the lines analysed, not the file's count
            history.done_bytes = history.total_bytes
        pending = history.pending
        take = len(pending) if batch_lines <= 0 else min(batch_lines, len(pending))
        if take:
            self._analyse(pending[:take])
            del pending[:take]
        if pending:
            return False
        history.finished = True
        self.view.shift_numbers(history.history_lines)
        self._dirty = True
        self._update_status()
        return True

    def _history_span(self, line: int) -> tuple[int, int, int] | None:
        """``(line_number, start_offset, end_offset)``: the history lines to read so that ``line`` joins the top
        of the window (from the indexed line at or before it up to the first line shown); None when the history
        is not indexed yet, ``line`` is not above the window, or more than :data:`HISTORY_JUMP_LINES` away."""
        history, first, end = self._progress, self.view.first_number, self._first_offset
        if history is None or not history.finished or history.abandoned or first is None or end is None \
                or self.range_reader is None or not 0 < line < first:
            return None
        located = history.index.locate(line)
        if located is None or first - located[0] > HISTORY_JUMP_LINES:
            return None
        return located[0], located[1], end

    async def _jump_into_history(self, line: int) -> None:
        """Read the history from the indexed line before ``line`` up to the window, put it above, jump to it."""
        span = self._history_span(line)
        reader = self.range_reader
        if span is None or reader is None:
            return
        number, start, end = span
        texts: list[str] = []
        offsets: list[int] = []
        try:
            async for batch in reader(start, end):
                texts.extend(raw.decode("utf-8", "replace").rstrip("\r") for raw in batch.lines)
                offsets.extend(batch.offsets)
        except Exception as exc:  # noqa: BLE001 - a host error: say it, keep the pane
            self.notify(f"cannot read line {line}: {markup(str(exc))}", severity="warning", timeout=5)
            return
        if end != self._first_offset or not texts:
            return
        parsed = LogParser().feed_many(texts)
        for i, parsed_line in enumerate(parsed):
            parsed_line.number = number + i
        if self.view.prepend(parsed):
            self._first_offset = offsets[0]
            self.view.earlier_exists = offsets[0] > 0
        if not self.view.jump_to_number(line):
            self.notify(f"line {line} is no longer in the window", timeout=3)
        self._update_status()

    def abandon_history(self) -> None:
        """Stop analysing the history where it is (the host failed, or the live log comes faster than the history
        is read: :data:`HISTORY_PENDING_MAX`). The lines shown are analysed from here on (:meth:`finish_history`),
        numbered as if they followed the last history line analysed."""
        if self._progress is not None and not self._progress.finished:
            self._progress.abandoned = True

    def on_log_view_need_earlier(self, event: LogView.NeedEarlier) -> None:
        event.stop()
        if self._reading_earlier or self.earlier_reader is None or not self._first_offset:
            return
        self._reading_earlier = True
        self.run_worker(self._read_earlier(self._first_offset), group="earlier", exclusive=True)

    async def _read_earlier(self, offset: int) -> None:
        try:
            reader = self.earlier_reader
            batch = await reader(offset) if reader is not None else None
            if batch is None or not batch.lines or offset != self._first_offset:
                return
            texts = [line.decode("utf-8", "replace").rstrip("\r") for line in batch.lines]
            parsed = LogParser().feed_many(texts)
            first = self.view.first_number or 1
            for i, line in enumerate(parsed):  # numbered up to the first line shown
                line.number = first - len(parsed) + i
            if self.view.prepend(parsed):
                self._first_offset = batch.offsets[0]
                self.view.earlier_exists = batch.offsets[0] > 0
        except Exception as exc:  # noqa: BLE001 - a host error while scrolling back: say it, keep the pane
            self.notify(f"cannot read earlier lines: {markup(str(exc))}", severity="warning", timeout=5)
        finally:
            self._reading_earlier = False

    def partial(self, text: str) -> None:
        """The line being written now, before its newline (a tqdm capture bar updating in place): the start-up
        bar's progress and ETA follow it; the line itself is shown once complete."""
        if self.analyzer.observe_partial(text):
            bar = getattr(self, "_startup_bar", None)
            if bar is not None:
                bar.line_arrived()
            self._dirty = True

    def marker(self, text: str) -> None:
        """Insert a visually distinct marker line, e.g. ``── reconnected ──``; a text wider than the view (beside
        the findings panel, or at 80 columns) takes several marker lines, cut at words, so none of it is hidden."""
        import textwrap

        width = self.view.scrollable_content_region.width or self.view.size.width
        lines = textwrap.wrap(text, width=max(MARKER_MIN_WIDTH, width - 1), subsequent_indent="  ",
                              break_on_hyphens=False) if width and len(text) >= width else [text]
        for line in lines or [text]:
            self.view.append_marker(line)
        self._update_status()

    def server_gone(self) -> None:
        """The followed server's processes are gone (it crashed or was stopped): the start-up bar stops showing a
        phase in progress, capture progress and an ETA (:meth:`StartupTracker.start_ended`)."""
        self.analyzer.startup.start_ended()
        self._dirty = True

    def clear_filter(self) -> None:
        """Drop the ``/`` filter: every line shows again, the filter box is emptied and hidden (a replay seek, a
        new file: the lines it was typed for are gone)."""
        box = self.query_one("#log-filter", Input)
        if box.value:
            with box.prevent(Input.Changed):
                box.value = ""
        box.remove_class("-invalid")
        box.border_subtitle = ""
        box.display = False
        if box.has_focus:
            self.view.focus()
        self.view.set_filter("")
        self._update_status()

    def set_sglang_version(self, version: str | None) -> None:
        """The SGLang release that writes this log (None: not known), for the known-issue matches: an issue fixed
        before it is then said to be fixed. Takes effect for the lines that follow."""
        self._sglang_version = version
        self.known_issues.set_version(version)

    @property
    def findings(self) -> list[Finding]:
        """What the findings panel lists: the analyzer's findings, then the known SGLang issues the log matched."""
        found = self.analyzer.findings  # most severe first, then by line
        if self._launch_findings:
            found = sorted(found + self._launch_findings, key=lambda f: (severity_rank(f.severity), f.line))
        return found + self.known_issues.finding_objects()

    def reset(self, title: str) -> None:
        """Start over for a different file titled ``title`` (lines, findings, metrics, start-up and the ``/`` filter
        are cleared)."""
        self.set_title(title)
        self.analyzer = self._new_analyzer()
        self._launch_findings = []
        if self._predicted is not None and self._predicted[0] != title:
            self._predicted = None  # another log: not the launched command's
        self._progress = None
        self._first_offset = None
        self.earlier_reader = self.range_reader = None
        self.own_lines_hidden = 0
        self.view.clear()
        self.view.earlier_exists = False
        self.clear_filter()
        self._dirty = True
        self._refresh_panels()

    # ---- analyzer callbacks -----------------------------------------------------------------------------------
    def _on_finding(self, finding: Finding) -> None:
        self._dirty = True
        self.post_message(self.FindingAdded(finding))

    def _on_finding_update(self, finding: Finding) -> None:
        self._dirty = True

    def _on_state(self, state: ServerState, detail: str) -> None:
        if state is not ServerState.UNKNOWN:
            self.post_message(self.ServerStateChanged(state, detail))

    # ---- periodic redraw -----------------------------------------------------------------------------------
    def _panels_with_frame(self) -> None:
        if time.monotonic() - self._panels_at >= PANEL_REFRESH_S:
            self._refresh_panels_safely()

    def _panels_on_timer(self) -> None:
        if time.monotonic() - self._panels_at >= PANEL_REFRESH_S + SYNC_INTERVAL_FAST_S:
            self._refresh_panels_safely()

    def _refresh_panels_safely(self) -> None:
        try:
            self._refresh_panels()
        except NoMatches:  # the pane is being torn down (the view's frame timer can outlive its siblings)
            pass

    def _refresh_panels(self) -> None:
        self._panels_at = time.monotonic()
        history = self._progress
        if history is not None and not history.finished and not history.abandoned:
            # while the history is analysed the panels move with it, one step per whole percent, not with the
            # clock: on a busy machine the analysis takes longer and timed redraws would cost CPU for each second
            if history.percent == history.shown_percent:
                return
            history.shown_percent = history.percent
        bar = self.query_one(StartupBar)
        if self.analyzer.startup.active:  # the ETA counts down and a silent phase turns into a stall between lines
            bar.update_from(self.analyzer.startup, self.analyzer.live_stall(bar.silent_s()))
        if not self._dirty:
            return
        self._dirty = False
        self.query_one(FindingsPanel).show(self.findings)
        self.query_one(MetricsStrip).update_from(self.analyzer.metrics)
        bar.update_from(self.analyzer.startup, self.analyzer.live_stall(bar.silent_s()))
        self._update_status()

    @property
    def findings_shown(self) -> bool:
        """The findings panel is on screen: the user's choice (F), else whether the pane is at least
        NARROW_WIDTH columns wide (below that the log lines would get too few columns beside the panel)."""
        choice = getattr(self, "findings_choice", None)
        return choice if choice is not None else self.size.width >= NARROW_WIDTH

    def _apply_findings_layout(self) -> None:
        shown = self.findings_shown
        if self.has_class("-findings-hidden") == shown:
            self.set_class(not shown, "-findings-hidden")
            self._update_status()

    def set_title(self, title: str) -> None:
        """Title the pane ``title`` (a log's path, maybe `` · `` and a marker), fitted to its width."""
        self._title = title
        self._fit_title()

    def _fit_title(self) -> None:
        """The border title: the log's path (from the user or the host: shown, never parsed as markup) fitted to the
        pane's width by :func:`fit_title`, so a marker after it (`` · re-attached, PGID 4242``) stays on screen."""
        width = self.size.width
        self.border_title = markup(fit_title(self._title, width - 6) if width else self._title)

    def on_resize(self, event) -> None:
        self._fit_title()
        self._apply_findings_layout()
        self._update_status()  # its parts fit the new width

    def action_toggle_findings(self) -> None:
        """``F``: show or hide the findings panel (hidden: the log gets the whole width, the status line counts
        the findings)."""
        self.findings_choice = not self.findings_shown
        self._apply_findings_layout()
        if not self.findings_shown and self.query_one(FindingsPanel).has_focus_within:
            self.view.focus()

    def action_toggle_wrap(self) -> None:
        """``Z``: wrap long lines at the pane's width, or show them on one row each (scrolling sideways)."""
        self.view.set_wrap(not self.view.wrap)
        self._update_status()

    def _update_status(self) -> None:
        """The status line, e.g. ``following · 144 lines received · 12 lines of specdash's own polling hidden ·
        6 findings (F shows)``. It never runs past the pane's edge: when it is too long the parts take their short
        form, then the least important go (:func:`fit_status`); the state, new lines and the findings count stay."""
        view = self.view
        parts: list[tuple[int, str, str]] = []  # (rank: lower stays longer, markup, short markup)
        # the keys as the keymap binds them (config.yaml), as markup text
        follow, wrap, findings = (escape(key_for(self, i)) for i in ("log.follow", "log.wrap", "log.findings"))
        if view.follow:
            parts.append((0, "[b]following[/b]", "[b]following[/b]"))
        else:
            parts.append((0, "[b $warning]paused[/]", "[b $warning]paused[/]"))
            if view.new_lines:
                parts.append((1, f"[reverse $warning] {view.new_lines:,} new lines ↓ [/] ({follow}: follow)",
                              f"[reverse $warning] {view.new_lines:,} new ↓ [/] ({follow})"))
        hits = view.filter_hits
        if hits is not None:
            parts.append((2, f"filter: {hits:,} lines", f"filter: {hits:,}"))
        history = self._progress
        if history is not None and not history.finished:
            parts.append((3, f"[b]history: {history.percent} % analysed[/b]", f"[b]history {history.percent} %[/b]"))
        parts.append((6, f"{view.received:,} lines received", f"{view.received:,} lines"))
        if self.own_lines_hidden:
            n = self.own_lines_hidden
            parts.append((8, f"{n:,} line{'s' if n != 1 else ''} of specdash's own polling hidden",
                          f"{n:,} own polling hidden"))
        if view.dropped:
            parts.append((4, f"{view.dropped:,} dropped (window {view.line_count:,})", f"{view.dropped:,} dropped"))
        if view.cursor_number is not None and (history is None or history.finished):
            parts.append((5, f"line {view.cursor_number}", f"line {view.cursor_number}"))
        if view.wrap:
            parts.append((7, f"wrapped ({wrap})", f"wrapped ({wrap})"))
        if self.has_class("-findings-hidden"):
            count = len(self.analyzer.engine.order) + self.known_issues.matched
            text = f"[b]{count} finding{'s' if count != 1 else ''}[/b] ({findings} shows)"
            parts.append((1, text, text))
        status = self.query_one("#log-status", Static)
        # one row, the pane's width (its size never changes with its text): no layout pass for each update
        status.update(fit_status(parts, status.size.width or self.size.width or 10_000), layout=False)

    def on_log_view_follow_changed(self, event: LogView.FollowChanged) -> None:
        event.stop()
        self._update_status()

    # ---- actions ------------------------------------------------------------------------------------------------
    def action_filter(self) -> None:
        box = self.query_one("#log-filter", Input)
        box.display = True
        box.focus()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "log-filter":
            return
        event.stop()
        try:
            self.view.set_filter(event.value)
            event.input.remove_class("-invalid")
            event.input.border_subtitle = ""
        except FilterError as exc:
            event.input.add_class("-invalid")
            event.input.border_subtitle = str(exc)
        self._update_status()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "log-filter":
            return
        event.stop()
        if not event.value:
            event.input.display = False
        self.view.focus()

    def on_key(self, event) -> None:
        box = self.query_one("#log-filter", Input)
        if event.key == "escape" and box.has_focus:
            event.stop()
            box.display = bool(box.value)
            self.view.focus()

    def action_hit(self, direction: int) -> None:
        if not self.view.jump(direction, None):
            self.app.bell()
        self._update_status()

    def action_jump(self, direction: int, severity: str) -> None:
        if not self.view.jump(direction, severity):
            self.notify(f"no {'next' if direction > 0 else 'previous'} {severity}", timeout=2)
        self._update_status()

    def copy_text(self) -> str:
        """What ``y`` copies: the highlighted line, else the lines on screen — with secrets redacted
        (:func:`specdash.text.redaction.redact_text`: a log line may echo ``HF_TOKEN=...`` or an API key)."""
        view = self.view
        row = view.cursor_row()
        if row is not None:
            rows = range(row, row + 1)
        else:
            top = int(view.scroll_y)
            rows = range(top, min(view.row_count, top + max(1, view.scrollable_content_region.height)))
        return "\n".join(redact_text(view.text_at_row(r)) for r in rows)

    def action_copy_lines(self) -> None:
        text = self.copy_text()
        if not text:
            self.notify("nothing to copy", timeout=2)
            return
        self.app.copy_to_clipboard(text)
        self.notify(f"copied {text.count(chr(10)) + 1} line(s), secrets redacted", timeout=3)

    def action_toggle_follow(self) -> None:
        self.view.set_follow(not self.view.follow)
        self._update_status()

    def on_findings_panel_jump_to(self, event: FindingsPanel.JumpTo) -> None:
        event.stop()
        if not self.view.jump_to_number(event.line):
            if self._history_span(event.line) is not None:
                self.run_worker(self._jump_into_history(event.line), group="earlier", exclusive=True)
                return
            self.notify(f"line {event.line} is no longer in the window", timeout=3)
        else:
            box = self.query_one("#log-filter", Input)
            if box.value and self.view.filter_hits is None:  # the jump cleared a filter that hid the line
                box.value = ""
                box.display = False
        self._update_status()


def fit_status(parts: list[tuple[int, str, str]], width: int) -> str:
    """``parts`` (rank: lower stays longer, Rich markup, short markup) joined by `` · `` within ``width`` cells:
    the full forms when they fit, else the short ones, then the highest ranks left out until the line fits (the
    first part, the state, always stays)."""
    from rich.text import Text

    def cells(chosen: list[str]) -> int:
        return Text.from_markup(" · ".join(chosen)).cell_len

    full = [p[1] for p in parts]
    if cells(full) <= width:
        return " · ".join(full)
    kept = list(range(len(parts)))
    for i in sorted(kept[1:], key=lambda i: (parts[i][0], i), reverse=True):
        if cells([parts[j][2] for j in kept]) <= width:
            break
        kept.remove(i)
    return " · ".join(parts[j][2] for j in kept)
