"""What a depth sweep will do, said before it starts: its configurations, how many server restarts, and how long
the start-ups will take as far as this host's history tells.

:func:`plan_sweep` reads a :class:`~specdash.bench.sweep.SweepRunner` (its definition, the command per point) and
its checkpoint without changing anything (a resumed sweep skips the points measured already). The start-up
estimate is ``restarts x`` the time the followed server took from its first start-up line to SGLang's ready line
(:attr:`specdash.logs.startup.StartupTracker.time_to_ready_s`); without one it is "unknown", said so. SGLang's
log timestamps are whole seconds, so a start-up timed at 0 s took under a second and is said so. The
benchmark runs themselves are counted, not timed: their duration depends on the server being measured.
"""

from __future__ import annotations

import dataclasses
import json

from specdash.bench.sweep import SweepPoint, SweepResult, SweepRunner


@dataclasses.dataclass(frozen=True)
class SweepPlan:
    """``configs``: (name, what the point changes in the launch command) in sweep order; ``measured``: names a
    checkpoint already holds (not run again); ``restarts``: server restarts the sweep will make (one per point to
    measure); ``repeats``: benchmark runs per point; ``startup_s``: seconds one start-up took on this host (None:
    unknown)."""

    configs: tuple[tuple[str, str], ...]
    measured: tuple[str, ...]
    restarts: int
    repeats: int
    startup_s: float | None

    @property
    def startup_total_s(self) -> float | None:
        """Seconds of start-ups in all (``restarts x startup_s``), None when unknown."""
        return None if self.startup_s is None else self.restarts * self.startup_s

    def estimate(self) -> str:
        """One line: ``start-ups about 12 min (4 x 3 min 0 s, the last start-up on this host)``, or why unknown."""
        if self.restarts == 0:
            return "no restart needed: every configuration is measured already"
        if self.startup_s is None:
            return (f"start-ups: unknown ({self.restarts} restart{_s(self.restarts)}; no start-up of this server "
                    "was seen on this host to time them by)")
        if self.startup_s < 1:  # whole-second timestamps: ready in the second the start-up began
            total, each = f"under {self.restarts} s", "under 1 s"
        else:
            total, each = f"about {_duration(self.startup_total_s or 0.0)}", _duration(self.startup_s)
        return (f"start-ups: {total} ({self.restarts} x {each}, the last start-up seen on this host), plus the "
                "benchmark runs")

    def lines(self) -> list[str]:
        """The plan as plain text lines, for a confirmation dialog."""
        out = []
        for name, change in self.configs:
            done = " (measured already: kept from the checkpoint)" if name in self.measured else ""
            out.append(f"  {name}: {change}{done}")
        runs = (self.restarts * self.repeats)
        return [
            f"{len(self.configs)} configurations, {self.restarts} server restart{_s(self.restarts)}, "
            f"{runs} benchmark run{_s(runs)} ({self.repeats} per configuration):",
            *out,
            self.estimate(),
            "At the end you choose: keep the fastest configuration (by output tokens/s) or restore your command.",
        ]


def describe_point(point: SweepPoint) -> str:
    """What ``point`` changes: ``no speculation (every --speculative* flag removed)`` or ``steps 15, topk 1, 16
    draft tokens`` (a field the point leaves alone: as in your command)."""
    if not point.speculative:
        return "no speculation (every --speculative* flag removed)"
    parts = []
    if point.speculative_algorithm:
        parts.append(point.speculative_algorithm)
    for label, value in (("steps", point.speculative_num_steps), ("topk", point.speculative_eagle_topk)):
        if value is not None:
            parts.append(f"{label} {value}")
    if point.speculative_num_draft_tokens is not None:
        parts.append(f"{point.speculative_num_draft_tokens} draft tokens")
    for flag, value in point.extra_flags:
        parts.append(f"{flag} removed" if value is None else flag if value is True else f"{flag} {value}")
    return ", ".join(parts) if parts else "your command's speculative settings"


def measured_in_checkpoint(runner: SweepRunner) -> set[str]:
    """Names of the points a resumable checkpoint of ``runner`` holds (same key, not finished; finished too when the
    runner measures some of its points again: those are not counted); empty when there is none, it is unreadable,
    finished or of another sweep. Reads only."""
    path = runner.checkpoint
    if path is None or not path.exists():
        return set()
    try:
        result = SweepResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except Exception:  # noqa: BLE001 - an unreadable checkpoint is the runner's to report when it starts
        return set()
    again: frozenset[str] = getattr(runner, "remeasure", frozenset())
    if result.key != runner.key or (result.finished and not again):
        return set()
    return {p.point.name for p in result.points if p.done and not (p.point.name in again and p.status == "unstable")}


def plan_sweep(runner: SweepRunner, startup_s: float | None) -> SweepPlan:
    """The plan of ``runner`` (see :class:`SweepPlan`); ``startup_s``: seconds of one start-up on this host, None
    when unknown (a negative value counts as unknown; 0 is a start-up within one second of the log's clock)."""
    measured = measured_in_checkpoint(runner)
    points = runner.definition.points
    configs = tuple((p.name, describe_point(p)) for p in points)
    restarts = sum(1 for p in points if p.name not in measured)
    known = startup_s if startup_s is not None and startup_s >= 0 else None
    return SweepPlan(configs, tuple(p.name for p in points if p.name in measured), restarts,
                     runner.definition.repeats, known)


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, sec = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {sec} s" if sec else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min"
