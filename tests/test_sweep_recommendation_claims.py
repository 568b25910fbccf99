"""What the depth sweep's recommendation may claim: a config beats (or does not beat) another only when both are
stable or their repeat ranges do not overlap; nothing slower than the baseline is offered to keep."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.bench.stats import repeat_spread
from specdash.bench.sweep import PointResult, SweepPoint, SweepResult, default_sweep

BASE = "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 --port 30000"


def point(name: str, depth: int, values: list[float], se: float | None = None) -> PointResult:
    spec = depth > 0
    p = SweepPoint(name, spec, None, depth - 1 if spec else None, 1 if spec else None, depth if spec else None)
    spread = repeat_spread(values, [se] * len(values) if se is not None else None)
    return PointResult(p, "unstable" if spread.unstable else "ok", throughput=spread)


def sweep_of(*points: PointResult) -> SweepResult:
    return SweepResult(default_sweep(), BASE, {}, "k", "now", points=list(points), finished=True)


def test_only_the_baseline_stable_and_every_speculative_repeat_faster_never_says_leave_speculation_off():
    # a busy machine (a new user's sweep): the baseline's repeats agree, every speculative config's disagree - yet
    # every one of their repeats (lowest 1675) is above the baseline's highest (1600)
    result = sweep_of(point("baseline", 0, [1518, 1600, 1586], se=20), point("chain-16", 16, [1716, 2159, 2186], se=20),
                      point("chain-10", 10, [1744, 2171, 1675], se=20), point("chain-5", 5, [1705, 2107, 2150], se=20))
    assert [p.status for p in result.points] == ["ok", "unstable", "unstable", "unstable"]
    rec = result.recommendation()
    # before: name "baseline", "baseline (1567.9 output tokens/s, 1.00x baseline): no speculative config beats it
    # beyond noise - leave speculation off, or try a better draft / smaller batch"
    assert rec.name is None and rec.beats_baseline is None
    assert rec.reason == (
        "only the baseline was stable (1568.0 output tokens/s); the repeats of chain-16 (1716-2186), chain-10 "
        "(1675-2171) and chain-5 (1705-2150 output tokens/s) disagree (the baseline's: 1518-1600); every repeat of "
        "them was faster than every baseline repeat, but which configuration to keep is not known yet - measure "
        "them again before deciding")
    assert "leave speculation off" not in rec.reason
    # the table's notes: an unstable config is not "within noise of the baseline" (before: chain-5, 1.27x, was)
    notes = {row.name: row.note for row in result.rows()}
    assert notes["chain-5"] == "unstable: repeats differ by 21.1 %; every repeat above the baseline's (1518-1600)"
    assert not any("within noise" in note for note in notes.values())


def test_only_the_baseline_stable_with_a_speculative_config_overlapping_it_says_it_is_not_known():
    result = sweep_of(point("baseline", 0, [1570, 1600, 1586]), point("chain-16", 16, [1500, 2159, 2186]),
                      point("chain-5", 5, [1580, 1590, 1595]))
    rec = result.recommendation()
    assert rec.name is None
    assert rec.reason == (
        "the baseline is the fastest stable config (1585.3 output tokens/s; chain-5 not faster beyond noise); the "
        "repeats of chain-16 (1500-2186 output tokens/s) disagree (the baseline's: 1570-1600); chain-16 overlaps the "
        "baseline's range, so whether speculation helps here is not known yet - measure it again before deciding")


def test_mirror_cases_keep_their_wording():
    # an unstable config entirely below a stable baseline: it does not beat it, so the baseline still wins
    below = sweep_of(point("baseline", 0, [1570, 1600, 1586]), point("chain-16", 16, [1000, 1300, 1400]))
    rec = below.recommendation()
    assert rec.name == "baseline" and "leave speculation off" in rec.reason
    # an unstable baseline, a stable config within its noise: named, not called a speedup, offered to keep
    within = sweep_of(point("baseline", 0, [1100, 900, 880]), point("chain-16", 16, [1044, 1046, 1048]))
    rec = within.recommendation()
    assert rec.name == "chain-16" and rec.beats_baseline is False
    assert rec.reason == ("no configuration is faster than the baseline beyond its noise; the fastest stable is "
                          "chain-16 (16 draft tokens, 1046.0 output tokens/s, 1.09x a baseline that was unstable (not "
                          "a reliable ratio))")
    # ... and an unstable config beside it that beat every baseline repeat: "no configuration" would be untrue
    beside = sweep_of(point("baseline", 0, [1100, 900, 880]), point("chain-16", 16, [1044, 1046, 1048]),
                      point("chain-5", 5, [1500, 1700, 1600]))
    reason = beside.recommendation().reason
    assert reason.startswith("no stable configuration is faster than the baseline beyond its noise; the fastest "
                             "stable is chain-16")
    assert reason.endswith("the repeats of chain-5 (1500-1700 output tokens/s) disagree (the baseline's: 880-1100); "
                           "every repeat of it was faster than every baseline repeat, but its speedup is not known "
                           "yet - measure it again before deciding")
    # nothing stable at all: unchanged
    assert sweep_of(point("baseline", 0, [1100, 900, 880]), point("chain-5", 5, [1500, 1700, 1600])) \
        .recommendation().reason.startswith("no stable point: the repeats of every measured configuration differ")


def test_a_config_slower_than_an_unstable_baseline_is_named_but_not_offered_to_keep():
    result = sweep_of(point("baseline", 0, [2644, 2136, 2128]), point("chain-10", 10, [2150, 2155, 2160]))
    rec = result.recommendation()
    assert rec.name is None and rec.beats_baseline is False  # before: "chain-10", kept with y
    assert rec.reason == ("no configuration is faster than the baseline beyond its noise; the fastest stable is "
                          "chain-10 (10 draft tokens, 2155.0 output tokens/s, 0.94x a baseline that was unstable (not "
                          "a reliable ratio)); but it is slower than the baseline's 2302.7 output tokens/s, which was "
                          "not stable (unstable) - rerun the baseline before trusting this")


def _lo_hi(p: PointResult) -> tuple[float, float]:
    assert p.throughput is not None
    return min(p.throughput.values), max(p.throughput.values)


def _comparable(a: PointResult, b: PointResult) -> bool:
    """Both stable, or their repeat ranges do not overlap (written here, not imported from the code under test)."""
    (a_lo, a_hi), (b_lo, b_hi) = _lo_hi(a), _lo_hi(b)
    return (a.status == "ok" and b.status == "ok") or a_hi < b_lo or b_hi < a_lo


repeats = st.lists(st.floats(min_value=500, max_value=3000, allow_nan=False), min_size=2, max_size=3)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=repeats, specs=st.lists(repeats, min_size=1, max_size=3))
def test_the_recommendation_never_compares_what_cannot_be_compared(base, specs):
    names = ["chain-16", "chain-10", "chain-5"]
    depths = [16, 10, 5]
    baseline = point("baseline", 0, base)
    spec_points = [point(names[i], depths[i], values) for i, values in enumerate(specs)]
    result = sweep_of(baseline, *spec_points)
    rec = result.recommendation()
    chosen = result.point(rec.name) if rec.name else None
    b_lo, _ = _lo_hi(baseline)
    # "leave speculation off" / the baseline kept: only when no speculative config can beat it
    if "leave speculation off" in rec.reason or "no speculative config beats it" in rec.reason or \
            rec.name == "baseline":
        assert rec.name == "baseline" and baseline.status == "ok"
        for p in spec_points:
            assert p.status == "ok" or _lo_hi(p)[1] < b_lo, (p.point.name, rec.reason)
    # a speedup claimed: the two are comparable, and it is faster
    if rec.beats_baseline is True:
        assert chosen is not None and _comparable(chosen, baseline), rec.reason
        assert chosen.throughput.mean > baseline.throughput.mean
    # "no configuration is faster than the baseline": no unstable config whose repeats reach the baseline's range
    if "no configuration is faster than the baseline" in rec.reason:
        for p in spec_points:
            assert p.status == "ok" or _lo_hi(p)[1] < b_lo, (p.point.name, rec.reason)
    # the table's notes: "within noise of the baseline" only for a stable config; "every repeat above / below the
    # baseline's" only when the ranges do not overlap
    for row, p in zip(result.rows(), result.points, strict=True):
        if "within noise of the baseline" in row.note:
            assert p.status == "ok", row.note
        if "every repeat above the baseline's" in row.note:
            assert _lo_hi(p)[0] > _lo_hi(baseline)[1], row.note
        if "every repeat below the baseline's" in row.note:
            assert _lo_hi(p)[1] < b_lo, row.note
    # y keeps only a stable config, never a speculative one slower than the baseline
    if chosen is not None:
        assert chosen.status == "ok"
        if chosen.point.speculative:
            assert chosen.throughput.mean > baseline.throughput.mean, rec.reason
