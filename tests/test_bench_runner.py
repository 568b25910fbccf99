"""Benchmark runner against a real HTTP server on 127.0.0.1 with exactly known timings (tests/bench_server.py).

Truth comes from the server itself: it logs, on the shared monotonic clock, when it received each request and when
it sent each chunk (GET /bench/log), so every figure is checked against what really happened, also on a loaded
machine. Goal: within 1 %.
"""

from __future__ import annotations

import asyncio
import itertools
import random
import statistics
import sys
import time
from pathlib import Path

import httpx
import pytest
from support.guard import guard

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


def per_token_gaps(offsets_ms: list[float], counts: list[int]) -> list[float]:
    """ITL samples from chunk times: each chunk's gap to the one before, spread over its new tokens."""
    return [(offsets_ms[j] - offsets_ms[j - 1]) / n for j, n in enumerate(counts) if j > 0 for _ in range(n)]


@pytest.mark.parametrize("api", ["chat", "completions", "generate"])
async def test_every_metric_is_what_the_client_saw_and_agrees_with_the_servers_log(timed_server, api):
    """Checked by causality against the server's own log (shared monotonic clock), so it holds on a machine of any
    speed and load: a client cannot send after the server received, nor see a chunk before it was sent, and with
    one request in flight request k+1 leaves only after request k's last chunk arrived, which bounds every figure
    from above. A per-chunk ITL, a wrong clock origin or lost tokens break one of these. (How close the figures
    come to the server's on an idle machine is measured by benchmarks/bench_client_overhead.py.)"""
    before = len(server_log(timed_server.url))
    result = await run_benchmark(settings(timed_server.url, api=api, concurrency=1))
    log = server_log(timed_server.url)[before:]
    assert result.completed == 6 and result.errors == 0 and not result.partial
    truth = expected(TIMED, 31)  # 1 prefill token + 10 verify steps of 3 tokens
    pairs = sorted(match(result, log), key=lambda pair: pair[0].sent_perf_s)
    pooled: list[float] = []
    for k, (req, rec) in enumerate(pairs):
        assert req.output_tokens == 31 and req.token_counts == "server"
        # chunk boundaries as the server sent them: [1, 3, 3, ...]
        counts = [b - a for a, b in zip([0] + req.chunk_cumulative_tokens[:-1], req.chunk_cumulative_tokens, strict=False)]
        assert counts == rec["chunks"] == truth["chunks"]
        assert req.sent_perf_s <= rec["t_recv"]  # sent before the server received it
        seen = [req.sent_perf_s + off / 1000 for off in req.chunk_offsets_ms]
        assert all(s_ >= t for s_, t in zip(seen, rec["t_send"], strict=False))  # no chunk seen before it was sent
        assert req.ttft_ms == req.chunk_offsets_ms[0]  # TTFT counts from this request's own send
        assert req.e2e_ms >= req.chunk_offsets_ms[-1]
        itl = per_token_gaps(req.chunk_offsets_ms, counts)
        assert len(req.itl_ms) == 30 and req.itl_ms == pytest.approx(itl, rel=1e-9)  # one sample per token
        assert req.tpot_ms == pytest.approx((req.e2e_ms - req.ttft_ms) / 30, rel=1e-9)
        if k + 1 < len(pairs):
            nxt_req, nxt_rec = pairs[k + 1]
            # the next request left after this one ended, and reached the server after it left
            assert req.sent_perf_s + req.e2e_ms / 1000 <= nxt_req.sent_perf_s + 1e-9 <= nxt_rec["t_recv"] + 1e-9
        pooled.extend(req.itl_ms)
    # ITL is a distribution over all tokens of the run
    assert result.itl_ms.mean == pytest.approx(statistics.fmean(pooled), rel=1e-9)
    assert result.itl_ms.p50 == pytest.approx(statistics.median(pooled), rel=1e-9)
    # accept length for this run: exact value 31 tokens / 10 verify steps
    assert result.accept_length == pytest.approx(3.1, rel=1e-9)
    assert result.accept_length_source == ("meta_info" if api == "generate" else "server_counters")


async def test_numbers_equal_sglang_bench_serving_math_on_the_same_run(timed_server):
    """Reference math written here from SGLang's bench_serving.py / bench_sglang_eagle.py definitions,
    independently of specdash: TTFT, output throughput, ITL (chunk gap spread over its new tokens), p99 by
    linear interpolation (numpy default == statistics.quantiles 'inclusive'), accept length = Σ completion / Σ verify.
    """
    before = len(server_log(timed_server.url))
    called = time.perf_counter()
    result = await run_benchmark(settings(timed_server.url, api="generate", num_requests=6))
    returned = time.perf_counter()
    log = server_log(timed_server.url)[before:]
    ttfts, itls, output_lens = [], [], []
    for req in result.requests:
        ttft = req.chunk_offsets_ms[0]
        last_len, last_t = req.chunk_cumulative_tokens[0], req.chunk_offsets_ms[0]
        for t, cum in zip(req.chunk_offsets_ms[1:], req.chunk_cumulative_tokens[1:], strict=False):
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
    assert last_chunk - first_send <= result.duration_s <= returned - called


async def test_multi_token_chunks_without_per_chunk_usage_are_estimated_and_marked():
    config = {"ttft_s": 0.02, "chunk_delay_s": 0.03, "tokens_per_chunk": 3, "usage": "final"}
    with BenchServerProcess(config) as server:
        result = await run_benchmark(settings(server.url, api="chat", num_requests=2, concurrency=1))
    req = result.requests[0]
    assert req.token_counts == "estimated"
    assert req.output_tokens == 31  # the final usage chunk still gives the total
    assert len(req.itl_ms) == 30  # one sample per token, not per chunk
    # the estimated samples still cover exactly the time from the first chunk to the last
    assert sum(req.itl_ms) == pytest.approx(req.chunk_offsets_ms[-1] - req.chunk_offsets_ms[0], rel=1e-9)


async def test_failed_requests_are_counted_with_a_message_and_left_out_of_the_figures():
    with BenchServerProcess({**FAST, "fail_every": 3}) as server:
        result = await run_benchmark(settings(server.url, num_requests=6, concurrency=1))
    assert result.errors == 2 and result.completed == 4
    failed = [r for r in result.requests if not r.success]
    assert all(r.error.startswith("HTTP 500") for r in failed)
    assert result.ttft_ms.count == 4
    assert result.total_output_tokens == 4 * 31


async def test_poisson_arrivals_are_seeded_and_follow_the_rate(timed_server):
    """The schedule is checked where it is made (the gaps the runner waits out, recorded by an injected sleep), not
    by the wall clock: the same seed gives the same gaps, exponential with mean 1/rate from that seed."""
    kw = dict(api="generate", num_requests=6, concurrency=None, request_rate=10.0, output_len=4, seed=11)

    async def run(gaps: list[float]):
        async def sleep(seconds: float) -> None:
            gaps.append(seconds)
            await asyncio.sleep(seconds)

        return await run_benchmark(settings(timed_server.url, **kw), sleep=sleep)

    gaps_a: list[float] = []
    gaps_b: list[float] = []
    a = await run(gaps_a)
    b = await run(gaps_b)
    rng = random.Random(11)
    assert gaps_a == gaps_b == [rng.expovariate(10.0) for _ in range(5)]  # 5 gaps between 6 requests
    starts = [r.start_s for r in a.requests]
    assert starts == sorted(starts)
    planned = list(itertools.accumulate(gaps_a, initial=0.0))
    assert all(start >= due - 1e-3 for start, due in zip(starts, planned, strict=False))  # none leaves before its time
    assert [r.prompt for r in a.requests] == [r.prompt for r in b.requests]
    other = []
    await run_benchmark(settings(timed_server.url, **{**kw, "seed": 12}),
                        sleep=lambda sec: other.append(sec) or asyncio.sleep(sec))
    assert other != gaps_a  # the seed is what fixes it


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
        # cancel once two requests finished and a third has streamed tokens (so it is in flight): decided by what
        # the runner reports, not by how long a request takes on this machine
        seen = []

        def on_progress(p):
            seen.append(p)
            if p.phase == "running" and p.done >= 2 and p.output_tokens > 6 * p.done:
                runner.cancel()

        runner.on_progress = on_progress
        result = await asyncio.wait_for(runner.run(), guard(10))
    assert result.partial
    assert result.completed >= 2
    assert any(r.partial and r.error == "cancelled" for r in result.requests)
    assert len(result.requests) < 6  # requests never sent are not recorded
    assert result.errors == 0  # cancelled requests are not server errors
    assert result.output_tokens_per_s > 0
    # the last progress line counts the requests that finished, as the result does (before: every request sent,
    # the ones the cancel cut short too: "cancelled: 32/32 requests" for a run with 3712 of 4096 tokens)
    from specdash.app.bench.render import progress_line

    final = seen[-1]
    assert final.phase == "cancelled" and final.done == result.completed + result.errors < len(result.requests)
    assert progress_line(final).startswith(f"cancelled: {result.completed}/6 requests · 0 failed · "
                                           f"{result.total_output_tokens} tokens · ")
    assert all(p.done <= result.completed + result.errors for p in seen)


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


async def test_live_figures_count_tokens_not_chunks_and_end_on_the_result():
    # 4 tokens per verify step and the usage only in the last chunk (a server ignoring continuous_usage_stats): a
    # count of chunks would say 9 per request; the live figures count the result's 31 tokens of each request
    config = {"ttft_s": 0.01, "chunk_delay_s": 0.01, "tokens_per_chunk": 4, "usage": "final"}
    seen = []
    with BenchServerProcess(config) as server:
        result = await run_benchmark(settings(server.url, api="chat", num_requests=6, concurrency=2),
                                     on_progress=seen.append)
    assert result.total_output_tokens == 6 * 31
    running = [p for p in seen if p.phase == "running"]
    assert running and all(p.output_tokens % 31 == 0 and p.output_tokens <= 31 * p.done for p in running)
    last = seen[-1]
    assert last.phase == "finished"
    assert last.output_tokens == result.total_output_tokens
    assert last.output_tokens_per_s == result.output_tokens_per_s
    assert last.elapsed_s == result.duration_s and last.ttft_p50_ms == result.ttft_ms.p50


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
