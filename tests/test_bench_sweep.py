"""Depth sweep: real restarts of a real HTTP server (tests/bench_server.py) with per-depth timings, checkpoint and
resume, rejected runs, the recommendation rules, and command editing."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shlex
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from support.sweep import BASE, FakeLifecycle  # noqa: E402

from specdash.bench.runner import BenchSettings  # noqa: E402
from specdash.bench.stats import repeat_spread  # noqa: E402
from specdash.bench.sweep import (  # noqa: E402
    PointResult,
    SweepDefinition,
    SweepError,
    SweepPoint,
    SweepResult,
    SweepRunner,
    command_for_point,
    default_sweep,
    load_sweep_yaml,
)
from specdash.bench.workload import Workload  # noqa: E402
from specdash.sglang.command_edit import flag_value, remove_speculative_flags, set_flag  # noqa: E402


@pytest.fixture
def lifecycle():
    made = []

    def make(**kw):
        made.append(FakeLifecycle(**kw))
        return made[-1]

    yield make
    for lc in made:
        lc.close()


def bench_settings(warmup_requests: int = 0) -> BenchSettings:
    workload = Workload(name="sweep-test", prompts=("a", "b", "c"))
    return BenchSettings(
        url="http://unused", workload=workload, api="generate", num_requests=3, concurrency=3, output_len=9,
        warmup_requests=warmup_requests, seed=5,
    )


async def test_sweep_restarts_per_point_and_recommends_the_fastest_stable_depth(tmp_path, lifecycle):
    fake = lifecycle()
    checkpoint = tmp_path / "sweep.json"
    events = []
    # the stability rule itself is tested on exact numbers below; here repeats on a shared test machine may differ
    definition = dataclasses.replace(default_sweep(repeats=2), unstable_tolerance_pct=100.0)
    runner = SweepRunner(definition, BASE, fake.restart, bench_settings(warmup_requests=1), checkpoint,
                         on_event=events.append)
    result = await runner.run()
    assert result.finished and [p.point.name for p in result.points] == ["baseline", "chain-16", "chain-10", "chain-5"]
    assert len(fake.commands) == 4
    assert "--speculative" not in fake.commands[0]  # baseline: every speculative flag removed
    assert "--speculative-num-draft-tokens 16" in fake.commands[1] and "--speculative-num-steps 15" in fake.commands[1]
    assert all(len(p.runs) == 2 for p in result.points)
    rows = {r.name: r for r in result.rows()}
    assert rows["baseline"].speedup == pytest.approx(1.0)
    # speedup is computed from the measured means, and ordered as the timings dictate
    base_rate = result.point("baseline").throughput.mean
    assert rows["chain-5"].speedup == pytest.approx(result.point("chain-5").throughput.mean / base_rate)
    assert rows["chain-5"].speedup > rows["chain-10"].speedup > rows["chain-16"].speedup > 1.0
    # accept length per point from /generate meta_info: 9 tokens / 2 verify steps (1 + 4 + 4)
    assert result.point("chain-16").accept_length == pytest.approx(9 / 2)
    assert result.point("chain-5").accept_length == pytest.approx(9 / 2)
    assert result.point("baseline").accept_length is None
    assert rows["chain-10"].alpha is not None and rows["chain-10"].predicted_accept_length is not None
    rec = result.recommendation()
    assert rec.name == "chain-5", rec.reason
    # the checkpoint holds everything, raw per-request data included
    saved = json.loads(checkpoint.read_text())
    assert saved["finished"] and len(saved["points"]) == 4
    assert saved["points"][3]["runs"][0]["requests"][0]["chunk_offsets_ms"]
    assert saved["points"][1]["runs"][0]["effective_config"]["speculative_num_draft_tokens"] == 16
    assert events[-1].phase == "finished"


async def test_interrupted_sweep_resumes_from_its_checkpoint(tmp_path, lifecycle):
    checkpoint = tmp_path / "sweep.json"
    definition = default_sweep(repeats=1)
    first = lifecycle(hang_on_call=3)
    task = asyncio.ensure_future(SweepRunner(definition, BASE, first.restart, bench_settings(), checkpoint).run())
    while len(first.commands) < 3:
        await asyncio.sleep(0.05)
    task.cancel()  # e.g. the user quit specdash during the third restart
    with pytest.raises(asyncio.CancelledError):
        await task
    saved = json.loads(checkpoint.read_text())
    assert [p["point"]["name"] for p in saved["points"]] == ["baseline", "chain-16"] and not saved["finished"]

    second = lifecycle()
    result = await SweepRunner(definition, BASE, second.restart, bench_settings(), checkpoint).run()
    assert len(second.commands) == 2  # only chain-10 and chain-5 were measured again
    assert "--speculative-num-draft-tokens 10" in second.commands[0]
    assert result.finished and [p.point.name for p in result.points] == ["baseline", "chain-16", "chain-10", "chain-5"]
    assert result.rows()[0].speedup == pytest.approx(1.0)


async def test_resume_refuses_a_checkpoint_of_another_sweep(tmp_path, lifecycle):
    checkpoint = tmp_path / "sweep.json"
    fake = lifecycle()
    one_point = SweepDefinition((SweepPoint("baseline", speculative=False),), repeats=1)
    await SweepRunner(one_point, BASE, fake.restart, bench_settings(), checkpoint).run()
    with pytest.raises(SweepError, match="belongs to another sweep"):
        await SweepRunner(default_sweep(1), BASE, fake.restart, bench_settings(), checkpoint).run()
    # the same sweep again after it finished: measured afresh, the finished one kept next to it
    again = await SweepRunner(one_point, BASE, fake.restart, bench_settings(), checkpoint).run()
    assert len(fake.commands) == 2 and again.finished
    assert len(list(tmp_path.glob("sweep-*.json"))) == 1 and checkpoint.exists()


async def test_runs_with_failed_requests_are_rejected(tmp_path, lifecycle):
    fake = lifecycle(extra={"fail_every": 2})
    definition = SweepDefinition((SweepPoint("baseline", speculative=False),), repeats=1, max_rejected=1)
    result = await SweepRunner(definition, BASE, fake.restart, bench_settings()).run()
    point = result.point("baseline")
    assert point.status == "failed" and len(point.rejected) == 2 and not point.runs
    assert "failed request" in point.rejected[0] and "injected failure" in point.rejected[0]
    assert result.recommendation().name is None


async def test_a_restart_that_fails_marks_the_point_and_the_sweep_goes_on(lifecycle):
    fake = lifecycle()

    async def restart(command: str) -> str:
        if "--speculative-num-draft-tokens 16" in command:
            raise RuntimeError("CUDA out of memory while capturing graphs")
        return await fake.restart(command)

    definition = SweepDefinition(default_sweep().points[1::2], repeats=1)  # chain-16, chain-5
    result = await SweepRunner(definition, BASE, restart, bench_settings()).run()
    assert result.point("chain-16").status == "failed"
    assert "CUDA out of memory" in result.point("chain-16").error
    assert result.point("chain-5").status in ("ok", "unstable")


# -- recommendation rules on synthetic points (pure) ------------------------------------------------------------


def point(name: str, depth: int, values: list[float]) -> PointResult:
    spec = depth > 0
    p = SweepPoint(name, spec, None, depth - 1 if spec else None, 1 if spec else None, depth if spec else None)
    spread = repeat_spread(values)
    return PointResult(p, "unstable" if spread.unstable else "ok", throughput=spread)


def sweep_of(*points: PointResult) -> SweepResult:
    return SweepResult(default_sweep(), BASE, {}, "k", "now", points=list(points))


def test_ties_within_noise_go_to_the_smaller_depth():
    result = sweep_of(point("baseline", 0, [100, 101]), point("chain-10", 10, [150, 152]), point("chain-5", 5, [149, 150]))
    rec = result.recommendation()
    assert rec.name == "chain-5" and "tie" in rec.reason


def test_the_fastest_wins_when_beyond_noise():
    result = sweep_of(point("baseline", 0, [100, 101]), point("chain-10", 10, [170, 171]), point("chain-5", 5, [150, 151]))
    assert result.recommendation().name == "chain-10"


def test_unstable_points_are_never_recommended_and_say_so():
    result = sweep_of(point("baseline", 0, [100, 101]), point("chain-10", 10, [150, 250]), point("chain-5", 5, [120, 121]))
    assert result.point("chain-10").status == "unstable"
    assert result.recommendation().name == "chain-5"
    assert "unstable" in next(r for r in result.rows() if r.name == "chain-10").note


def test_a_ratio_to_an_unstable_baseline_says_the_baseline_was_not_stable():
    result = sweep_of(point("baseline", 0, [2644, 2136, 2128]), point("chain-10", 10, [2410, 2415, 2416]),
                      point("chain-5", 5, [2360, 2370, 2378]))
    assert result.point("baseline").status == "unstable"
    rec = result.recommendation()
    assert rec.name == "chain-10"
    assert "2413.7 output tokens/s, 1.05x a baseline that was unstable (not a reliable ratio)" in rec.reason
    stable_base = sweep_of(point("baseline", 0, [2300, 2301]), point("chain-10", 10, [2410, 2415]))
    assert "1.05x baseline) is the fastest" in stable_base.recommendation().reason


def test_baseline_recommended_when_no_speculative_config_beats_it():
    # a reported sweep: every EAGLE3 config slower than the baseline at batch 1
    result = sweep_of(point("baseline", 0, [222.47, 222.0]), point("chain-4", 4, [159.78, 160.1]), point("tree-8", 8, [207.62, 207.0]))
    rec = result.recommendation()
    assert rec.name == "baseline" and "leave speculation off" in rec.reason
    speedups = {r.name: r.speedup for r in result.rows()}
    assert speedups["chain-4"] == pytest.approx(159.94 / 222.235, rel=1e-3)


def test_baseline_over_unstable_speculative_configs_never_says_leave_speculation_off():
    """On a busy machine every speculative config came out unstable (repeats about 1650 / 2100 / 2100 against a
    stable baseline of 1605): the sweep said "no speculative config beats it beyond noise - leave speculation
    off", a verdict on configurations it had not compared."""
    result = sweep_of(point("baseline", 0, [1600, 1605, 1609]), point("chain-16", 16, [1649, 2101, 2093]),
                      point("chain-5", 5, [2116, 1714, 2080]))
    rec = result.recommendation()
    assert rec.name is None  # nothing to keep: y does not restart the server without speculation
    assert rec.reason == ("only the baseline was stable (1604.7 output tokens/s); the repeats of chain-16 (1649-2101) "
                          "and chain-5 (1714-2116 output tokens/s) disagree (the baseline's: 1600-1609); every repeat "
                          "of them was faster than every baseline repeat, but which configuration to keep is not "
                          "known yet - measure them again before deciding")


# -- definition and commands -------------------------------------------------------------------------------------


def test_default_sweep_is_baseline_plus_16_10_5_chains():
    d = default_sweep()
    assert [(p.name, p.speculative_num_steps, p.speculative_eagle_topk, p.speculative_num_draft_tokens) for p in d.points] == [
        ("baseline", None, None, None), ("chain-16", 15, 1, 16), ("chain-10", 9, 1, 10), ("chain-5", 4, 1, 5)
    ]


def test_sweep_yaml_with_extra_flags():
    d = load_sweep_yaml(
        "repeats: 2\npoints:\n  - {name: base, speculative: false}\n"
        "  - name: deep\n    speculative_num_steps: 7\n    speculative_eagle_topk: 1\n    speculative_num_draft_tokens: 8\n"
        "    extra_flags: {--cuda-graph-max-bs: 16}\n"
    )
    assert d.repeats == 2 and d.points[1].depth == 8
    cmd = command_for_point(BASE, d.points[1])
    # 0.5.23 splits it into -decode/-prefill, so argparse finds it ambiguous: the raw text comes back
    assert flag_value(cmd, "--cuda-graph-max-bs") == "16" and flag_value(cmd, "--cuda-graph-max-bs", "0.5.5") == 16
    with pytest.raises(SweepError, match="unknown key"):
        load_sweep_yaml("points:\n  - {name: x, num_steps: 3}\n")


def test_command_edits_replace_every_spelling_of_a_flag():
    cmd = command_for_point(BASE, default_sweep().points[2])
    words = shlex.split(cmd)
    # the underscore spelling SGLang's argparse rejects becomes the flag's name; no second copy is appended
    assert words.count("--speculative-num-steps") == 1 and "--speculative_num_steps" not in cmd
    assert flag_value(cmd, "--speculative-num-steps") == 9
    # --flag=value keeps its form, with the new value
    assert flag_value(cmd, "--speculative-eagle-topk") == 1 and "--speculative-eagle-topk=1 " in cmd
    assert flag_value(cmd, "--speculative-algorithm") == "EAGLE3"  # kept from the abbreviation --speculative-algo
    assert "--speculative-algo EAGLE3" in cmd
    assert flag_value(cmd, "--port") == 30000 and flag_value(cmd, "--model-path").startswith("meta-llama/")
    baseline = remove_speculative_flags(BASE)
    assert "speculative" not in baseline and "--cuda-graph-max-bs 8" in baseline
    assert set_flag("python -m sglang.launch_server --enable-metrics", "--enable-metrics", None) == (
        "python -m sglang.launch_server")
    assert set_flag("python -m sglang.launch_server", "--enable-metrics", True) == (
        "python -m sglang.launch_server --enable-metrics")
    # repeated flags: argparse keeps the last, so the edit changes it and drops the ignored earlier ones
    assert set_flag("python -m sglang.launch_server --tp 2 --model-path m --tp-size 4", "--tp-size", 8) == (
        "python -m sglang.launch_server --model-path m --tp-size 8")


USER_COMMAND = """\
# EAGLE-3 on two GPUs
export HF_HOME='/data/hf cache'   # shared cache
CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server \\
    --model-path "meta-llama/Llama-3.1-8B-Instruct" \\
    --speculative-algo EAGLE3 \\
    --speculative-draft-model-path 'jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B' \\
    --speculative-num-steps 3   --speculative-eagle-topk=1 \\
    --speculative-num-draft-tokens 4 \\
    --tp 2 --po 31000  # abbreviated port
"""


def test_sweep_keeps_the_users_formatting_except_the_edited_values():
    """Continuations, comments, quoting, spacing, export lines and env prefixes survive each point's edit."""
    chain = command_for_point(USER_COMMAND, SweepPoint("c", True, None, 9, 1, 10))
    assert chain == USER_COMMAND.replace("--speculative-num-steps 3", "--speculative-num-steps 9").replace(
        "--speculative-num-draft-tokens 4", "--speculative-num-draft-tokens 10")
    topk = command_for_point(USER_COMMAND, SweepPoint("t", True, "EAGLE", 4, 8, 16))
    assert topk == (USER_COMMAND.replace("--speculative-algo EAGLE3", "--speculative-algo EAGLE")
                    .replace("--speculative-num-steps 3", "--speculative-num-steps 4")
                    .replace("--speculative-eagle-topk=1", "--speculative-eagle-topk=8")
                    .replace("--speculative-num-draft-tokens 4", "--speculative-num-draft-tokens 16"))
    baseline = command_for_point(USER_COMMAND, SweepPoint("baseline", speculative=False))
    assert baseline == """\
# EAGLE-3 on two GPUs
export HF_HOME='/data/hf cache'   # shared cache
CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server \\
    --model-path "meta-llama/Llama-3.1-8B-Instruct" \\
    --tp 2 --po 31000  # abbreviated port
"""
    extra = command_for_point(USER_COMMAND, SweepPoint("x", True, extra_flags=(("--cuda-graph-max-bs", 16),)))
    assert extra == USER_COMMAND.replace("--po 31000  #", "--po 31000 --cuda-graph-max-bs 16  #")
    # every point keeps the port the user typed (abbreviated), so the sweep benchmarks the same server address
    for point in default_sweep().points:
        assert flag_value(command_for_point(USER_COMMAND, point), "--port") == 31000


def test_speculative_point_without_an_algorithm_is_refused():
    with pytest.raises(SweepError, match="no --speculative-algorithm"):
        command_for_point("python -m sglang.launch_server --model-path m", default_sweep().points[1])


def test_no_stable_point_says_by_how_much_the_repeats_differed_and_the_usual_cause():
    # a busy machine: one repeat of each config ~25 % off
    result = sweep_of(point("baseline", 0, [2644, 2136, 2128]), point("chain-16", 16, [2225, 2154, 2685]))
    rec = result.recommendation()
    assert rec.name is None
    assert rec.reason.startswith("no stable point: the repeats of every measured configuration differ by more than 5 %")
    assert "(up to 24.2 %)" in rec.reason and "rerun the sweep when the machine is quiet" in rec.reason
    assert sweep_of().recommendation().reason == "no stable point measured yet"


def test_a_ratio_to_an_unstable_baseline_says_it_is_uncertain():
    result = sweep_of(point("baseline", 0, [100, 140]), point("chain-10", 10, [170, 171]))
    rec = result.recommendation()
    assert rec.name == "chain-10"
    assert "x a baseline that was unstable (not a reliable ratio)" in rec.reason


async def test_unstable_points_are_measured_again_from_the_checkpoint_and_stable_ones_are_kept(tmp_path, lifecycle):
    from specdash.bench.sweep_plan import plan_sweep

    definition = SweepDefinition((SweepPoint("baseline", speculative=False), SweepPoint("chain-10", True, None, 9, 1, 10),
                                  SweepPoint("chain-5", True, None, 4, 1, 5)), repeats=1, unstable_tolerance_pct=100.0)
    checkpoint = tmp_path / "sweep.json"
    fake = lifecycle()
    runner = SweepRunner(definition, BASE, fake.restart, bench_settings(), checkpoint, remeasure={"baseline"})
    # a finished sweep on a busy machine: the baseline's repeats differed by 24 %
    busy = SweepResult(definition, BASE, {}, runner.key, "2026-12-01T17:00:00+00:00", finished=True, points=[
        point("baseline", 0, [2644, 2136, 2128]), point("chain-10", 10, [2410, 2415, 2416]),
        point("chain-5", 5, [2360, 2370, 2378])])
    assert busy.unstable_lines() == ["baseline: repeats 2644 / 2136 / 2128 output tokens/s, 24.2 % apart (their "
                                     "noise allows 5.0 %)"]
    checkpoint.write_text(json.dumps(busy.to_dict()))
    plan = plan_sweep(runner, 4.0)
    assert plan.restarts == 1 and plan.measured == ("chain-10", "chain-5")
    result = await runner.run()
    assert len(fake.commands) == 1 and "--speculative" not in fake.commands[0]  # only the baseline, restarted
    assert result.finished and [p.point.name for p in result.points] == ["baseline", "chain-10", "chain-5"]
    base = result.point("baseline")
    assert base.status == "ok" and len(base.runs) == 1 and base.earlier_values == [2644, 2136, 2128]
    assert result.point("chain-10").throughput.values == (2410, 2415, 2416)  # kept, not measured again
    note = next(r.note for r in result.rows() if r.name == "baseline")
    assert note == "measured again (the earlier repeats 2644 / 2136 / 2128 were unstable)"
    saved = SweepResult.from_dict(json.loads(checkpoint.read_text()))
    assert saved.finished and saved.point("baseline").earlier_values == [2644, 2136, 2128]
    assert not list(tmp_path.glob("sweep-*.json"))  # the checkpoint was resumed, not put aside for a new sweep
    checkpoint.unlink()
    with pytest.raises(SweepError, match="checkpoint is gone"):
        await SweepRunner(definition, BASE, fake.restart, bench_settings(), checkpoint, remeasure={"baseline"}).run()


def test_a_config_within_noise_of_the_baseline_is_named_but_not_called_a_speedup():
    # as the demo sweep: the baseline's repeats spread wide (unstable); chain-16 is the fastest stable config but
    # within the baseline's noise, so no configuration is shown faster than the baseline
    result = sweep_of(point("baseline", 0, [1100, 900, 880]), point("chain-16", 16, [1044, 1046, 1048]),
                      point("chain-5", 5, [957, 958, 960]))
    rec = result.recommendation()
    note = next(r for r in result.rows() if r.name == "chain-16").note
    assert note == "within noise of the baseline"
    assert rec.name == "chain-16" and rec.beats_baseline is False
    assert rec.reason.startswith("no configuration is faster than the baseline beyond its noise; the fastest stable "
                                 "is chain-16 (16 draft tokens, 1046.0 output tokens/s, 1.09x a baseline that was "
                                 "unstable (not a reliable ratio))")
    assert "is the fastest stable config" not in rec.reason
    # beyond the baseline's noise it is a speedup, said once
    faster = sweep_of(point("baseline", 0, [900, 902]), point("chain-16", 16, [1044, 1046]))
    rec = faster.recommendation()
    assert rec.beats_baseline is True
    assert rec.reason == "chain-16 (16 draft tokens, 1045.0 output tokens/s, 1.16x baseline) is the fastest stable config"
    # a stable baseline within noise of the fastest wins the tie: leave speculation off (unchanged)
    assert sweep_of(point("baseline", 0, [1000, 1001]), point("chain-5", 5, [1002, 1003])).recommendation().name == \
        "baseline"
