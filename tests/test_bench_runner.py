"""Benchmark runner against a real HTTP server on 127.0.0.1 with exactly known timings (tests/bench_server.py).

Truth comes from the server itself: it logs, on the shared monotonic clock, when it received each request and when
it sent each chunk (GET /bench/log), so every figure is checked against what really happened, also on a loaded
machine. Goal: within 1 %.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bench_server import BenchServerProcess, expected  # noqa: E402

from specdash.bench.runner import BenchRunner, BenchSettings, ServerUnreachable, run_benchmark  # noqa: E402
from specdash.bench.workload import Workload  # noqa: E402

# 1 prefill token after 120 ms, then verify steps of 3 tokens every 40 ms (13.3 ms per token). Tens of ms on
# purpose: a shared test machine delays a client by a fraction of a millisecond now and then.
TIMED = {"ttft_s": 0.12, "chunk_delay_s": 0.04, "tokens_per_chunk": 3, "metrics": True}
FAST = {"ttft_s": 0.01, "chunk_delay_s": 0.005, "tokens_per_chunk": 3}  # where timing is not the point
PROMPTS = Workload(name="t", prompts=tuple(f"prompt number {i}" for i in range(6)))


@pytest.fixture(scope="module")
def timed_server():
    with BenchServerProcess(TIMED) as server:
        yield server


def settings(url: str, **kw) -> BenchSettings:
    base = dict(api="generate", num_requests=6, concurrency=3, output_len=31, warmup_requests=0, seed=3)
    base.update(kw)
    return BenchSettings(url=url, workload=PROMPTS, **base)


def server_log(url: str) -> list[dict]:
    return httpx.get(url + "/bench/log", trust_env=False).json()


def match(result, log: list[dict]) -> list[tuple]:
    """Pair each client request with the server record of the same prompt received closest after its send."""
    pairs, used = [], set()
    for req in result.requests:
        candidates = [
            (rec["t_recv"] - req.sent_perf_s, i)
            for i, rec in enumerate(log)
            if i not in used and rec["prompt"] == req.prompt and rec["t_recv"] >= req.sent_perf_s
        ]
        _, best = min(candidates)
        used.add(best)
        pairs.append((req, log[best]))
    return pairs


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b)


async def measure_against_truth(url: str, api: str) -> tuple[dict[str, list[float]], object]:
    """One run; exact checks asserted here; returns the relative timing errors per request and the result."""
    before = len(server_log(url))
    result = await run_benchmark(settings(url, api=api))
    log = server_log(url)[before:]
    assert result.completed == 6 and result.errors == 0 and not result.partial
    truth = expected(TIMED, 31)  # 1 prefill token + 10 verify steps of 3 tokens
    errors: dict[str, list[float]] = {"ttft": [], "e2e": [], "tpot": []}
    itl_true_all: list[float] = []
    for req, rec in match(result, log):
        assert req.output_tokens == 31 and req.token_counts == "server"
        # chunk boundaries as the server sent them: [1, 3, 3, ...]
        counts = [b - a for a, b in zip([0] + req.chunk_cumulative_tokens[:-1], req.chunk_cumulative_tokens)]
        assert counts == rec["chunks"] == truth["chunks"]
        ttft_true = (rec["t_send"][0] - req.sent_perf_s) * 1000
        e2e_true = (rec["t_send"][-1] - req.sent_perf_s) * 1000
        assert req.ttft_ms >= ttft_true  # a client cannot see a chunk before it was sent
        # per-token ITL: each verify chunk's gap spread over its 3 tokens
        itl_true = [
            (rec["t_send"][j] - rec["t_send"][j - 1]) * 1000 / n
            for j, n in enumerate(rec["chunks"])
            if j > 0
            for _ in range(n)
        ]
        assert len(req.itl_ms) == len(itl_true) == 30  # one ITL sample per token, not per chunk
        errors["ttft"].append(rel(req.ttft_ms, ttft_true))
        errors["e2e"].append(rel(req.e2e_ms, e2e_true))
        itl_true_all.extend(itl_true)
        errors["tpot"].append(rel(req.tpot_ms, (e2e_true - ttft_true) / 30))
    # ITL is a distribution over all tokens of the run: compare the run's figures with the pooled truth
    errors["itl_mean"] = [rel(result.itl_ms.mean, statistics.fmean(itl_true_all))]
    errors["itl_p50"] = [rel(result.itl_ms.p50, statistics.median(itl_true_all))]
    # accept length for this run: exact value 31 tokens / 10 verify steps
    assert result.accept_length == pytest.approx(3.1, rel=1e-9)
    assert result.accept_length_source == ("meta_info" if api == "generate" else "server_counters")
    return errors, result


def worst_typical_error(errors: dict[str, list[float]]) -> float:
    return max(statistics.median(errs) for errs in errors.values())


@pytest.mark.parametrize("api", ["chat", "completions", "generate"])
async def test_every_metric_matches_the_servers_truth_within_one_percent(timed_server, api):
    # Goal: within 1 %: the typical error (median over the run's requests) of TTFT, E2E and TPOT, and the run's
    # ITL mean and p50 against the same figures of the true per-token gaps.
    # What the client sees late because the machine did not schedule it (test machines run many suites on two
    # cores) is not a measurement bug but it is not repeatable either: up to three attempts, the best counts.
    # A systematic error (per-chunk ITL, wrong clock origin, lost tokens) fails every attempt.
    attempts = []
    for _ in range(3):
        errors, result = await measure_against_truth(timed_server.url, api)
        attempts.append((worst_typical_error(errors), errors, result))
        if attempts[-1][0] < 0.01:
            break
    worst, errors, result = min(attempts, key=lambda a: a[0])
    for name, errs in errors.items():
        assert statistics.median(errs) < 0.01, (name, errs)
    # the configured timing (20 ms per 3-token verify step = 6.67 ms per token) is what the server aims at; its
    # own log above is the reference, as a loaded machine can delay its first chunk
    assert rel(result.itl_ms.p50, expected(TIMED, 31)["itl_s"] * 1000) < 0.05


async def test_numbers_equal_sglang_bench_serving_math_on_the_same_run(timed_server):
    """Reference math written here from SGLang's bench_serving.py / bench_sglang_eagle.py definitions,
    independently of specdash: TTFT, output throughput, ITL (chunk gap spread over its new tokens), p99 by
    linear interpolation (numpy default == statistics.quantiles 'inclusive'), accept length = Σ completion / Σ verify.
    """
    before = len(server_log(timed_server.url))
    result = await run_benchmark(settings(timed_server.url, api="generate", num_requests=6))
    log = server_log(timed_server.url)[before:]
    ttfts, itls, output_lens = [], [], []
    for req in result.requests:
        ttft = req.chunk_offsets_ms[0]
        last_len, last_t = req.chunk_cumulative_tokens[0], req.chunk_offsets_ms[0]
        for t, cum in zip(req.chunk_offsets_ms[1:], req.chunk_cumulative_tokens[1:]):
            new = cum - last_len
            if new == 0:
                continue
            itls.extend([(t - last_t) / new] * new)
            last_len, last_t = cum, t
        ttfts.append(ttft)
        output_lens.append(req.chunk_cumulative_tokens[-1])
    p99 = lambda xs: statistics.quantiles(xs, n=100, method="inclusive")[98]  # noqa: E731
    assert result.ttft_ms.mean == pytest.approx(statistics.fmean(ttfts), rel=1e-9)
    assert result.ttft_ms.p50 == pytest.approx(statistics.median(ttfts), rel=1e-9)
    assert result.ttft_ms.p99 == pytest.approx(p99(ttfts), rel=1e-9)
    assert result.itl_ms.p99 == pytest.approx(p99(itls), rel=1e-9)
    assert result.output_tokens_per_s == pytest.approx(sum(output_lens) / result.duration_s, rel=1e-9)
    assert result.requests_per_s == pytest.approx(6 / result.duration_s, rel=1e-9)
    server_tokens = sum(sum(rec["chunks"]) for rec in log)
    server_verifies = sum(len(rec["chunks"]) - 1 for rec in log)
    assert result.accept_length == pytest.approx(server_tokens / server_verifies, rel=1e-12)
    # the run's duration covers the first send to the last chunk (and the client's reading of it)
    first_send = min(r.sent_perf_s for r in result.requests)
    last_chunk = max(t for rec in log for t in rec["t_send"])
    assert last_chunk - first_send <= result.duration_s < (last_chunk - first_send) * 1.05


async def test_multi_token_chunks_without_per_chunk_usage_are_estimated_and_marked():
    config = {"ttft_s": 0.02, "chunk_delay_s": 0.03, "tokens_per_chunk": 3, "usage": "final"}
    with BenchServerProcess(config) as server:
        result = await run_benchmark(settings(server.url, api="chat", num_requests=2, concurrency=1))
    req = result.requests[0]
    assert req.token_counts == "estimated"
    assert req.output_tokens == 31  # the final usage chunk still gives the total
    assert len(req.itl_ms) == 30  # one sample per token, not per chunk
    assert rel(result.itl_ms.p50, expected(config, 31)["itl_s"] * 1000) < 0.05


async def test_failed_requests_are_counted_with_a_message_and_left_out_of_the_figures():
    with BenchServerProcess({**FAST, "fail_every": 3}) as server:
        result = await run_benchmark(settings(server.url, num_requests=6, concurrency=1))
    assert result.errors == 2 and result.completed == 4
    failed = [r for r in result.requests if not r.success]
    assert all(r.error.startswith("HTTP 500") for r in failed)
    assert result.ttft_ms.count == 4
    assert result.total_output_tokens == 4 * 31


async def test_poisson_arrivals_are_seeded_and_follow_the_rate(timed_server):
    kw = dict(api="generate", num_requests=6, concurrency=None, request_rate=10.0, output_len=4, seed=11)
    a = await run_benchmark(settings(timed_server.url, **kw))
    b = await run_benchmark(settings(timed_server.url, **kw))
    starts_a = [r.start_s for r in a.requests]
    starts_b = [r.start_s for r in b.requests]
    assert starts_a == sorted(starts_a)
    # same seed -> same arrival schedule (to within scheduling jitter; gaps average 100 ms)
    assert max(abs(x - y) for x, y in zip(starts_a, starts_b)) < 0.03
    assert 0.1 < starts_a[-1] < 2.0  # 5 exponential gaps of mean 0.1 s
    assert [r.prompt for r in a.requests] == [r.prompt for r in b.requests]


async def test_concurrency_limit_is_respected(timed_server):
    result = await run_benchmark(settings(timed_server.url, num_requests=6, concurrency=2, output_len=7))
    spans = [(r.start_s, r.start_s + r.e2e_ms / 1000) for r in result.requests]
    for t, _ in spans:
        in_flight = sum(1 for s, e in spans if s <= t + 1e-4 and e > t + 1e-4)
        assert in_flight <= 2


async def test_cancel_keeps_finished_requests_and_marks_the_run_partial():
    slow = {"ttft_s": 0.02, "chunk_delay_s": 0.05, "tokens_per_chunk": 1}
    with BenchServerProcess(slow) as server:
        runner = BenchRunner(settings(server.url, num_requests=6, concurrency=2, output_len=6))
        # cancel as soon as two requests finished (each takes ~0.27 s; two more are then in flight)
        runner.on_progress = lambda p: runner.cancel() if p.done >= 2 and p.phase == "running" else None
        result = await asyncio.wait_for(runner.run(), 10)
    assert result.partial
    assert result.completed >= 2
    assert any(r.partial and r.error == "cancelled" for r in result.requests)
    assert len(result.requests) < 6  # requests never sent are not recorded
    assert result.errors == 0  # cancelled requests are not server errors
    assert result.output_tokens_per_s > 0


async def test_dead_server_raises_a_one_line_error():
    with BenchServerProcess({}) as server:
        url = server.url
    with pytest.raises(ServerUnreachable, match=r"cannot connect to http://127\.0\.0\.1:\d+"):
        await run_benchmark(settings(url))


async def test_warmup_requests_are_sent_but_not_recorded(timed_server):
    before = len(server_log(timed_server.url))
    result = await run_benchmark(settings(timed_server.url, num_requests=2, warmup_requests=2, output_len=8))
    log = server_log(timed_server.url)[before:]
    assert len(log) == 4 and len(result.requests) == 2


async def test_progress_reports_live_figures(timed_server):
    seen = []
    await run_benchmark(settings(timed_server.url, num_requests=4, output_len=13), on_progress=seen.append)
    assert seen[-1].phase == "finished" and seen[-1].done == 4 and seen[-1].total == 4
    assert seen[-1].output_tokens == 4 * 13
    assert any(p.phase == "running" and 0 < p.done < 4 for p in seen)


async def test_effective_configuration_merges_server_info_and_caller():
    args = {"speculative_algorithm": "EAGLE3", "speculative_num_steps": 3, "attention_backend": "fa3"}
    with BenchServerProcess({**FAST, "server_args": args}) as server:
        result = await run_benchmark(
            settings(server.url, num_requests=1),
            effective_config={"gpu_name": "NVIDIA H100 80GB HBM3", "attention_backend": "flashinfer"},
        )
    cfg = result.effective_config
    assert cfg["speculative_algorithm"] == "EAGLE3" and cfg["speculative_num_steps"] == 3
    assert cfg["gpu_name"] == "NVIDIA H100 80GB HBM3"
    # the server's post-rewrite value wins; what the caller asked for is kept next to it (silent rewrite, as in the nextn-changes-backend-and-page-size case)
    assert cfg["attention_backend"] == "fa3"
    assert cfg["requested"] == {"attention_backend": "flashinfer"}
    assert cfg["version"] == "0.0.test"
    assert result.settings["seed"] == 3 and result.settings["workload"] == "t"


async def test_accept_length_of_a_fresh_server_from_server_info():
    # no /metrics, chat API (no meta_info): the running average of a server that had no verify step before the
    # run is this run's own (SGLang's average counts drafts + bonus per verify step: 3 tokens here)
    with BenchServerProcess(FAST) as server:
        exact = await run_benchmark(settings(server.url, api="chat", num_requests=2, output_len=10))
    assert exact.accept_length_source == "server_info_fresh" and exact.accept_length == pytest.approx(3.0)
    assert "no verify step before this run" in exact.accept_length_note
    with BenchServerProcess(FAST) as server:  # as after a sweep restart: warm-up of the same workload included
        warm = await run_benchmark(settings(server.url, api="chat", num_requests=2, output_len=10, warmup_requests=1))
    assert warm.accept_length_source == "server_info_fresh" and "1 warm-up request" in warm.accept_length_note
