"""Benchmark statistics: percentiles, spread of repeated runs, and the "unstable" verdict.

Pure functions on lists of floats; no I/O. Percentiles use linear interpolation between closest ranks
(NumPy's default ``method="linear"``), which is what SGLang's ``bench_serving`` reports through
``np.percentile`` (SGLang ``python/sglang/bench_serving.py``), so a p99 here equals bench_serving's p99 on the same
samples.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any


def percentile(values: Sequence[float], pct: float) -> float | None:
    """Return the ``pct``-th percentile (0..100) of ``values`` by linear interpolation; ``None`` when empty.

    Same definition as ``numpy.percentile(values, pct)`` (method "linear"): rank ``(n-1) * pct/100`` in the
    sorted values, interpolated between its neighbours. Raises ``ValueError`` for ``pct`` outside 0..100.
    """
    if not 0.0 <= pct <= 100.0:
        raise ValueError(f"percentile must be within 0..100, got {pct}")
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100.0
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    frac = rank - low
    return ordered[low] + (ordered[high] - ordered[low]) * frac


@dataclasses.dataclass(frozen=True)
class Distribution:
    """Summary of one latency metric over samples (all in the unit of the samples, here milliseconds).

    ``count`` is the number of samples; every other field is ``None`` when there are none.
    """

    count: int
    mean: float | None
    p50: float | None
    p90: float | None
    p99: float | None
    max: float | None

    @classmethod
    def of(cls, values: Iterable[float]) -> Distribution:
        """Summarise ``values`` (any iterable of floats)."""
        data = list(values)
        if not data:
            return cls(0, None, None, None, None, None)
        return cls(
            count=len(data),
            mean=math.fsum(data) / len(data),
            p50=percentile(data, 50),
            p90=percentile(data, 90),
            p99=percentile(data, 99),
            max=max(data),
        )

    def percentiles(self) -> dict[str, float | None]:
        """Return ``{"p50", "p90", "p99"}`` (the shape ``specdash bench --json`` prints)."""
        return {"p50": self.p50, "p90": self.p90, "p99": self.p99}

    def to_dict(self) -> dict:
        """All fields as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Distribution:
        """Inverse of :meth:`to_dict`."""
        values: dict[str, Any] = {f.name: data.get(f.name) for f in dataclasses.fields(cls)}
        return cls(**values)


#: A point is unstable only when its repeats' range exceeds this share of their median (noise floor).
DEFAULT_UNSTABLE_TOLERANCE_PCT = 5.0
#: ... and also exceeds this many combined standard errors of the individual repeats.
DEFAULT_UNSTABLE_SIGMAS = 3.0
#: Fewer requests than this in a run give no within-run standard error (the estimate would be noise itself).
MIN_REQUESTS_FOR_SE = 5


@dataclasses.dataclass(frozen=True)
class RepeatSpread:
    """Spread of one figure (e.g. output tokens/s) over repeated runs of the same configuration.

    ``values``: one value per accepted repeat; ``mean``, ``median``, ``stdev`` (sample, 0 for one value),
    ``range`` (max - min) and ``range_pct`` (range / median * 100) describe them; ``noise`` is the larger of
    the tolerance floor and the repeats' own within-run uncertainty, in the unit of the values;
    ``unstable`` is the verdict of :func:`repeat_spread`.
    """

    values: tuple[float, ...]
    mean: float
    median: float
    stdev: float
    range: float
    range_pct: float
    noise: float
    unstable: bool

    def to_dict(self) -> dict:
        """JSON-ready dict (``values`` as a list)."""
        data = dataclasses.asdict(self)
        data["values"] = list(self.values)
        return data

    @classmethod
    def from_dict(cls, data: dict) -> RepeatSpread:
        """Inverse of :meth:`to_dict`."""
        kwargs = {f.name: data[f.name] for f in dataclasses.fields(cls)}
        kwargs["values"] = tuple(kwargs["values"])
        return cls(**kwargs)


def repeat_spread(
    values: Sequence[float],
    standard_errors: Sequence[float] | None = None,
    tolerance_pct: float = DEFAULT_UNSTABLE_TOLERANCE_PCT,
    sigmas: float = DEFAULT_UNSTABLE_SIGMAS,
) -> RepeatSpread:
    """Summarise repeats of one configuration and decide whether they disagree beyond their spread.

    ``values``: the figure per repeat (e.g. output tokens/s); ``standard_errors``: optional within-run standard
    error of each value (e.g. from the spread of per-request rates, see :func:`standard_error_of_rate`).
    Rule (ours, in the spirit of vLLM's tune_speculative_k and SGLang's bench_speculative, which rerun and drop
    noisy points): the point is **unstable** when the range of the repeats exceeds BOTH ``tolerance_pct`` % of
    their median AND ``sigmas`` combined standard errors of two repeats (``sigmas * sqrt(2) * max(se)``). So runs
    that are each noisy may differ more before the point is called unstable, and tiny absolute differences never
    are. One repeat is never unstable. Raises ``ValueError`` when ``values`` is empty.
    """
    if not values:
        raise ValueError("repeat_spread needs at least one value")
    data = tuple(float(v) for v in values)
    median = statistics.median(data)
    spread = max(data) - min(data)
    stdev = statistics.stdev(data) if len(data) > 1 else 0.0
    se = max(standard_errors) if standard_errors else 0.0
    floor = abs(median) * tolerance_pct / 100.0
    within = sigmas * math.sqrt(2.0) * se
    noise = max(floor, within)
    unstable = len(data) > 1 and spread > noise
    range_pct = spread / abs(median) * 100.0 if median else 0.0
    return RepeatSpread(
        values=data,
        mean=math.fsum(data) / len(data),
        median=median,
        stdev=stdev,
        range=spread,
        range_pct=range_pct,
        noise=noise,
        unstable=unstable,
    )


def standard_error_of_rate(total: float, per_request_rates: Sequence[float]) -> float:
    """Within-run standard error of a run-level rate (e.g. output tokens/s), from per-request rates.

    ``total``: the run-level rate; ``per_request_rates``: each request's own rate (tokens / its e2e seconds).
    Returns ``total * cv / sqrt(n)`` where cv is the coefficient of variation of the per-request rates;
    0.0 with fewer than :data:`MIN_REQUESTS_FOR_SE` requests (too few to estimate a spread: then only the
    tolerance floor of :func:`repeat_spread` applies).
    """
    rates = [r for r in per_request_rates if r > 0]
    if len(rates) < MIN_REQUESTS_FOR_SE:
        return 0.0
    mean = math.fsum(rates) / len(rates)
    cv = statistics.stdev(rates) / mean if mean else 0.0
    return abs(total) * cv / math.sqrt(len(rates))
