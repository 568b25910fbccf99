"""`specdash replay --summary` on a recorded depth sweep: the baseline said once, as what it is, and the sweep's
result in the words the bench pane uses (computed again from the recorded sweep, as the replayed pane does)."""

from __future__ import annotations

from specdash.bench.stats import repeat_spread
from specdash.bench.sweep import PointResult, SweepDefinition, SweepPoint, SweepResult
from specdash.session.events import HeaderEvent, SweepEvent
from specdash.session.reader import SessionLog
from specdash.session.summary import summary_lines

BASE = "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 --speculative-draft-model-path d"
OLD_TEXT = ("chain-16 (16 draft tokens, 1046.0 output tokens/s, 1.09x a baseline that was unstable (not a reliable "
            "ratio)) is the fastest stable config")


def point(name: str, depth: int, values: list[float]) -> PointResult:
    spec = depth > 0
    p = SweepPoint(name, spec, None, depth - 1 if spec else None, 1 if spec else None, depth if spec else None)
    spread = repeat_spread(values)
    return PointResult(p, "unstable" if spread.unstable else "ok", throughput=spread)


def summary(event: SweepEvent) -> list[str]:
    header = HeaderEvent(specdash_version="0.1.0", host="local", sglang_version="0.5.1", started_at="2026-12-01")
    return summary_lines(SessionLog(path="s.yaml", header=header, events=[event], problems=[]))


def sweep_lines(lines: list[str]) -> list[str]:
    at = next(i for i, line in enumerate(lines) if "  sweep  " in line)
    return [line.strip() for line in lines[at:]]


def test_the_summary_names_the_baseline_once_and_says_no_speedup_beyond_noise():
    points = [point("baseline", 0, [1100, 900, 880]), point("chain-16", 16, [1044, 1046, 1048]),
              point("chain-5", 5, [957, 958, 960])]
    result = SweepResult(SweepDefinition(tuple(p.point for p in points)), BASE, {"workload": "short-chat"}, "k",
                         "now", points=points, finished=True)
    rows = [{"label": r.name, "output_tokens_per_s": r.output_tokens_per_s, "speedup": r.speedup,
             "stable": r.status == "ok"} for r in result.rows()]
    recorded = SweepEvent(t=134.0, points=rows, baseline="baseline", recommendation=OLD_TEXT, workload="short-chat",
                          sweep=result.to_dict())
    lines = sweep_lines(summary(recorded))
    # before: "sweep       3 configs, workload short-chat, baseline baseline"
    assert lines[0] == '00:02:14  sweep       3 configs, workload short-chat; baseline: no speculation (config ' \
                       '"baseline")'
    # before: "recommendation: chain-16 (...) is the fastest stable config" while its row was within noise
    assert lines[4] == ("result: no configuration is faster than the baseline beyond its noise; the fastest stable is "
                        "chain-16 (16 draft tokens, 1046.0 output tokens/s, 1.09x a baseline that was unstable (not "
                        "a reliable ratio))")
    # a recording without the sweep itself (older, hand-written) keeps its recorded text
    bare = SweepEvent(t=134.0, points=rows, baseline="baseline", recommendation=OLD_TEXT, workload="short-chat")
    assert sweep_lines(summary(bare))[4] == f"result: {OLD_TEXT}"
    # a damaged recorded sweep is no traceback: the recorded text again
    damaged = SweepEvent(t=134.0, points=rows, baseline="baseline", recommendation=OLD_TEXT, sweep={"version": 1})
    assert sweep_lines(summary(damaged))[-1] == f"result: {OLD_TEXT}"


def test_a_failed_baseline_is_said_failed_not_unstable():
    # the recorder writes each row's status; a config that failed (its server did not start) was never measured
    rows = [{"label": "baseline", "output_tokens_per_s": None, "speedup": None, "stable": False, "status": "failed"},
            {"label": "chain-5", "output_tokens_per_s": 2772.1, "speedup": None, "stable": True, "status": "ok"}]
    lines = sweep_lines(summary(SweepEvent(t=60.0, points=rows, baseline="baseline", recommendation="r")))
    # before: "baseline: ? output tokens/s, UNSTABLE"
    assert lines[1:3] == ["baseline: FAILED, not measured", "chain-5: 2,772.1 output tokens/s"]


def test_a_multi_line_command_is_one_line_in_the_summary():
    from specdash.session.events import CommandEvent

    command = ("python3 -m sglang.launch_server --model-path m --port 52885 \\\n  --speculative-algorithm EAGLE3 \\\n"
               "  --speculative-num-steps 3\n")
    header = HeaderEvent(specdash_version="0.1.0", host="local", sglang_version="0.5.1", started_at="2026-12-01")
    lines = summary_lines(SessionLog(path="s.yaml", header=header, problems=[], events=[
        CommandEvent(t=5.0, action="launched", command=command, pid=7, pgid=7)]))
    # before: "... --port 52885 \   --speculative-algorithm EAGLE3 \   --speculative-num-steps 3"
    assert any(line.strip().endswith("config      launched (PGID 7): python3 -m sglang.launch_server --model-path m "
                                     "--port 52885 --speculative-algorithm EAGLE3 --speculative-num-steps 3")
               for line in lines), lines
