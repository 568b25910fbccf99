"""LogAnalyzer: parser + findings + live metrics + start-up progress over one log stream (no Textual).

Usage::

    analyzer = LogAnalyzer(on_finding=print, on_state=lambda state, detail: ...)
    parsed = analyzer.feed_many(lines)       # list[ParsedLine]
    analyzer.findings, analyzer.metrics, analyzer.startup, analyzer.server_state

Server state (``server_state``, a :class:`specdash.logs.state.ServerState`: ``unknown`` → ``starting`` → ``ready``
→ ``crashed``; a new start goes back to ``starting``); ``state_detail`` is the start-up phase label while starting
and the crash reason when crashed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

from specdash.logs.findings import Finding, FindingsEngine
from specdash.logs.metrics import LiveMetrics
from specdash.logs.parser import LogParser, ParsedLine

# LineKind members as module constants (an Enum attribute lookup costs ~10x a global), shared with startup.py
from specdash.logs.startup import (  # noqa: E402
    PHASES,
    StartupHistory,
    StartupTracker,
    _K_capacity,
    _K_decode,
    _K_dist_begin,
    _K_dist_end,
    _K_graph_begin,
    _K_graph_end,
    _K_graph_progress,
    _K_http,
    _K_kv_cache,
    _K_override,
    _K_plain,
    _K_prefill,
    _K_ready,
    _K_server_args,
    _K_timings,
    _K_weights_begin,
    _K_weights_end,
)
from specdash.logs.state import ServerState

_LABELS = dict(PHASES)
#: The running phase in words, for the stall finding.
_PHASE_WORDS = {"args": "start-up before weight loading (distributed/NCCL init)",
                "dist": "NCCL init (torch distributed)", "weights": "weight loading",
                "kv_cache": "KV cache allocation", "graph_target": "CUDA graph capture (target)",
                "graph_draft": "CUDA graph capture (draft)", "warmup": "warmup"}
#: Seconds a CUDA graph capture may take before it counts as stalled when nothing better is known.
CAPTURE_EXPECTED_S = 600.0
#: Seconds the NCCL init may take before it counts as stalled when nothing better is known: once every rank has
#: joined it takes seconds (SGLang logs ``Init torch distributed ends. elapsed=13.00 s`` for 8 GPUs); longer, it
#: waits on a rank or node that has not joined (it gives up only at --dist-timeout / torch's own timeout).
DIST_EXPECTED_S = 300.0
#: States in which a decode line changes nothing but metrics and sample findings (see LogAnalyzer.observe).
_SERVING_STATES = (ServerState.READY, ServerState.CRASHED)
_STARTUP_KINDS = (  # a tuple: membership by identity, no Enum.__hash__ call
    _K_server_args, _K_dist_begin, _K_dist_end, _K_weights_begin, _K_weights_end, _K_kv_cache, _K_graph_begin,
    _K_graph_end, _K_graph_progress, _K_capacity, _K_timings, _K_ready,
    _K_override, _K_prefill,
)


class LogAnalyzer:
    """Everything specdash understands about one log stream.

    ``on_finding(finding)``: called for each new :class:`Finding`; ``on_finding_update(finding)`` when one changes;
    ``on_state(state, detail)``: called when the server state or its detail changes. ``history``: where start-up
    durations are remembered (None: no ETA from history, nothing written); ``host``: part of the history key.
    """

    def __init__(
        self,
        on_finding: Callable[[Finding], None] | None = None,
        on_state: Callable[[ServerState, str], None] | None = None,
        on_finding_update: Callable[[Finding], None] | None = None,
        history: StartupHistory | None = None,
        host: str = "",
    ) -> None:
        self.parser = LogParser()
        self.metrics = LiveMetrics()
        self.startup = StartupTracker(history, host)
        self.engine = FindingsEngine(self.metrics, on_new=on_finding, on_update=on_finding_update)
        self.on_state = on_state
        self.server_state = ServerState.UNKNOWN
        self.state_detail = ""
        self.ever_crashed = False
        self.lines = 0
        #: timestamp of the latest timestamped line seen outside the decode short path (None: none yet)
        self.last_ts: datetime | None = None

    @property
    def findings(self) -> list[Finding]:
        """Current findings, most severe first."""
        return self.engine.findings

    def feed_many(self, lines: list[str]) -> list[ParsedLine]:
        """Parse and analyse ``lines`` (decoded text, no trailing newline); returns the parsed lines."""
        parsed = self.parser.feed_many(lines)
        observe = self.observe
        for line in parsed:
            observe(line)
        return parsed

    def observe_partial(self, text: str) -> bool:
        """A line still being written (no newline yet), e.g. a tqdm ``Capturing batches`` bar updating in place
        with ``\\r``: updates the capture progress and ETA only (the line is fed later, once complete). True when
        the start-up progress changed."""
        info = self.parser.capture_progress(text)
        return info is not None and self.startup.observe_capture_progress(info)

    def feed(self, line: str) -> ParsedLine:
        """One line."""
        parsed = self.parser.feed(line)
        self.observe(parsed)
        return parsed

    def observe(self, line: ParsedLine) -> None:
        """Analyse an already-parsed line (from this analyzer's parser)."""
        self.lines += 1
        kind = line.kind
        if kind is _K_decode and self.server_state in _SERVING_STATES:
            # the short path for most lines of a busy log: a decode line of a serving server only feeds the
            # metrics and the sample-derived findings, never the start-up tracker or the crash state
            sample = self.metrics.decode_line(line)
            if sample is not None:
                self.engine.after_decode(line, sample)
            return
        ts = line.timestamp
        if ts is not None:
            self.last_ts = ts
        if kind is _K_plain or kind is _K_http:
            return
        sample = self.metrics.observe(line) if kind in (_K_decode, _K_prefill, _K_server_args,
                                                        _K_ready, _K_weights_begin) else None
        changed = False
        if kind in _STARTUP_KINDS:
            changed = self.startup.observe(line)
        crashes = self.engine.crash_events
        self.engine.observe(line, sample)
        if kind is _K_ready:
            ttr = self.startup.time_to_ready_s
            detail = f"ready after {ttr:.0f} s" if ttr is not None else "ready"
            self.engine.server_ready(line, self.startup.starts, ttr)
            self._capture_finding(line)
            self._set_state(ServerState.READY, detail)
            return
        if kind is _K_decode and self.server_state in (ServerState.UNKNOWN, ServerState.STARTING):
            # decode batches mean the server is serving, even when the ready line was not in what we read
            self.startup.serving_without_ready()
            self._set_state(ServerState.READY, "serving (decode batches seen; no ready line read)")
            return
        if self.engine.crash_events > crashes and self.server_state is not ServerState.CRASHED:
            worst = next((f for f in reversed(self.engine.order) if f.kind in ("crash", "oom")), None)
            self.ever_crashed = True
            self.startup.start_ended()  # no capture progress or ETA after a crash
            self._set_state(ServerState.CRASHED, worst.message if worst else line.message[:120])
            return
        if changed and self.startup.active:
            cur = self.startup.current
            self._set_state(ServerState.STARTING, _LABELS.get(cur or "", cur or ""))
        if kind is _K_graph_end and self.startup.phases["graph_draft"].elapsed_s:
            self._capture_finding(line)

    def end_of_input(self) -> None:
        """The stream ends here (a file read to its end, not a live tail): a traceback cut before its exception
        line becomes a crash finding (see :meth:`FindingsEngine.end_of_input`)."""
        crashes = self.engine.crash_events
        self.engine.end_of_input()
        if self.engine.crash_events > crashes:
            worst = next((f for f in reversed(self.engine.order) if f.kind == "crash"), None)
            self.ever_crashed = True
            self._set_state(ServerState.CRASHED, worst.message if worst else "crashed")
            return
        tracker = self.startup
        cur = tracker.current
        if self.ever_crashed or not tracker.active or cur is None or tracker.phases[cur].state != "running":
            return
        if self.last_ts is not None and (tracker.last_ts is None or self.last_ts > tracker.last_ts):
            tracker.last_ts = self.last_ts
        expected, basis = self._expected_s(cur)
        self.engine.startup_unfinished(self.lines, _PHASE_WORDS.get(cur, _LABELS.get(cur, cur)),
                                       tracker.running_s(cur), expected, basis, tracker.last_ts)

    def live_stall(self, silent_s: float) -> dict[str, Any] | None:
        """A start-up phase that has run past what is expected of it, judged live while the log is silent.

        ``silent_s``: seconds since the last line (or partial line) arrived, measured by the caller's clock (wall
        time, not log time: a phase that hangs writes nothing, so log time stands still). The phase has run its log
        time (begin line to last line) plus ``silent_s``; the expectation is the same as for a scanned log
        (:meth:`end_of_input`: start-up history, tqdm's estimate, SGLang's capture notice, the NCCL-init bound).

        Returns None when no phase runs, nothing is expected of it, the server crashed, or it is within the
        expectation; else ``{"phase", "label", "running_s", "silent_s", "expected_s", "basis", "text"}`` where
        ``text`` is one line such as ``CUDA graph capture (target) has run 1354 s, 700 s without a new line
        (expected at most 600 s, ...): stalled?``.
        """
        tracker = self.startup
        cur = tracker.current
        if self.ever_crashed or not tracker.active or cur is None or tracker.phases[cur].state != "running":
            return None
        expected, basis = self._expected_s(cur)
        if expected is None:
            return None
        if self.last_ts is not None and (tracker.last_ts is None or self.last_ts > tracker.last_ts):
            tracker.last_ts = self.last_ts  # any timestamped line moves log time on, as in end_of_input
        logged = tracker.running_s(cur)
        silent = max(0.0, float(silent_s))
        running = (logged or 0.0) + silent
        if running <= expected:
            return None
        label = _PHASE_WORDS.get(cur, _LABELS.get(cur, cur))
        at_least = "" if logged is not None else "at least "
        text = (f"{label} has run {at_least}{running:.0f} s, {silent:.0f} s without a new line (expected at most "
                f"{expected:.0f} s, {basis}): stalled?")
        return {"phase": cur, "label": label, "running_s": running, "silent_s": silent, "expected_s": expected,
                "basis": basis, "text": text}

    def _expected_s(self, phase: str) -> tuple[float | None, str]:
        """The longest ``phase`` should take, and from what: twice its duration at the previous start of the same
        configuration (start-up history), tqdm's own estimate of the capture, or SGLang's capture notice ("This
        can take up to several minutes", read as 10 minutes); (None, "") when nothing says."""
        tracker = self.startup
        previous = tracker.previous_duration_s(phase)
        if previous:
            return max(2 * previous, previous + 60.0), f"twice the {previous:.0f} s of the previous start"
        if phase in ("graph_target", "graph_draft"):
            cap = tracker.capture
            if cap and cap.get("elapsed_s") is not None and cap.get("eta_s") is not None:
                total = float(cap["elapsed_s"]) + float(cap["eta_s"])
                return max(2 * total, total + 60.0), f"twice tqdm's estimate of {total:.0f} s"
            return CAPTURE_EXPECTED_S, "SGLang's notice: 'This can take up to several minutes'"
        if phase == "dist":
            return DIST_EXPECTED_S, "specdash's bound: it takes seconds once every rank has joined"
        return None, ""

    def coverage(self) -> dict[str, Any]:
        """What part of a server's life the log shows: ``start`` (start-up lines seen), ``end`` (a crash seen),
        ``excerpt`` (no start-up and no end: a piece of a longer log) and ``cannot_tell`` (sentences)."""
        start = self.startup.starts > 0
        end = self.ever_crashed
        cannot: list[str] = []
        if not start:
            cannot.append("the launch flags and the overrides SGLang applied at start-up")
            cannot.append("time to ready")
        if not end:
            cannot.append("whether the server stopped or crashed after the last line")
        excerpt = not start and not end and self.lines > 0
        return {"start": start, "end": end, "excerpt": excerpt, "cannot_tell": cannot if excerpt else []}

    def _capture_finding(self, line: ParsedLine) -> None:
        self.engine.capture_times(line, self.startup.phases["graph_target"], self.startup.phases["graph_draft"])

    def _set_state(self, state: ServerState, detail: str) -> None:
        if (state, detail) == (self.server_state, self.state_detail):
            return
        self.server_state, self.state_detail = state, detail
        if self.on_state:
            self.on_state(state, detail)

    def summary(self) -> dict[str, Any]:
        """The ``specdash scan --json`` document: ``findings``, ``startup``, ``metrics``, ``server_state``,
        ``crashed``, ``lines``, ``coverage`` (:meth:`coverage`), ``consistency``."""
        cons = self.metrics.consistency()
        return {
            "lines": self.lines,
            "server_state": str(self.server_state),
            "crashed": self.ever_crashed,
            "findings": [f.as_dict() for f in self.findings],
            "startup": self.startup.timeline(),
            "metrics": self.metrics.summary(),
            "coverage": self.coverage(),
            "consistency": None if cons is None else {
                "formula": cons.formula, "n": cons.n, "samples": cons.samples, "configured": cons.configured,
                "matches": cons.matches, "text": cons.describe()},
        }
