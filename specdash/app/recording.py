"""Recording a live session from the app: a mixin for :class:`specdash.app.main.SpecdashApp` that turns what the
panes and the host report into :mod:`specdash.session` events.

The app sets :attr:`RecordingMixin.recorder` (a :class:`specdash.session.recorder.Recorder`, or None: not
recording) before it runs; ``specdash connect`` does this from ``--record PATH`` / ``--no-record`` / config
``record``. What is recorded, and from where:

* ``connection`` — the host's state listener (:meth:`record_connection`, called by the app);
* ``log`` — every batch the log follower delivers, each line with its byte offset in the file
  (:meth:`record_log_batch`, with the offsets the follower read: :attr:`TailLines.offsets`);
* ``marker`` — the follower's notes (:meth:`record_marker`);
* ``finding`` — :class:`LogPane.FindingAdded`, with the finding's byte offset when its line was recorded;
* ``metric`` — the log pane analyzer's current decode metrics, polled once a second, recorded when they change;
* ``gpu`` — :class:`GpuPane.Sampled` (the recorder keeps at most one per second), with the live classification;
* ``kill`` — :class:`GpuPane.KillFinished`;
* ``command`` — the lifecycle (:meth:`record_command`, called by launch/stop/restart) and the builder's
  :class:`BuilderPane.CommandChanged`, debounced: at most one ``validated`` event per
  :data:`COMMAND_DEBOUNCE_S` of typing, and always the final one;
* ``bench`` / ``sweep`` — :class:`BenchPane.RunFinished` / :class:`BenchPane.SweepFinished`;
* ``action`` — every action run from a key binding or the command palette (its binding id when it has one).

The recording is finished when the app unmounts (:meth:`specdash.session.recorder.Recorder.finish`: an
auto-named session in which nothing worth replaying happened, e.g. a connect that failed, is deleted). The mixin
defines no message handlers: the app's handlers call its ``record_*`` methods (what it needs from the app is
:class:`RecordingApp`).
"""

from __future__ import annotations

import collections
import time
from typing import TYPE_CHECKING, Any, Protocol

from specdash.session.events import (
    ActionEvent,
    BenchEvent,
    CommandEvent,
    ConnectionEvent,
    Event,
    FindingEvent,
    GpuEvent,
    KillEvent,
    MarkerEvent,
    MetricEvent,
    PartialEvent,
    SweepEvent,
    gpu_event_fields,
)

#: The builder records a validated command at most once per this many seconds of typing (plus the final one).
COMMAND_DEBOUNCE_S = 2.0
#: Metric samples are polled this often (the recorder keeps at most one per second anyway).
METRIC_POLL_S = 1.0
#: Byte offsets kept for the most recent log lines (to give a finding the offset of its line): a finding names
#: a line the log pane parsed moments ago, and a busy log must not grow this without bound.
LINE_OFFSETS_KEPT = 100_000

if TYPE_CHECKING:
    from specdash.session.recorder import Recorder


def diagnostics_summary(report: Any) -> list[dict[str, Any]]:
    """``[{severity, code, message, flags}]`` from a :class:`specdash.sglang.validate.ValidationReport`
    (empty when ``report`` is None or has no diagnostics)."""
    out: list[dict[str, Any]] = []
    for diag in getattr(report, "diagnostics", None) or ():
        item: dict[str, Any] = {"severity": str(getattr(diag, "severity", "")), "code": str(getattr(diag, "code", "")),
                "message": str(getattr(diag, "message", ""))}
        flags = getattr(diag, "flags", None)
        if flags:
            item["flags"] = list(flags)
        out.append(item)
    return out


def effective_config(report: Any) -> dict[str, Any]:
    """The SGLang fields a validation report ends up with (``report.effective`` when present, else ``typed``),
    as plain values; {} when unknown."""
    for name in ("effective", "typed"):
        value = getattr(report, name, None)
        if isinstance(value, dict) and value:
            return {str(k): v for k, v in value.items()
                    if k.startswith("speculative_") or k in ("model_path", "tp_size", "attention_backend",
                                                             "cuda_graph_max_bs", "disable_cuda_graph")}
    return {}


def strip_requests(run: dict[str, Any]) -> dict[str, Any]:
    """A ``RunResult.to_dict()`` without its per-request raw data (kept small in the session file)."""
    out = dict(run)
    out["requests"] = []
    return out


class RecordingApp(Protocol):
    """What :class:`RecordingMixin` needs from the app it is mixed into (besides Textual's ``App``)."""

    log_pane: Any = None  # specdash.app.log.pane.LogPane | None: its analyzer's metrics are polled (app property)

    # Textual's App
    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        return None

    def set_interval(self, interval: float, callback: Any = None, *, name: str | None = None, repeat: int = 0,
                     pause: bool = False) -> Any:
        return None

    def set_timer(self, delay: float, callback: Any = None, *, name: str | None = None, pause: bool = False) -> Any:
        return None


if TYPE_CHECKING:  # the mixin is type-checked as the app it is mixed into
    _Base = RecordingApp
else:
    _Base = object


class RecordingMixin(_Base):
    """Mixin for the app (see the module docstring). Set :attr:`recorder` before ``run()``; the handlers below do
    nothing while it is None."""

    recorder: Recorder | None = None
    _rec_line_offsets: collections.deque[int]  # start offsets of the last LINE_OFFSETS_KEPT lines
    _rec_lines_seen: int = 0  # lines recorded from the followed file so far
    _rec_metric_last: Any = None
    _rec_command_pending: tuple[str, Any] | None = None
    _rec_command_last_s: float = 0.0
    _rec_command_timer: Any = None
    _rec_source: str | None = None

    def _record(self, event: Event) -> None:
        """Record ``event`` (a typed event of :mod:`specdash.session.events`) at the recorder's current time."""
        recorder = self.recorder
        if recorder is None:
            return
        event.t = recorder.now_s()
        recorder.record_event(event)
        self._notify_record_error(recorder)

    def _notify_record_error(self, recorder: Recorder) -> None:
        """Tell the user, once, that recording stopped (the recorder's :attr:`~Recorder.error`)."""
        if recorder.error and not getattr(self, "_rec_error_shown", False):
            self._rec_error_shown = True
            self.notify(recorder.error, severity="error", timeout=15)

    # -- hooks called by the app and the lifecycle actions -----------------------------------------------------
    def start_recording_hooks(self) -> None:
        """Start the metric poll; called once from the app's ``on_mount`` (no-op while not recording)."""
        self._rec_line_offsets = collections.deque(maxlen=LINE_OFFSETS_KEPT)
        if self.recorder is not None:
            self.set_interval(METRIC_POLL_S, self._record_metrics)

    def record_connection(self, status: Any) -> None:
        """Record a connection change (a :class:`specdash.hosts.base.ConnectionStatus`)."""
        state = getattr(status.state, "value", status.state)
        self._record(ConnectionEvent(state=str(state), detail=status.detail or ""))

    def record_log_batch(self, texts: list[str], offsets: list[int], source: str) -> None:
        """Record one tail batch: the decoded ``texts`` fed to the log pane, the byte offset where each starts in
        the file (:attr:`TailLines.offsets`) and the followed file ``source``."""
        if self.recorder is None:
            return
        if source != self._rec_source:
            self._rec_source = source
            self._rec_line_offsets.clear()
            self._rec_lines_seen = 0
        self._rec_line_offsets.extend(offsets)
        self._rec_lines_seen += len(texts)
        self.recorder.record_log(texts, offsets, source)  # a LogEvent's lines, without building the pairs
        self._notify_record_error(self.recorder)

    def _offset_of_line(self, line: Any) -> int | None:
        """Byte offset of the followed file's 1-based line ``line`` when it is among the lines kept, else None."""
        kept = self._rec_line_offsets
        index = line - 1 - (self._rec_lines_seen - len(kept)) if isinstance(line, int) and line > 0 else -1
        return kept[index] if 0 <= index < len(kept) else None

    def record_partial(self, text: str, source: str) -> None:
        """Record the followed log's unfinished last line (a progress bar updating in place): only its last
        ``\\r`` state, which is all the start-up bar reads."""
        self._record(PartialEvent(text=text.rstrip("\r").rsplit("\r", 1)[-1], source=source))

    def record_marker(self, text: str, level: str = "info") -> None:
        """Record a marker line (follower notes such as truncation or reconnects)."""
        self._record(MarkerEvent(text=text, level=level))

    def record_command(self, action: str, command: str | None, *, handle: Any = None, report: Any = None,
                       exit_reason: str | None = None) -> None:
        """Record a lifecycle command: ``action`` is ``launched``/``stopped``/``restarted``/``validated``;
        ``handle`` a :class:`specdash.server.RunHandle` (PID, PGID, log path) when there is one."""
        fields: dict[str, Any] = {"action": action, "command": command or getattr(handle, "command", "") or ""}
        if report is not None:
            fields["diagnostics"] = diagnostics_summary(report)
            fields["effective"] = effective_config(report)
        if handle is not None:
            fields["pid"] = getattr(handle, "leader_pid", None)
            fields["pgid"] = getattr(handle, "pgid", None)
            fields["log_path"] = getattr(handle, "log_path", None)
        if exit_reason:
            fields["exit_reason"] = exit_reason
        self._record(CommandEvent(**fields))

    # -- what the app's message handlers hand over --------------------------------------------------------------
    def record_finding(self, finding: Any) -> None:
        """Record a pinned :class:`specdash.logs.findings.Finding` (from :class:`LogPane.FindingAdded`)."""
        if self.recorder is None:
            return
        line = getattr(finding, "line", None)
        offset = self._offset_of_line(line)
        self._record(FindingEvent(code=finding.kind, severity=finding.severity, message=finding.message,
                                  detail=finding.explanation or "", line=line, offset=offset, key=finding.key or None))

    def _record_metrics(self) -> None:
        pane = getattr(self, "log_pane", None)
        analyzer = getattr(pane, "analyzer", None)
        if analyzer is None or self.recorder is None:
            return
        from specdash.logs.metrics import METRICS

        metrics = analyzer.metrics
        values = {name: metrics.current(name) for name in METRICS}
        values = {k: v for k, v in values.items() if v is not None}
        key = (len(getattr(metrics, "samples", ())), tuple(sorted(values.items())))
        if values and key != self._rec_metric_last:
            self._rec_metric_last = key
            self._record(MetricEvent(values=values))

    def record_gpu_sample(self, message: Any) -> None:
        """Record :class:`GpuPane.Sampled` (``message.view``: the snapshot and its classification)."""
        if self.recorder is None:
            return
        view = message.view
        classes = {p.pid: (p.process_class, p.user, p.reason, p.ppid, p.pgid) for p in view.processes}
        self._record(GpuEvent(**gpu_event_fields(view.snapshot, classes)))

    def record_kill(self, message: Any) -> None:
        """Record :class:`GpuPane.KillFinished` (``message.report``)."""
        report = message.report
        targets = [{"pid": o.pid, "name": o.command, "gpu": [i for i in o.gpu_indices], "used_mib": o.before_mib,
                    "user": o.user, "result": o.result, "class": o.process_class, "source": o.source}
                   for o in report.outcomes]
        signals = [s for o in report.outcomes for s in o.signals]
        if report.released:
            outcome = "released"
        elif all(o.result == "refused" for o in report.outcomes):
            outcome = "refused"
        else:
            outcome = "not_released"
        self._record(KillEvent(targets=targets, outcome=outcome, before_mib=report.before_mib,
                               after_mib=report.after_mib, signals=signals, detail=report.summary()))

    def record_validated(self, message: Any) -> None:
        """Record :class:`BuilderPane.CommandChanged`, debounced (see the module docstring)."""
        if self.recorder is None or not message.command.strip():
            return  # an empty editor is not a command worth a record
        self._rec_command_pending = (message.command, message.report)
        now = time.monotonic()
        if now - self._rec_command_last_s >= COMMAND_DEBOUNCE_S:
            self._flush_validated()
        elif self._rec_command_timer is None:
            delay = COMMAND_DEBOUNCE_S - (now - self._rec_command_last_s)
            self._rec_command_timer = self.set_timer(delay, self._flush_validated)

    def _flush_validated(self) -> None:
        self._rec_command_timer = None
        pending, self._rec_command_pending = self._rec_command_pending, None
        if pending is None:
            return
        self._rec_command_last_s = time.monotonic()
        command, report = pending
        self.record_command("validated", command, report=report)

    def record_bench(self, message: Any) -> None:
        """Record :class:`BenchPane.RunFinished` (``message.result``)."""
        result = message.result
        run = strip_requests(result.to_dict())
        summary = result.summary_json()
        summary.pop("requests", None)
        self._record(BenchEvent(result=summary, config=result.effective_config,
                                workload=str(result.settings.get("workload", "")),
                                label=str(result.settings.get("label", "")), run=run))

    def record_sweep(self, message: Any) -> None:
        """Record :class:`BenchPane.SweepFinished` (``message.result``)."""
        result = message.result
        rows = result.rows()
        points = []
        for row in rows:
            points.append({"label": row.name, "depth": row.depth, "output_tokens_per_s": row.output_tokens_per_s,
                           "speedup": row.speedup, "accept_length": row.accept_length, "stable": row.status == "ok",
                           "status": row.status, "spread_pct": row.spread_pct})
        data = result.to_dict()
        for point in data.get("points", []):
            point["runs"] = [strip_requests(r) for r in point.get("runs", [])]
        baseline = result.baseline()
        recommendation = result.recommendation()
        self._record(SweepEvent(points=points, baseline=baseline.point.name if baseline else None,
                                recommendation=recommendation.reason, workload=str(result.settings.get("workload", "")),
                                sweep=data))

    async def run_action(self, action: Any, default_namespace: Any = None, namespaces: Any = None) -> bool:
        """Record the action (as its binding id when a binding names it), then run it as Textual would."""
        if self.recorder is not None and isinstance(action, str):
            self._record(ActionEvent(binding=self._binding_id(action, default_namespace), detail=action))
        return await super().run_action(action, default_namespace, namespaces)  # type: ignore[misc]  # App, after this mixin

    def _binding_id(self, action: str, namespace: Any) -> str:
        for node in (namespace, self):
            for binding in getattr(node, "BINDINGS", ()) or ():
                if getattr(binding, "action", None) == action and getattr(binding, "id", None):
                    return binding.id
        return action

    def close_recording(self) -> None:
        """Flush the pending builder command and finish the recording (idempotent); called on unmount. Finishing
        closes the file and deletes it when the recorder was told to (``discard_if_empty``) and nothing worth
        replaying was recorded (:attr:`specdash.session.recorder.Recorder.worth_keeping`)."""
        if self.recorder is None:
            return
        if self._rec_command_pending is not None:
            self._flush_validated()
        self.recorder.finish()
