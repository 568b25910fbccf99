"""Speculative depth sweep: restart the server per configuration, benchmark each, recommend one.

Definition (YAML or :func:`default_sweep`): a list of points - by default a no-speculation baseline plus chains with
``speculative_eagle_topk = 1`` and 16, 10, 5 draft tokens (``speculative_num_steps`` 15, 9, 4; for topk 1 SGLang's
server_args.py forces draft tokens = steps + 1 and logs "speculative_num_draft_tokens is adjusted") - and the
number of repeats. Each point becomes a launch command by editing the builder's command (:func:`command_for_point`);
for each point the sweep calls the injected ``restart(command) -> url`` (the server lifecycle is not ours), waits
until ``GET /health`` answers 200, warms up, runs the workload ``repeats`` times, and checkpoints (JSON) so that
an interrupted sweep resumes where it stopped.

Rules (ours, after vLLM's tune_speculative_k and SGLang's bench_speculative):
* a run with failed requests is rejected (and rerun, up to ``max_rejected`` times per point);
* a point whose repeats disagree beyond their spread is "unstable" (:func:`specdash.bench.stats.repeat_spread`)
  and is never recommended;
* speedup = point's mean output tokens/s / baseline's mean output tokens/s, computed here (never copied); a point
  within noise of the baseline (:func:`specdash.bench.difference.judge`) says so in its note;
* recommendation = the fastest stable point; points within noise of it tie (:func:`specdash.bench.difference.judge`:
  difference <= the larger of the two points' repeat ranges, at least ``tie_floor_pct`` % of the fastest; with a
  single repeat per point the single-run floor of 5 %), and a tie goes to the smaller depth (the baseline counts
  as depth 0). A speculative point that is not faster than the baseline beyond noise is never called a speedup:
  the reason says "no configuration is faster than the baseline beyond its noise" and names the fastest stable one.
* two points are said to beat (or not beat) each other only when both are stable or their repeat ranges do not
  overlap: when only the baseline is stable and an unstable speculative point's repeats reach its range (or beat
  it), nothing is recommended ("measure them again before deciding", never "leave speculation off"); a speculative
  point slower than the baseline's mean is named but never offered to keep.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import functools
import hashlib
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx

from specdash.bench.acceptance import fit_chain_model, low_acceptance_warning
from specdash.bench.difference import Measure, judge
from specdash.bench.results import RunResult
from specdash.bench.runner import BenchError, BenchProgress, BenchRunner, BenchSettings
from specdash.bench.stats import DEFAULT_UNSTABLE_TOLERANCE_PCT, RepeatSpread, repeat_spread
from specdash.bench.store import write_json_atomic
from specdash.sglang.command_edit import CommandEditError, flag_value, remove_speculative_flags, set_flag

CHECKPOINT_VERSION = 1
DEFAULT_TIE_FLOOR_PCT = 1.0

RestartFn = Callable[[str], Awaitable[str]]


class SweepError(Exception):
    """The sweep cannot run or resume (one-line message)."""


@dataclasses.dataclass(frozen=True)
class SweepPoint:
    """One configuration. ``speculative`` False = baseline (every ``--speculative*`` flag removed). Otherwise the
    given SGLang fields are set (``None`` = keep what the base command says); ``extra_flags``: further
    ``(flag, value)`` edits (value ``None`` removes the flag, ``True`` sets a bare flag)."""

    name: str
    speculative: bool = True
    speculative_algorithm: str | None = None
    speculative_num_steps: int | None = None
    speculative_eagle_topk: int | None = None
    speculative_num_draft_tokens: int | None = None
    extra_flags: tuple[tuple[str, Any], ...] = ()

    @property
    def depth(self) -> int:
        """Draft tokens verified per step (``speculative_num_draft_tokens``); 0 for the baseline."""
        if not self.speculative:
            return 0
        if self.speculative_num_draft_tokens is not None:
            return self.speculative_num_draft_tokens
        return (self.speculative_num_steps or 0) + 1

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        data = dataclasses.asdict(self)
        data["extra_flags"] = [list(pair) for pair in self.extra_flags]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> SweepPoint:
        """From a dict as in a sweep YAML file. Raises :class:`SweepError` for unknown keys or a missing name."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise SweepError(f"sweep point: unknown key(s) {', '.join(sorted(unknown))}")
        if not data.get("name"):
            raise SweepError("sweep point without a name")
        kwargs = dict(data)
        extra = kwargs.get("extra_flags") or ()
        if isinstance(extra, dict):
            extra = extra.items()
        kwargs["extra_flags"] = tuple((str(k), v) for k, v in extra)
        return cls(**kwargs)


@dataclasses.dataclass(frozen=True)
class SweepDefinition:
    """Points to run, ``repeats`` per point, ``max_rejected`` reruns allowed per point for runs with failed
    requests, ``ready_timeout_s`` to wait for ``/health`` after a restart, ``unstable_tolerance_pct``: repeats
    may differ by this share of their median before a point can be called unstable (see
    :func:`specdash.bench.stats.repeat_spread`)."""

    points: tuple[SweepPoint, ...]
    repeats: int = 3
    max_rejected: int = 2
    ready_timeout_s: float = 1800.0
    unstable_tolerance_pct: float = DEFAULT_UNSTABLE_TOLERANCE_PCT

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return {
            "points": [p.to_dict() for p in self.points],
            "repeats": self.repeats,
            "max_rejected": self.max_rejected,
            "ready_timeout_s": self.ready_timeout_s,
            "unstable_tolerance_pct": self.unstable_tolerance_pct,
        }

    @classmethod
    def from_dict(cls, data: dict) -> SweepDefinition:
        """From a parsed YAML/JSON mapping with ``points`` (list) and optional ``repeats``, ``max_rejected``,
        ``ready_timeout_s``, ``unstable_tolerance_pct``. Raises :class:`SweepError` when malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("points"), list) or not data["points"]:
            raise SweepError("sweep definition needs a non-empty 'points' list")
        points = tuple(SweepPoint.from_dict(p) for p in data["points"])
        if len({p.name for p in points}) != len(points):
            raise SweepError("sweep point names must be unique")
        repeats = int(data.get("repeats", 3))
        if repeats < 1:
            raise SweepError("repeats must be >= 1")
        return cls(
            points,
            repeats,
            int(data.get("max_rejected", 2)),
            float(data.get("ready_timeout_s", 1800.0)),
            float(data.get("unstable_tolerance_pct", DEFAULT_UNSTABLE_TOLERANCE_PCT)),
        )


def default_sweep(repeats: int = 3) -> SweepDefinition:
    """Baseline plus topk-1 chains with 16, 10, 5 draft tokens (steps 15, 9, 4)."""
    chains = [(15, 16), (9, 10), (4, 5)]
    points = [SweepPoint("baseline", speculative=False)] + [
        SweepPoint(f"chain-{n}", True, None, steps, 1, n) for steps, n in chains
    ]
    return SweepDefinition(tuple(points), repeats)


def load_sweep_yaml(text: str) -> SweepDefinition:
    """Parse a sweep definition from YAML text (see :meth:`SweepDefinition.from_dict`). Raises SweepError."""
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise SweepError(f"sweep YAML: {str(exc).splitlines()[0]}") from None
    return SweepDefinition.from_dict(data)


def command_for_point(base_command: str, point: SweepPoint, flag_release: str | None = None) -> str:
    """The launch command for ``point``: the base command with the point's flags set (or, for the baseline,
    every ``--speculative*`` flag removed), then its ``extra_flags``. Flags are found the way SGLang's argparse of
    flag-table ``flag_release`` (None: the newest) finds them and edited in place, so the user's formatting
    (continuations, comments, quoting, environment prefixes) survives except for the edited values
    (:mod:`specdash.sglang.command_edit`). Raises :class:`SweepError` when the text holds no launch command or
    a speculative point has no algorithm (neither in the point nor in the base command)."""
    try:
        return _edit_for_point(base_command, point, flag_release)
    except CommandEditError as exc:
        raise SweepError(f"sweep point {point.name}: {exc}") from None


def _edit_for_point(base_command: str, point: SweepPoint, release: str | None) -> str:
    if not point.speculative:
        command = remove_speculative_flags(base_command, release)
    else:
        command = base_command
        if point.speculative_algorithm:
            command = set_flag(command, "--speculative-algorithm", point.speculative_algorithm, release)
        elif not flag_value(command, "--speculative-algorithm", release):
            raise SweepError(
                f"sweep point {point.name}: the base command has no --speculative-algorithm; set one in the builder"
            )
        for flag, value in (
            ("--speculative-num-steps", point.speculative_num_steps),
            ("--speculative-eagle-topk", point.speculative_eagle_topk),
            ("--speculative-num-draft-tokens", point.speculative_num_draft_tokens),
        ):
            if value is not None:
                command = set_flag(command, flag, value, release)
    for flag, value in point.extra_flags:
        command = set_flag(command, flag, value, release)
    return command


@dataclasses.dataclass
class PointResult:
    """What the sweep measured at one point.

    ``status``: "ok", "unstable" or "failed"; ``error``: why it failed; ``command``/``url``: what was launched;
    ``runs``: accepted runs (full :class:`RunResult`, raw data included); ``rejected``: one line per rejected run;
    ``throughput``: spread of output tokens/s over accepted runs; ``accept_length``: mean over runs that had one,
    ``accept_length_source``; ``ttft_p50_ms``/``itl_p50_ms``/``tpot_p50_ms``: mean over runs of each run's p50;
    ``warning``: the low-acceptance advice when it applies; ``earlier_values``: output tokens/s of the repeats an
    earlier pass measured here and judged unstable, when this point was measured again (:class:`SweepRunner`'s
    ``remeasure``); its status is then that of the new repeats alone.
    """

    point: SweepPoint
    status: str
    command: str = ""
    url: str = ""
    error: str | None = None
    runs: list[RunResult] = dataclasses.field(default_factory=list)
    rejected: list[str] = dataclasses.field(default_factory=list)
    throughput: RepeatSpread | None = None
    accept_length: float | None = None
    accept_length_source: str = "none"
    ttft_p50_ms: float | None = None
    itl_p50_ms: float | None = None
    tpot_p50_ms: float | None = None
    warning: str | None = None
    earlier_values: list[float] = dataclasses.field(default_factory=list)

    @property
    def done(self) -> bool:
        """Measured (ok or unstable): a resumed sweep skips it; failed points are retried."""
        return self.status in ("ok", "unstable")

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        data["point"] = self.point.to_dict()
        data["runs"] = [r.to_dict() for r in self.runs]
        data["throughput"] = self.throughput.to_dict() if self.throughput else None
        return data

    @classmethod
    def from_dict(cls, data: dict) -> PointResult:
        """Inverse of :meth:`to_dict`."""
        kwargs = dict(data)
        kwargs["point"] = SweepPoint.from_dict(data["point"])
        kwargs["runs"] = [RunResult.from_dict(r) for r in data.get("runs", [])]
        kwargs["throughput"] = RepeatSpread.from_dict(data["throughput"]) if data.get("throughput") else None
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in kwargs.items() if k in names})


def summarize_point(
    point: SweepPoint,
    runs: list[RunResult],
    rejected: list[str],
    command: str,
    url: str,
    tolerance_pct: float = DEFAULT_UNSTABLE_TOLERANCE_PCT,
) -> PointResult:
    """Build a :class:`PointResult` from accepted runs (pure); ``tolerance_pct`` as in :func:`repeat_spread`."""
    if not runs:
        reason = "; ".join(rejected[-1:]) or "no run"
        return PointResult(point, "failed", command, url, f"no accepted run ({reason})", [], rejected)
    spread = repeat_spread(
        [r.output_tokens_per_s for r in runs], [r.output_rate_se for r in runs], tolerance_pct=tolerance_pct
    )
    accepts = [r.accept_length for r in runs if r.accept_length is not None]
    accept = sum(accepts) / len(accepts) if accepts else None
    sources = sorted({r.accept_length_source for r in runs if r.accept_length is not None})

    def mean_of(values: list[float | None]) -> float | None:
        vals = [v for v in values if v is not None]
        return sum(vals) / len(vals) if vals else None

    warning = low_acceptance_warning(accept, point.depth) if point.speculative else None
    return PointResult(
        point=point,
        status="unstable" if spread.unstable else "ok",
        command=command,
        url=url,
        runs=runs,
        rejected=rejected,
        throughput=spread,
        accept_length=accept,
        accept_length_source="+".join(sources) if sources else "none",
        ttft_p50_ms=mean_of([r.ttft_ms.p50 for r in runs]),
        itl_p50_ms=mean_of([r.itl_ms.p50 for r in runs]),
        tpot_p50_ms=mean_of([r.tpot_ms.p50 for r in runs]),
        warning=warning,
    )


@dataclasses.dataclass(frozen=True)
class SweepRow:
    """One row of the results table. ``output_tokens_per_s``: mean over repeats; ``spread_pct``: range / median;
    ``speedup``: vs the baseline's mean (None without a measured baseline); ``alpha``: per-token acceptance rate
    estimated from this point's accept length (chain model); ``predicted_accept_length``: what the model fitted
    at the reference point predicts here (None for the reference itself and the baseline)."""

    name: str
    depth: int
    speculative_num_steps: int | None
    speculative_eagle_topk: int | None
    speculative_num_draft_tokens: int | None
    status: str
    output_tokens_per_s: float | None
    spread_pct: float | None
    speedup: float | None
    accept_length: float | None
    alpha: float | None
    predicted_accept_length: float | None
    ttft_p50_ms: float | None
    itl_p50_ms: float | None
    note: str


@dataclasses.dataclass(frozen=True)
class Recommendation:
    """``name``: the fastest stable point, the one to keep (None when nothing stable was measured); ``reason``: one
    line; ``beats_baseline``: True when that point is faster than the measured baseline beyond noise, False when it
    is not (``reason`` then says "no configuration is faster than the baseline beyond its noise"), None when there
    is no measured baseline to compare with or the point is the baseline itself."""

    name: str | None
    reason: str
    beats_baseline: bool | None = None


@dataclasses.dataclass
class SweepResult:
    """A sweep, complete or not. ``key``: fingerprint of (definition, base command, benchmark settings) that a
    checkpoint must match to resume; ``points``: results in definition order (missing points not yet measured);
    ``finished``: every point was attempted; ``effective_config``: caller's configuration (GPU, version ...)."""

    definition: SweepDefinition
    base_command: str
    settings: dict
    key: str
    started_at: str
    effective_config: dict = dataclasses.field(default_factory=dict)
    points: list[PointResult] = dataclasses.field(default_factory=list)
    finished: bool = False
    cancelled: bool = False

    def point(self, name: str) -> PointResult | None:
        """The result of the point called ``name``, if measured."""
        return next((p for p in self.points if p.point.name == name), None)

    def baseline(self) -> PointResult | None:
        """The measured (not failed) baseline point, if any."""
        return next((p for p in self.points if not p.point.speculative and p.throughput), None)

    def rows(self) -> list[SweepRow]:
        """Table rows in definition order, speedups computed against the baseline's mean output tokens/s."""
        base = self.baseline()
        base_rate = base.throughput.mean if base and base.throughput else None
        reference = self._reference()
        model = (fit_chain_model(reference.accept_length, reference.point.depth)
                 if reference and reference.accept_length is not None else None)
        rows = []
        for p in self.points:
            rate = p.throughput.mean if p.throughput else None
            alpha = predicted = None
            if p.point.speculative and p.accept_length is not None and p.point.depth >= 2:
                alpha = fit_chain_model(p.accept_length, p.point.depth).alpha
                if model is not None and p is not reference:
                    predicted = model.predict(p.point.depth - 1).accept_length
            notes = []
            if p.status == "failed":
                notes.append(p.error or "failed")
            if p.status == "unstable":
                notes.append(f"unstable: repeats differ by {p.throughput.range_pct:.1f} %")  # type: ignore[union-attr]
            if p.earlier_values:
                notes.append(f"measured again (the earlier repeats {_values(p.earlier_values)} were unstable)")
            if p.status == "unstable" and p.point.speculative and base is not None and base.throughput:
                # never compared with the baseline by noise (its repeats disagree); only ranges apart say something
                if _below(base, p):
                    notes.append(f"every repeat above the baseline's ({_span(base)})")
                elif _below(p, base):
                    notes.append(f"every repeat below the baseline's ({_span(base)})")
            elif self.versus_baseline(p) == "within noise":
                notes.append("within noise of the baseline")  # its speedup is not shown to be real
            if p.rejected:
                notes.append(f"{len(p.rejected)} run(s) rejected for failed requests")
            if p.warning:
                notes.append(p.warning)
            rows.append(
                SweepRow(
                    name=p.point.name,
                    depth=p.point.depth,
                    speculative_num_steps=p.point.speculative_num_steps,
                    speculative_eagle_topk=p.point.speculative_eagle_topk,
                    speculative_num_draft_tokens=p.point.speculative_num_draft_tokens,
                    status=p.status,
                    output_tokens_per_s=rate,
                    spread_pct=p.throughput.range_pct if p.throughput else None,
                    speedup=rate / base_rate if rate is not None and base_rate else None,
                    accept_length=p.accept_length,
                    alpha=alpha,
                    predicted_accept_length=predicted,
                    ttft_p50_ms=p.ttft_p50_ms,
                    itl_p50_ms=p.itl_p50_ms,
                    note="; ".join(notes),
                )
            )
        return rows

    def versus_baseline(self, p: PointResult) -> str:
        """How speculative point ``p`` compares with the measured baseline by mean output tokens/s: ``"B"`` (``p``
        faster beyond noise), ``"A"`` (slower beyond noise), ``"within noise"``, or ``""`` (``p`` is the baseline,
        not measured, or no baseline was measured). One rule (:func:`specdash.bench.difference.judge`) for the
        table's note and the recommendation."""
        base = self.baseline()
        if not p.point.speculative or not p.throughput or base is None or not base.throughput:
            return ""
        return judge("output_tokens_per_s", Measure.of_repeats(base.throughput),
                     Measure.of_repeats(p.throughput)).verdict

    def _reference(self) -> PointResult | None:
        """The stable speculative point with an accept length and the most draft tokens (fits the model)."""
        usable = [p for p in self.points if p.point.speculative and p.accept_length is not None and p.point.depth >= 2]
        return max(usable, key=lambda p: p.point.depth) if usable else None

    def unstable(self) -> list[PointResult]:
        """The measured points whose repeats disagreed (status "unstable"), in definition order: they are never
        recommended, and :class:`SweepRunner` with ``remeasure`` measures them again."""
        return [p for p in self.points if p.status == "unstable" and p.throughput]

    def unstable_lines(self) -> list[str]:
        """One line per unstable point: ``baseline: repeats 2644 / 2136 / 2128 output tokens/s, 24.2 % apart (their
        noise allows 5.0 %)`` (the allowance: :func:`specdash.bench.stats.repeat_spread`)."""
        lines = []
        for p in self.unstable():
            spread = p.throughput
            assert spread is not None  # unstable() keeps measured points only
            allowed = spread.noise / abs(spread.median) * 100.0 if spread.median else 0.0
            lines.append(f"{p.point.name}: repeats {_values(spread.values)} output tokens/s, {spread.range_pct:.1f} % "
                         f"apart (their noise allows {allowed:.1f} %)")
        return lines

    def _why_none_stable(self) -> str:
        """Why no point can be kept: ``no stable point measured yet``, or, when every measured point was unstable,
        by how much their repeats differed and the usual cause (other work on the machine)."""
        unstable = [p for p in self.points if p.status == "unstable" and p.throughput]
        if not unstable:
            return "no stable point measured yet"
        worst = max(p.throughput.range_pct for p in unstable)  # type: ignore[union-attr]
        tolerance = self.definition.unstable_tolerance_pct
        return (f"no stable point: the repeats of {'every' if len(unstable) > 1 else 'the'} measured configuration "
                f"differ by more than {tolerance:g} % (up to {worst:.1f} %), so no difference between them can be "
                "trusted. Usually other work on the machine (CPU or GPU shared with other jobs) varies between the "
                "repeats: rerun the sweep when the machine is quiet")

    def recommendation(self, tie_floor_pct: float = DEFAULT_TIE_FLOOR_PCT) -> Recommendation:
        """The fastest stable point; ties within noise go to the smaller depth (see module docstring).

        Two points are compared only when both are stable or their repeat ranges do not overlap
        (:func:`_comparable`): an unstable speculative point whose repeats reach the baseline's range or above it
        is never said to lose to the baseline, so the baseline is then not recommended ("leave speculation off")
        and nothing is offered to keep (``name`` None, the reason says which configs to measure again). Nor is a
        speculative point slower than an unstable baseline offered to keep."""
        stable = [p for p in self.points if p.status == "ok" and p.throughput]
        if not stable:
            return Recommendation(None, self._why_none_stable())
        fastest = max(stable, key=lambda p: p.throughput.mean)  # type: ignore[union-attr]

        def ties(p: PointResult) -> bool:  # the one noise rule (specdash.bench.difference), this sweep's floor
            mine, top = Measure.of_repeats(p.throughput), Measure.of_repeats(fastest.throughput)  # type: ignore[arg-type]
            return judge("output_tokens_per_s", mine, top, repeats_floor_pct=tie_floor_pct).verdict != "B"

        tied = [p for p in stable if ties(p)]
        chosen = min(tied, key=lambda p: (p.point.depth, -p.throughput.mean))  # type: ignore[union-attr]
        base = self.baseline()
        rate = chosen.throughput.mean  # type: ignore[union-attr]
        speed = f"{rate:.1f} output tokens/s"
        if base and base.throughput:
            speed += f", {rate / base.throughput.mean:.2f}x baseline"
            if base.status != "ok" and chosen is not base:  # the ratio's denominator is itself not trusted
                speed = f"{rate:.1f} output tokens/s, {rate / base.throughput.mean:.2f}x a baseline that was " \
                        f"{base.status} (not a reliable ratio)"
        named = f"{chosen.point.name} ({chosen.point.depth} draft tokens, {speed})"
        tie = f"ties with the fastest {fastest.point.name} within noise; the smaller depth wins the tie"
        # unstable speculative points that cannot be said to lose to the baseline (their repeats reach its range)
        undecided = [p for p in self.unstable() if p.point.speculative and base is not None
                     and not _below(p, base)]
        beats = None
        if not chosen.point.speculative:
            if undecided:  # the speculative configs cannot be compared with it: nothing to conclude, nothing to keep
                return Recommendation(None, self._only_baseline_stable(chosen, undecided))
            reason = (
                f"baseline ({speed}): no speculative config beats it beyond noise - leave speculation off, or try a "
                "better draft / smaller batch"
            )
        elif self.versus_baseline(chosen) in ("within noise", "A"):  # not a speedup: say so, still name it
            beats = False
            faster = [p.point.name for p in stable if self.versus_baseline(p) == "B"]
            if faster:  # a tied deeper config is faster than the baseline beyond noise: not "no configuration"
                reason = (f"{named} {tie}, but it is not faster than the baseline beyond its noise; "
                          f"{', '.join(faster)} {'is' if len(faster) == 1 else 'are'}")
            else:
                reason = (f"no {'stable ' if undecided else ''}configuration is faster than the baseline beyond its "
                          f"noise; the fastest stable is {named}" + (f" ({tie})" if chosen is not fastest else ""))
        else:
            beats = True if base is not None and base.throughput and _comparable(chosen, base) else None
            reason = f"{named} is the fastest stable config" if chosen is fastest else f"{named} {tie}"
        slower = bool(chosen.point.speculative and base and base.throughput and base.throughput.mean >= rate)
        if slower:
            assert base is not None and base.throughput is not None
            reason += f"; but it is slower than the baseline's {base.throughput.mean:.1f} output tokens/s" + (
                f", which was not stable ({base.status}) - rerun the baseline before trusting this"
                if base.status != "ok" else "")
        if undecided and chosen.point.speculative:
            assert base is not None
            reason += "; " + _undecided_text(undecided, base)
        # never an invitation to keep a configuration slower than the baseline (its text says why)
        return Recommendation(None if slower else chosen.point.name, reason, beats)

    def _only_baseline_stable(self, base: PointResult, undecided: list[PointResult]) -> str:
        """The reason when the baseline is the fastest stable point but speculative points whose repeats disagree
        reach its range or beat it: ``only the baseline was stable (1567.9 output tokens/s); the repeats of ...``
        and which to measure again (no "leave speculation off": that comparison cannot be made)."""
        assert base.throughput is not None
        others = [p for p in self.points if p.status == "ok" and p.point.speculative]
        head = (f"only the baseline was stable ({base.throughput.mean:.1f} output tokens/s)" if not others else
                f"the baseline is the fastest stable config ({base.throughput.mean:.1f} output tokens/s; "
                f"{', '.join(p.point.name for p in others)} not faster beyond noise)")
        return f"{head}; {_undecided_text(undecided, base)}"

    def to_dict(self) -> dict:
        """JSON-ready dict (the checkpoint / result file)."""
        return {
            "version": CHECKPOINT_VERSION,
            "key": self.key,
            "definition": self.definition.to_dict(),
            "base_command": self.base_command,
            "settings": self.settings,
            "started_at": self.started_at,
            "effective_config": self.effective_config,
            "points": [p.to_dict() for p in self.points],
            "finished": self.finished,
            "cancelled": self.cancelled,
        }

    @classmethod
    def from_dict(cls, data: dict) -> SweepResult:
        """Inverse of :meth:`to_dict`. Raises :class:`SweepError` for another checkpoint version."""
        if data.get("version") != CHECKPOINT_VERSION:
            raise SweepError(f"sweep checkpoint version {data.get('version')} is not {CHECKPOINT_VERSION}")
        return cls(
            definition=SweepDefinition.from_dict(data["definition"]),
            base_command=data["base_command"],
            settings=data["settings"],
            key=data["key"],
            started_at=data["started_at"],
            effective_config=data.get("effective_config", {}),
            points=[PointResult.from_dict(p) for p in data["points"]],
            finished=data.get("finished", False),
            cancelled=data.get("cancelled", False),
        )


def _span(p: PointResult) -> str:
    """``1518-1600``: the range of a point's repeats (output tokens/s)."""
    assert p.throughput is not None
    return f"{min(p.throughput.values):.0f}-{max(p.throughput.values):.0f}"


def _below(p: PointResult, base: PointResult) -> bool:
    """Every repeat of ``p`` was slower than every repeat of ``base`` (their ranges do not overlap)."""
    assert p.throughput is not None and base.throughput is not None
    return max(p.throughput.values) < min(base.throughput.values)


def _comparable(a: PointResult, b: PointResult) -> bool:
    """Whether ``a`` and ``b`` may be said to beat (or not beat) each other: both stable, or their repeat ranges do
    not overlap (every repeat of one faster than every repeat of the other)."""
    if a.throughput is None or b.throughput is None:
        return False
    return (a.status == b.status == "ok") or _below(a, b) or _below(b, a)


def _undecided_text(undecided: list[PointResult], base: PointResult) -> str:
    """What can be said of speculative points that are unstable and not all below the baseline, against the
    baseline's range: ``the repeats of chain-16 (1716-2186) and chain-5 (1705-2150 output tokens/s) disagree
    (the baseline's: 1518-1600); every repeat of them was faster than every baseline repeat, but which configuration
    to keep cannot be told yet - measure them again before deciding`` (or: which of them overlap the baseline's
    range, so whether speculation helps is not known yet)."""
    def listed(points: list[PointResult]) -> str:
        names = [f"{p.point.name} ({_span(p)})" for p in points]
        return ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]

    one = len(undecided) == 1
    overlap = [p for p in undecided if not _below(base, p)]
    text = f"the repeats of {listed(undecided)[:-1]} output tokens/s) disagree (the baseline's: {_span(base)}); "
    if not overlap:
        text += (f"every repeat of {'it' if one else 'them'} was faster than every baseline repeat, but "
                 f"{'its speedup is' if one else 'which configuration to keep is'} not known yet")
    else:
        names = ", ".join(p.point.name for p in overlap)
        text += (f"{names} overlap{'s' if len(overlap) == 1 else ''} the baseline's range, so whether speculation "
                 "helps here is not known yet")
    return text + f" - measure {'it' if one else 'them'} again before deciding"


def _values(values: Any) -> str:
    """``2644 / 2136 / 2128``: repeat figures (output tokens/s) as the table and dialogs say them."""
    return " / ".join(f"{v:.0f}" for v in values)


def sweep_key(definition: SweepDefinition, base_command: str, settings: BenchSettings) -> str:
    """Fingerprint (16 hex digits) of what a sweep measures; a checkpoint resumes only with the same key."""
    blob = json.dumps(
        {"d": definition.to_dict(), "c": base_command, "s": {**settings.to_dict(), "url": None}},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


@dataclasses.dataclass(frozen=True)
class SweepEvent:
    """Progress of a sweep for a display: ``index``/``total`` points, ``point`` name, ``phase`` ("restart",
    "waiting", "warmup+run", "run", "rejected", "held", "point-done", "finished", "cancelled"), one-line ``message``
    (for "held": what starts once the sweep is released),
    and the live :class:`BenchProgress` of the current run (or None)."""

    index: int
    total: int
    point: str
    phase: str
    message: str
    bench: BenchProgress | None = None


async def wait_until_ready(url: str, timeout_s: float, poll_s: float = 0.5) -> None:
    """Poll ``GET url/health`` until it answers 200 (SGLang's readiness, ``http_server.py``). Raises
    :class:`SweepError` after ``timeout_s``. The requests are marked as specdash's own
    (:mod:`specdash.logs.own_traffic`): the log pane hides their access lines."""
    from specdash.logs.own_traffic import marked

    deadline = time.monotonic() + timeout_s
    async with httpx.AsyncClient(timeout=5.0, trust_env=False, verify=url.startswith("https://")) as client:
        while True:
            try:
                if (await client.get(url.rstrip("/") + marked("/health"))).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            if time.monotonic() >= deadline:
                raise SweepError(f"server at {url} not ready after {timeout_s:.0f} s")
            await asyncio.sleep(poll_s)


class SweepRunner:
    """Runs a sweep; ``await run()``; ``cancel()`` stops after aborting the current benchmark run (the current
    point is not checkpointed, so a resume measures it again).

    ``restart``: async callable ``restart(command) -> server_url`` provided by the server lifecycle;
    ``settings``: benchmark settings for every run (its ``url`` is replaced by what ``restart`` returns; its
    ``warmup_requests`` are sent before the first repeat of each point only); ``checkpoint``: JSON file written
    after each point and read on start to resume an unfinished sweep (a finished one is renamed
    ``<stem>-<start time>.json`` and a new sweep starts); ``effective_config``: stored with the result;
    ``on_event``: progress callback; ``log_accept_samples``: passed to each :class:`BenchRunner`;
    ``flag_release``: the flag-table release whose argparse reads the base command (None: the newest);
    ``remeasure``: names of points to measure again - the checkpoint (finished or not; it must exist) is resumed,
    the named points that it holds as "unstable" get ``repeats`` new repeats (the server restarted for each; the
    earlier repeats are kept in ``earlier_values``), every other point stays as measured.
    """

    def __init__(
        self,
        definition: SweepDefinition,
        base_command: str,
        restart: RestartFn,
        settings: BenchSettings,
        checkpoint: Path | None = None,
        *,
        effective_config: dict | None = None,
        on_event: Callable[[SweepEvent], None] | None = None,
        log_accept_samples: Any = None,
        flag_release: str | None = None,
        remeasure: tuple[str, ...] | frozenset[str] | set[str] = (),
    ) -> None:
        self.definition = definition
        self.remeasure = frozenset(remeasure)
        self._earlier: dict[str, list[float]] = {}
        self.base_command = base_command
        self.restart = restart
        self.settings = settings
        self.checkpoint = checkpoint
        self.effective_config = dict(effective_config or {})
        self.on_event = on_event
        self.log_accept_samples = log_accept_samples
        self._cancelled = False
        self._go = asyncio.Event()  # cleared by hold(): no new restart or benchmark run starts
        self._go.set()
        self._runner: BenchRunner | None = None
        #: the result so far while :meth:`run` runs (its measured points, in definition order), else None
        self.partial: SweepResult | None = None
        self.key = sweep_key(definition, base_command, settings)
        # fail early on a point that cannot become a command
        self.commands = {p.name: command_for_point(base_command, p, flag_release) for p in definition.points}

    def cancel(self) -> None:
        """Stop the sweep: the current benchmark run is cancelled, nothing further is started."""
        self._cancelled = True
        self._go.set()
        if self._runner is not None:
            self._runner.cancel()

    def hold(self) -> None:
        """Hold the sweep where it is (e.g. while the user is asked whether to stop or restart the server): the
        restart or benchmark run in flight goes on, no new one starts and the sweep does not end until
        :meth:`release` (or :meth:`cancel`)."""
        self._go.clear()

    def release(self) -> None:
        """Let a held sweep go on."""
        self._go.set()

    @property
    def held(self) -> bool:
        """True between :meth:`hold` and :meth:`release`."""
        return not self._go.is_set()

    async def _wait_if_held(self, index: int, point: str, next_step: str) -> None:
        """Wait while held; the "held" event's message is what starts once released (``next_step``: ``"the restart
        for chain-5"``, ``"repeat 2/3 of chain-5"``, ``"its end"``)."""
        if not self._go.is_set():
            self._emit(index, point, "held", next_step)
            await self._go.wait()

    def _emit(self, index: int, point: str, phase: str, message: str, bench: BenchProgress | None = None) -> None:
        if self.on_event:
            self.on_event(SweepEvent(index, len(self.definition.points), point, phase, message, bench))

    def _load(self) -> SweepResult:
        if self.remeasure and not (self.checkpoint and self.checkpoint.exists()):
            raise SweepError("nothing to measure again: the sweep's checkpoint is gone")
        if self.checkpoint and self.checkpoint.exists():
            try:
                data = json.loads(self.checkpoint.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise SweepError(f"cannot read sweep checkpoint {self.checkpoint}: {exc}") from None
            result = SweepResult.from_dict(data)
            if result.key != self.key:
                raise SweepError(
                    f"checkpoint {self.checkpoint} belongs to another sweep (definition, command or workload differ)"
                )
            if self.remeasure:
                again = [p for p in result.points if p.point.name in self.remeasure and p.status == "unstable"]
                self._earlier = {p.point.name: [*p.earlier_values, *(p.throughput.values if p.throughput else ())]
                                 for p in again}
                result.points = [p for p in result.points if p.done and p not in again]
                result.finished = result.cancelled = False
                return result
            if not result.finished:
                result.points = [p for p in result.points if p.done]
                result.cancelled = False
                return result
            # a finished sweep is kept under its start time; this one starts afresh
            stamp = result.started_at.replace(":", "").replace("-", "").replace("+0000", "Z")
            self.checkpoint.rename(self.checkpoint.with_name(f"{self.checkpoint.stem}-{stamp}.json"))
        return SweepResult(
            definition=self.definition,
            base_command=self.base_command,
            settings=self.settings.to_dict(),
            key=self.key,
            started_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
            effective_config=self.effective_config,
        )

    def _save(self, result: SweepResult) -> None:
        if self.checkpoint:
            order = {p.name: i for i, p in enumerate(self.definition.points)}
            result.points.sort(key=lambda p: order.get(p.point.name, len(order)))
            write_json_atomic(self.checkpoint, result.to_dict())

    async def run(self) -> SweepResult:
        """Run (or resume) the sweep and return its :class:`SweepResult` (also left in the checkpoint).

        Raises :class:`SweepError` for an unreadable or foreign checkpoint. A failing restart or readiness wait
        marks that point "failed" and the sweep goes on.
        """
        result = self.partial = self._load()
        done = {p.point.name for p in result.points}
        for index, point in enumerate(self.definition.points):
            if point.name not in done:
                await self._wait_if_held(index, point.name, f"the restart for {point.name}")
            if self._cancelled:
                break
            if point.name in done:
                self._emit(index, point.name, "point-done", f"{point.name}: from checkpoint")
                continue
            measured = await self._run_point(index, point)
            if measured is None:  # cancelled mid-point
                break
            measured.earlier_values = list(self._earlier.get(point.name, ()))
            result.points = [p for p in result.points if p.point.name != point.name] + [measured]
            self._save(result)
            self._emit(index, point.name, "point-done", f"{point.name}: {measured.status}")
        # no end (and no keep question) while held
        await self._wait_if_held(len(self.definition.points) - 1, "", "its end")
        result.cancelled = self._cancelled
        result.finished = not self._cancelled
        self._save(result)
        self._emit(len(self.definition.points), "", "cancelled" if self._cancelled else "finished", "sweep done")
        return result

    async def _run_point(self, index: int, point: SweepPoint) -> PointResult | None:
        command = self.commands[point.name]
        self._emit(index, point.name, "restart", f"restarting the server for {point.name}")
        try:
            url = await self.restart(command)
            self._emit(index, point.name, "waiting", f"waiting for {url}/health")
            await wait_until_ready(url, self.definition.ready_timeout_s)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the lifecycle's errors are its own; record them on the point
            text = str(exc).strip().splitlines()
            message = text[0] if text else type(exc).__name__
            return PointResult(point, "failed", command, "", f"restart failed: {message}")
        runs: list[RunResult] = []
        rejected: list[str] = []
        first = True
        while len(runs) < self.definition.repeats and len(rejected) <= self.definition.max_rejected:
            repeat = len(runs) + 1
            await self._wait_if_held(index, point.name, f"repeat {repeat}/{self.definition.repeats} of {point.name}")
            if self._cancelled:
                return None
            settings = dataclasses.replace(
                self.settings, url=url, warmup_requests=self.settings.warmup_requests if first else 0
            )
            phase = "warmup+run" if first and settings.warmup_requests else "run"
            self._emit(index, point.name, phase, f"{point.name}: repeat {repeat}/{self.definition.repeats}")
            self._runner = BenchRunner(
                settings,
                effective_config={
                    **{k: v for k, v in self.effective_config.items() if not k.startswith("speculative_")},
                    **_point_config(point),
                },
                log_accept_samples=self.log_accept_samples,
                on_progress=functools.partial(self._emit, index, point.name, "run", ""),
            )
            try:
                run = await self._runner.run()
            except BenchError as exc:
                rejected.append(str(exc))
                first = False
                continue
            finally:
                self._runner = None
            if run.partial:
                return None
            first = False
            if run.errors:
                reason = next((r.error for r in run.requests if r.error), "")
                rejected.append(f"{run.errors} failed request(s): {reason}")
                self._emit(index, point.name, "rejected", f"{point.name}: run rejected ({run.errors} failed requests)")
                continue
            runs.append(run)
        return summarize_point(point, runs, rejected, command, url, self.definition.unstable_tolerance_pct)


def _point_config(point: SweepPoint) -> dict:
    if not point.speculative:
        return {"speculative_algorithm": None}
    cfg: dict[str, int | str | None] = {
        "speculative_num_steps": point.speculative_num_steps,
        "speculative_eagle_topk": point.speculative_eagle_topk,
        "speculative_num_draft_tokens": point.speculative_num_draft_tokens,
    }
    if point.speculative_algorithm:
        cfg["speculative_algorithm"] = point.speculative_algorithm
    return {k: v for k, v in cfg.items() if v is not None}
