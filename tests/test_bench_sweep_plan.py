"""The sweep's plan before it starts: configurations in words, restarts (a resumed sweep skips what its checkpoint
holds), and the start-up estimate from this host's last start-up, "unknown" when there is none."""

from __future__ import annotations

import json

from support.sweep import BASE

from specdash.bench.runner import BenchSettings
from specdash.bench.sweep import PointResult, SweepResult, SweepRunner, default_sweep
from specdash.bench.sweep_plan import plan_sweep
from specdash.bench.workload import Workload


async def no_restart(command: str) -> str:
    raise AssertionError("the plan never restarts anything")


def runner(checkpoint=None) -> SweepRunner:
    settings = BenchSettings(url="http://unused", workload=Workload(name="plan", prompts=("a",)), api="generate",
                             num_requests=2, concurrency=1, output_len=4, warmup_requests=0, seed=1)
    return SweepRunner(default_sweep(repeats=3), BASE, no_restart, settings, checkpoint)


def test_plan_of_the_default_sweep_with_and_without_a_start_up_time():
    plan = plan_sweep(runner(), 185.0)
    lines = plan.lines()
    assert lines[0] == "4 configurations, 4 server restarts, 12 benchmark runs (3 per configuration):"
    assert lines[1:5] == ["  baseline: no speculation (every --speculative* flag removed)",
                          "  chain-16: steps 15, topk 1, 16 draft tokens",
                          "  chain-10: steps 9, topk 1, 10 draft tokens",
                          "  chain-5: steps 4, topk 1, 5 draft tokens"]
    assert lines[5] == ("start-ups: about 12 min 20 s (4 x 3 min 5 s, the last start-up seen on this host), plus the "
                        "benchmark runs")
    unknown = plan_sweep(runner(), None)
    assert unknown.startup_total_s is None
    assert unknown.estimate() == ("start-ups: unknown (4 restarts; no start-up of this server was seen on this host "
                                  "to time them by)")
    assert plan_sweep(runner(), -3.0).startup_s is None  # a clock that went backwards times nothing


def test_a_start_up_timed_at_zero_seconds_took_under_one_second():
    """SGLang's log timestamps are whole seconds: ready in the second the start-up began is under a second, not
    no start-up at all (and never "about 0 s")."""
    plan = plan_sweep(runner(), 0.0)
    assert plan.estimate() == ("start-ups: under 4 s (4 x under 1 s, the last start-up seen on this host), plus the "
                               "benchmark runs")


def test_a_resumed_sweep_plans_only_what_its_checkpoint_lacks_and_reads_it_only(tmp_path):
    path = tmp_path / "sweep.json"
    first = runner(path)
    done = PointResult(first.definition.points[0], "ok", command="x")
    failed = PointResult(first.definition.points[1], "failed", command="y", error="restart failed")
    partial = SweepResult(first.definition, BASE, first.settings.to_dict(), first.key, "2026-01-01T00:00:00+00:00",
                          points=[done, failed])
    path.write_text(json.dumps(partial.to_dict()))
    before = path.read_text()
    plan = plan_sweep(runner(path), 60.0)
    assert plan.measured == ("baseline",) and plan.restarts == 3
    assert "  baseline: no speculation (every --speculative* flag removed) (measured already: kept from the " \
           "checkpoint)" in plan.lines()
    assert path.read_text() == before and list(tmp_path.iterdir()) == [path]
    finished = SweepResult(**{**partial.__dict__, "finished": True})
    path.write_text(json.dumps(finished.to_dict()))
    assert plan_sweep(runner(path), 60.0).restarts == 4  # a finished sweep starts afresh
    path.write_text("{not json")
    assert plan_sweep(runner(path), 60.0).restarts == 4  # unreadable: the runner reports it when it starts
