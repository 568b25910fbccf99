"""A benchmark difference is 'better' only beyond noise, wherever specdash compares or ranks results: bench
compare, bench list (grouped by what makes results comparable), imported rankings, the sweep's recommendation."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.bench_outputs import sglang_bench_serving
from test_bench_results_cli import specdash
from test_bench_sweep import point, sweep_of

from specdash.bench.difference import Measure, judge, rank_items, shared_ranks
from specdash.bench.imported import find_results
from specdash.bench.imported.report import result_text


def figure_row(stdout: str, key: str) -> list[str]:
    return next(line for line in stdout.splitlines() if line.startswith(key + " ")).split()


def test_compare_of_two_single_runs_0_7_percent_apart_is_within_noise(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(sglang_bench_serving(duration=90.0))
    b.write_text(sglang_bench_serving(duration=89.37))  # 572.90 vs 568.89 tok/s: +0.7 %
    out = specdash("bench", "compare", str(a), str(b), state=tmp_path)
    assert out.returncode == 0, out.stderr
    assert figure_row(out.stdout, "output_tokens_per_s")[-3:] == ["+0.7%", "within", "noise"]
    assert figure_row(out.stdout, "ttft_ms.p99")[-2:] == ["not", "judged"]  # one run's tail
    assert figure_row(out.stdout, "duration_s")[-1] == "-0.7%"  # duration is shown, not judged
    assert "better = beyond noise; one run per side: a difference counts only beyond 5 % of the larger" in out.stdout
    data = json.loads(specdash("bench", "compare", str(a), str(b), "--json", state=tmp_path).stdout)
    row = next(r for r in data["figures"] if r["key"] == "output_tokens_per_s")
    assert row["better"] == "" and row["verdict"] == "within noise"
    assert row["noise"] == pytest.approx(0.05 * 572.90, abs=0.01)
    assert data["rule"].startswith("one run per side")


def test_compare_of_two_single_runs_beyond_the_floor_names_the_better_side(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(sglang_bench_serving(duration=90.0, itl=(30.0, 29.0, 35.0, 45.0, 99.0)))
    b.write_text(sglang_bench_serving(duration=80.0))  # +12.5 % throughput, ITL 27.2 vs 30.0 ms
    out = specdash("bench", "compare", str(a), str(b), state=tmp_path)
    assert figure_row(out.stdout, "output_tokens_per_s")[-2:] == ["+12.5%", "B"]
    assert figure_row(out.stdout, "itl_ms.mean")[-2:] == ["-9.3%", "B"]  # lower latency is better
    assert figure_row(out.stdout, "itl_ms.p50")[-1] == "B"


def test_repeats_use_their_measured_range_and_single_runs_the_floor():
    # repeats that agree to 0.5 %: a 3 % difference is real; the same values as single runs cannot tell
    a, b = Measure(100.0, repeats=3, spread=0.5), Measure(103.0, repeats=3, spread=0.4)
    assert judge("output_tokens_per_s", a, b).verdict == "B"
    assert judge("output_tokens_per_s", a, b).basis == "repeats"
    assert judge("output_tokens_per_s", Measure(100.0), Measure(103.0)).verdict == "within noise"
    # noisy repeats: a 3 % difference is inside their 4 % range
    assert judge("output_tokens_per_s", Measure(100.0, 3, 4.0), Measure(103.0, 3, 1.0)).verdict == "within noise"
    # one side repeated, the other not: the single-run floor applies
    assert judge("output_tokens_per_s", Measure(100.0, 3, 0.1), Measure(103.0)).basis == "one run"
    # a within-run standard error widens the noise (3 * sqrt(2) * 2.0 = 8.5 > 5 % of 107)
    assert judge("output_tokens_per_s", Measure(100.0, se=2.0), Measure(107.0)).verdict == "within noise"
    assert judge("output_tokens_per_s", Measure(100.0), Measure(107.0)).verdict == "B"
    # figures without a better side, and unknowns, get no verdict
    assert judge("accept_length", Measure(2.0), Measure(4.0)).verdict == ""
    assert judge("tpot_ms.mean", None, Measure(4.0)).verdict == ""
    assert judge("tpot_ms.mean", Measure(10.0), Measure(8.0)).verdict == "B"


def test_results_within_noise_share_a_rank():
    measures = [Measure(142.1), Measure(140.0), Measure(120.0), Measure(90.0)]
    assert shared_ranks(measures, "output_tokens_per_s") == [1, 1, 3, 4]
    assert shared_ranks([Measure(7.0), Measure(7.2), Measure(9.0)], "tpot_ms.mean") == [1, 1, 3]
    with pytest.raises(ValueError):
        shared_ranks(measures, "accept_length")


TABLE = """| Config | Steps | TopK | Draft tokens | Accept length | Throughput (tok/s) |
|---|---:|---:|---:|---:|---:|
| baseline | 0 | 0 | 0 | 1.00 | 90.0 |
| eagle3 | 3 | 1 | 4 | 2.90 | 142.1 |
| eagle3-deep | 7 | 1 | 8 | 3.60 | 140.0 |
| eagle3-mid | 5 | 1 | 6 | 3.20 | 120.0 |
"""


def test_imported_ranking_shares_ranks_within_noise_and_drops_the_accept_length_note_for_a_tie():
    [result] = find_results(TABLE)
    shown = result_text(result)
    assert ("    1= eagle3 (steps 3, topk 1, draft tokens 4): 142.1 tok/s\n"
            "    1= eagle3-deep (steps 7, topk 1, draft tokens 8): 140.0 tok/s\n"
            "    3. eagle3-mid (steps 5, topk 1, draft tokens 6): 120.0 tok/s\n"
            "    4. baseline (no speculative decoding): 90.0 tok/s\n"
            "    n= : within noise of each other (one run each: differences under 5 % cannot be told apart), so "
            "they share a rank") in shown
    # eagle3-deep has the highest accept length but is within noise of the fastest: no "does not pay" claim
    assert "does not pay" not in shown
    [group] = result.ranking()
    assert group["ranks"] == [1, 1, 3, 4]


def test_bench_list_ranks_only_within_groups_of_comparable_results(tmp_path):
    for name, duration, conc in (("a", 90.0, 8), ("b", 89.37, 8), ("c", 70.0, 16)):
        path = tmp_path / f"{name}.txt"
        path.write_text(sglang_bench_serving(duration=duration, max_concurrency=conc))
        assert specdash("bench", "import", str(path), state=tmp_path).returncode == 0
    out = specdash("bench", "list", state=tmp_path).stdout
    groups = out.split("\n\n")[1:]
    assert len(groups) == 2 and out.startswith("2 groups of comparable results")
    eight = next(g for g in groups if "concurrency 8," in g.splitlines()[0]).splitlines()
    assert eight[0] == ("group: api sglang, concurrency 8, request rate inf (all at once), measured by sglang bench_serving; "
                        "not stated: model, workload, output length, GPU")
    assert [line.split()[:2] for line in eight[3:5]] == [["1=", "572.90"], ["1=", "568.89"]]
    sixteen = next(g for g in groups if "concurrency 16," in g.splitlines()[0]).splitlines()
    # the fastest result overall (731 tok/s at concurrency 16) is not ranked above the concurrency-8 ones
    assert sixteen[3].split()[:2] == ["1", "731.43"]
    assert sixteen[4] == "  (only result of its kind: nothing to rank it against)"
    data = json.loads(specdash("bench", "list", "--json", state=tmp_path).stdout)
    assert data["ranked_within"] == "groups" and len(data["groups"]) == 2
    assert {g["group"]["concurrency"] for g in data["groups"]} == {8.0, 16.0}


def test_sweep_with_one_repeat_per_point_ties_within_the_single_run_floor():
    # single runs 3 % apart: the smaller depth wins the tie (one run each cannot tell 3 % apart)
    result = sweep_of(point("baseline", 0, [100]), point("chain-10", 10, [154.5]), point("chain-5", 5, [150]))
    rec = result.recommendation()
    assert rec.name == "chain-5" and "ties with the fastest chain-10 within noise" in rec.reason
    # the same 3 % with two close repeats each is a real difference
    result = sweep_of(point("baseline", 0, [100, 100.5]), point("chain-10", 10, [154.5, 154.9]),
                      point("chain-5", 5, [150, 150.3]))
    assert result.recommendation().name == "chain-10"


values = st.floats(allow_nan=True, allow_infinity=True, width=64)
measures = st.builds(Measure, values, st.integers(min_value=0, max_value=5),
                     st.floats(min_value=0, max_value=1e6), st.none() | st.floats(allow_nan=True))
keys = st.sampled_from(["output_tokens_per_s", "tpot_ms.mean", "ttft_ms.p99", "speedup", "accept_length", "x"])


@settings(max_examples=300, deadline=None)
@given(keys, measures, measures)
def test_judge_never_raises_and_is_antisymmetric(key, a, b):
    forward, backward = judge(key, a, b), judge(key, b, a)
    assert forward.verdict in ("A", "B", "within noise", "not judged", "")
    swap = {"A": "B", "B": "A"}
    assert backward.verdict == swap.get(forward.verdict, forward.verdict)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(min_value=0.001, max_value=1e7), min_size=1, max_size=8))
def test_ranking_follows_the_values_and_someone_is_first(rates):
    ranked = rank_items(rates, "output_tokens_per_s", lambda v: Measure(v))
    assert [v for _, v in ranked] == sorted(rates, reverse=True)
    ranks = [n for n, _ in ranked]
    assert ranks[0] == 1 and ranks == sorted(ranks)
    assert all(1 <= n <= len(rates) for n in ranks) and not any(math.isnan(v) for v in rates)


def test_a_sweep_point_within_noise_of_the_baseline_says_so():
    result = sweep_of(point("baseline", 0, [100, 101]), point("chain-5", 5, [100.8, 101.6]),
                      point("chain-10", 10, [130, 131]))
    notes = {r.name: r.note for r in result.rows()}
    assert notes["chain-5"] == "within noise of the baseline"
    assert notes["chain-10"] == "" and notes["baseline"] == ""


ANY_VALUE = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                      st.text(max_size=12), st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3),
                                                                                                  st.integers(),
                                                                                                  max_size=1))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=True, allow_infinity=True), ANY_VALUE, ANY_VALUE, ANY_VALUE),
                min_size=1, max_size=5))
def test_bench_list_of_hostile_stored_records_never_raises(records):
    import contextlib
    import io
    import os
    import tempfile
    from pathlib import Path

    from specdash.cli import main

    with tempfile.TemporaryDirectory() as folder:
        bench = Path(folder) / "bench"
        bench.mkdir()
        for n, (rate, model, concurrency, gpu) in enumerate(records):
            data = {"settings": {"model_id": model, "gpu_name": gpu, "backend": "sglang"},
                    "effective_config": {"concurrency": concurrency},
                    "imported": {"tool": "sglang bench_serving", "line": 1,
                                 "metrics": {"output_tokens_per_s": rate}}}
            (bench / f"imported-{n}.json").write_text(json.dumps(data))
        old = os.environ.get("SPECDASH_STATE_DIR")
        os.environ["SPECDASH_STATE_DIR"] = folder
        try:
            for extra in ([], ["--json"]):
                out = io.StringIO()
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
                    assert main(["bench", "list", *extra]) == 0
            json.loads(out.getvalue(), parse_constant=lambda name: pytest.fail(f"{name} in --json"))
        finally:
            if old is None:
                del os.environ["SPECDASH_STATE_DIR"]
            else:
                os.environ["SPECDASH_STATE_DIR"] = old


def test_compare_of_results_at_different_concurrency_says_they_are_not_like_for_like(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(sglang_bench_serving(duration=90.0, max_concurrency=8))
    b.write_text(sglang_bench_serving(duration=70.0, max_concurrency=16))
    out = specdash("bench", "compare", str(a), str(b), state=tmp_path).stdout
    assert out.splitlines()[2] == ("not like for like: concurrency A 8, B 16. A difference below may come from that, "
                                   "not from the speculative configuration")
    data = json.loads(specdash("bench", "compare", str(a), str(b), "--json", state=tmp_path).stdout)
    assert data["not_comparable"] == [{"key": "concurrency", "a": 8.0, "b": 16.0}]
    same = specdash("bench", "compare", str(a), str(a), state=tmp_path).stdout
    assert "not like for like" not in same
