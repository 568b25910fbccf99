"""When a difference between two benchmark figures is real: the one rule every comparison and ranking uses.

A difference between A and B is called "better" / "worse" only when it exceeds the noise of the two
measurements; otherwise it is "within noise" (with one run on a side: one run each cannot tell). The noise
(absolute, in the unit of the figure) is:

* both sides repeated (2 or more runs each, their range known): the larger of the two ranges (max - min of the
  repeats), at least :data:`REPEATS_FLOOR_PCT` % of the larger value (two repeats can agree closely by chance);
* otherwise (a single run on either side, e.g. two pasted bench_serving outputs): :data:`SINGLE_RUN_FLOOR_PCT` %
  of the larger value. That is specdash's run-to-run tolerance for one configuration: repeats of the same
  configuration within 5 % of their median count as the same (:data:`specdash.bench.stats.
  DEFAULT_UNSTABLE_TOLERANCE_PCT`), so two single runs closer than that cannot be told apart;
* a within-run standard error known for a side (specdash's own runs, from the spread of per-request rates) widens
  it to ``3 * sqrt(2) * max(se)`` when that is larger (the same test as :func:`specdash.bench.stats.repeat_spread`).

Tail figures (p95, p99, max) of single runs get no verdict: one run's tail rests on its few slowest requests.

Used by ``specdash bench compare``, ``specdash bench list``, the ranking of imported results and the depth
sweep's recommendation.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import TypeVar

from specdash.bench.stats import DEFAULT_UNSTABLE_SIGMAS, DEFAULT_UNSTABLE_TOLERANCE_PCT, RepeatSpread

T = TypeVar("T")

#: Noise assumed between single runs, as a share of the larger value (percent).
SINGLE_RUN_FLOOR_PCT = DEFAULT_UNSTABLE_TOLERANCE_PCT
#: The least noise assumed between repeated measurements, as a share of the larger value (percent).
REPEATS_FLOOR_PCT = 1.0

#: keys where higher is better
HIGHER_IS_BETTER = ("output_tokens_per_s", "speed_tokens_per_s", "requests_per_s", "total_tokens_per_s",
                    "goodput_requests_per_s", "speedup")
#: key parts where lower is better (latencies, step time)
LOWER_IS_BETTER = ("_ms.", "step_time_ms")
#: key endings of tail statistics (no verdict from single runs)
TAILS = (".p95", ".p99", ".p999", ".max")

#: What a verdict means, said once under a table (the floor and why).
SINGLE_RUN_RULE = (f"one run per side: a difference counts only beyond {SINGLE_RUN_FLOOR_PCT:g} % of the larger "
                   f"value (specdash's run-to-run tolerance: repeats of one configuration within "
                   f"{DEFAULT_UNSTABLE_TOLERANCE_PCT:g} % of their median count as the same); smaller ones are "
                   "'within noise', which one run each cannot tell apart; tails (p95, p99, max) of one run are "
                   "not judged")
REPEATS_RULE = (f"repeated runs: a difference counts only beyond the larger of the two sides' ranges (at least "
                f"{REPEATS_FLOOR_PCT:g} % of the larger value)")


@dataclasses.dataclass(frozen=True)
class Measure:
    """One side's figure: ``value`` (a mean over ``repeats`` runs when repeated), ``spread`` (max - min of the
    repeats, same unit; 0 for one run) and ``se`` (within-run standard error, same unit, when known)."""

    value: float
    repeats: int = 1
    spread: float = 0.0
    se: float | None = None

    @classmethod
    def of_repeats(cls, spread: RepeatSpread) -> Measure:
        """A sweep point's throughput: the repeats' mean, count and range."""
        return cls(spread.mean, len(spread.values), spread.range)


@dataclasses.dataclass(frozen=True)
class Difference:
    """``verdict``: ``"A"`` / ``"B"`` (that side is better beyond noise), ``"within noise"``, ``"not judged"``
    (a tail of single runs), or ``""`` (this figure has no better side, or a value is missing);
    ``noise``: the threshold used (absolute, unit of the figure; None when not judged); ``basis``: ``"repeats"``
    or ``"one run"``."""

    verdict: str
    noise: float | None
    basis: str

    @property
    def better(self) -> str:
        """``"A"``, ``"B"`` or ``""``."""
        return self.verdict if self.verdict in ("A", "B") else ""


def direction(key: str) -> int:
    """+1 when a higher value of ``key`` is better, -1 when lower is better, 0 when neither (token counts, accept
    length, concurrency, duration: more of them is not a better run)."""
    if key in HIGHER_IS_BETTER:
        return 1
    if any(part in key for part in LOWER_IS_BETTER):
        return -1
    return 0


def noise(a: Measure, b: Measure, repeats_floor_pct: float = REPEATS_FLOOR_PCT) -> tuple[float, str]:
    """``(threshold, basis)`` between two measures (see the module docstring)."""
    top = max(abs(a.value), abs(b.value))
    if a.repeats >= 2 and b.repeats >= 2:
        level, basis = max(a.spread, b.spread, top * repeats_floor_pct / 100.0), "repeats"
    else:
        level, basis = max(a.spread, b.spread, top * SINGLE_RUN_FLOOR_PCT / 100.0), "one run"
    ses = [s for s in (a.se, b.se) if s is not None and math.isfinite(s)]
    if ses:
        level = max(level, DEFAULT_UNSTABLE_SIGMAS * math.sqrt(2.0) * max(ses))
    return level, basis


def judge(key: str, a: Measure | None, b: Measure | None,
          repeats_floor_pct: float = REPEATS_FLOOR_PCT) -> Difference:
    """The verdict on figure ``key`` between A and B. Never raises (non-finite values get no verdict)."""
    sign = direction(key)
    if a is None or b is None or sign == 0 or not (math.isfinite(a.value) and math.isfinite(b.value)):
        return Difference("", None, "")
    level, basis = noise(a, b, repeats_floor_pct)
    if basis == "one run" and key.endswith(TAILS):
        return Difference("not judged", None, basis)
    delta = (b.value - a.value) * sign
    if abs(delta) <= level:
        return Difference("within noise", level, basis)
    return Difference("B" if delta > 0 else "A", level, basis)


def shared_ranks(measures: Sequence[Measure], key: str) -> list[int]:
    """Ranks for ``measures`` of figure ``key`` (in the given order): a measure's rank is 1 + the number of others
    better than it beyond noise (:func:`judge`), so results within noise of each other share a rank (``1, 1, 3``).
    Raises ValueError for a key with no better direction."""
    if direction(key) == 0:
        raise ValueError(f"{key} has no better direction to rank by")
    out = []
    for i, mine in enumerate(measures):
        beaten = sum(1 for j, other in enumerate(measures) if j != i and judge(key, mine, other).verdict == "B")
        out.append(1 + beaten)
    return out


def rank_items(items: Sequence[T], key: str, measure: Callable[[T], Measure]) -> list[tuple[int, T]]:
    """``items`` best first with their :func:`shared_ranks` (ties keep the value order)."""
    measures = [measure(item) for item in items]
    ranks = shared_ranks(measures, key)
    sign = direction(key)
    order = sorted(range(len(items)), key=lambda i: (ranks[i], -sign * measures[i].value))
    return [(ranks[i], items[i]) for i in order]


def rank_label(rank: int, ranks: Sequence[int]) -> str:
    """``"1"``, or ``"1="`` when another result shares the rank."""
    return f"{rank}=" if list(ranks).count(rank) > 1 else str(rank)
