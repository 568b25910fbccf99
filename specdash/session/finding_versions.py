"""Each recorded finding as it last stood: the log analysis of a session file run again, as the replay does.

A session records a finding once, when it first appears (``finding`` event); the log pane keeps updating it as
lines come (an accept-length mean, a count of untrusted samples), and the file keeps only that first version. The
replay re-derives the findings from the recorded ``log`` lines (:mod:`specdash.app.replay`: a new ``source``
starts a new analysis, as following a new file does live), so its findings panel shows each finding as it stood
at the end of its log. :func:`last_versions` runs the same analysis (:class:`~specdash.logs.analyzer.LogAnalyzer`
over the lines the log pane would analyse: specdash's own polling left out, :mod:`specdash.logs.own_traffic`) and
gives, for each recorded finding, the version its log left it in, so ``specdash replay --summary`` agrees with the
replayed panel. Pure (no UI); a finding the analysis does not derive again keeps its recorded text.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from specdash.session.events import SWEEP_KEPT_RUNNING, SWEEP_RESTARTED, CommandEvent, FindingEvent, LogEvent
from specdash.session.reader import SessionLog


@dataclasses.dataclass(frozen=True)
class LastVersion:
    """A recorded finding as its log left it: ``severity``, ``message``, ``detail`` (the explanation), ``t`` the
    session time (seconds) of the last log line analysed for it (its log's last batch in the file)."""

    severity: str
    message: str
    detail: str
    t: float


def last_versions(log: SessionLog) -> dict[int, LastVersion]:
    """For each ``finding`` event of ``log`` whose text changed after it was recorded: its index in ``log.events``
    -> :class:`LastVersion`, the finding as the end of its log left it. Each recorded finding is matched, within
    the log it was raised in, to the finding the analysis raised for it (the first not yet matched of the same
    kind: the recorder records them in the order they are raised), then followed by that finding's key (a finding
    may change kind, e.g. "accept length not judged yet" becoming "draft almost never accepted"). A finding the
    analysis does not raise again, or raises with another text than the file recorded (a recording of another
    specdash version, whose replay says so), keeps its recorded text. Never raises on a damaged file: an event the
    analysis cannot read ends that log's analysis."""
    from specdash.logs.analyzer import LogAnalyzer
    from specdash.logs.own_traffic import without_own_lines
    from specdash.logs.startup import StartupHistory

    out: dict[int, LastVersion] = {}
    history = StartupHistory(Path("/nonexistent/specdash-summary/startup_history.json"), read_only=True)
    raised: list[Any] = []  # findings the analysis raised in the current log, in order

    def new_analyzer() -> Any:
        raised.clear()
        return LogAnalyzer(on_finding=raised.append, history=history)

    analyzer = new_analyzer()
    source: str | None = None
    pending: list[tuple[int, FindingEvent, Any]] = []  # (event index, event, the finding raised for it)
    used: set[int] = set()
    sweep_logs: set[str] = set()  # logs of depth sweep configurations: their findings give no depth advice
    last_t = 0.0
    broken = False

    def close() -> None:
        if not broken:
            now = {f.key: f for f in analyzer.findings if f.key}
            for index, event, first in pending:
                final = now.get(first.key) if first.key else first
                if final is None:
                    continue
                text = (final.severity, final.message, final.explanation or "")
                if text != (event.severity, event.message, event.detail):
                    out[index] = LastVersion(*text, last_t)
        pending.clear()
        used.clear()

    for index, event in enumerate(log.events):
        if isinstance(event, LogEvent):
            if event.source and event.source != source:
                close()
                source, broken = event.source, False
                analyzer = new_analyzer()
                analyzer.engine.in_depth_sweep = source in sweep_logs
            if broken:
                continue
            try:
                lines, _ = without_own_lines([str(text) for _, text in event.lines])
                analyzer.feed_many(lines)
            except Exception:  # noqa: BLE001 - a hand-edited file: its findings keep their recorded text
                broken = True
            last_t = float(event.t)
        elif isinstance(event, CommandEvent):
            if event.action == SWEEP_RESTARTED and event.log_path:
                sweep_logs.add(event.log_path)
            elif event.action == SWEEP_KEPT_RUNNING and event.log_path:  # the user's server from now on
                sweep_logs.discard(event.log_path)
                if event.log_path == source:
                    analyzer.engine.in_depth_sweep = False
        elif isinstance(event, FindingEvent):
            match = next((i for i, f in enumerate(raised) if i not in used and f.kind == event.code), None)
            if match is not None:
                used.add(match)
                if raised[match].message == event.message:  # else another specdash version wrote it: as recorded
                    pending.append((index, event, raised[match]))
    close()
    return out
