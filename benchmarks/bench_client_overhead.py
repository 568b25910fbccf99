"""Client overhead of specdash's benchmark runner: CPU per token, and its timing error against the server's wire.

Target: CPU per token no more than SGLang ``bench_serving``'s; TTFT p50 error at 32 streams no more than
``bench_serving``'s; ITL p50 within 1 % up to 10 000 tokens/s at 1 token per chunk (the comparison with
``bench_serving`` itself: ``bench_vs_bench_serving.py``).

Method: tests/bench_server.py runs in its own process and streams ONE token per chunk (the worst case for a client:
no multi-token speculative chunks) at a fixed per-chunk delay. The truth is taken at the server's side of the wire:
it records, on the shared monotonic clock, when each request's bytes reached it (``t_arrive``: the kernel's receive
stamp, ``SO_TIMESTAMPNS``, before any wait in the accept queue) and when each chunk's write returned (``t_written``).
So the true TTFT is ``t_written[0] - t_arrive`` and the true per-token gaps are the gaps between writes: a client
that stamps its send time early, or stamps arrivals late because its event loop is busy, shows as error here. This
process runs :class:`specdash.bench.runner.BenchRunner` with increasing concurrency and prints per step

* received tokens/s and the client's CPU use over the request phase (process CPU time / wall time), CPU per 1 000
  tokens (ms);
* the relative error of the run's TTFT p50 and ITL p50 against the same percentiles of the server's truth, and the
  median over requests of each request's TTFT / ITL mean / TPOT / E2E error against its own truth;
* where a TTFT error comes from: "stamp lag", the median over chunks of the client's arrival stamp minus the
  server's write (how late the client reads the clock), and "to server", the median time from the client's send
  stamp to the arrival of the request's bytes at the server (the client's own work before its bytes leave,
  connection set-up included).

Usage: ``python benchmarks/bench_client_overhead.py [--api generate|chat|completions] [--output-len 200]
[--delay-ms 2] [--concurrency 1,4,8,16,32]``.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from bench_server import BenchServerProcess  # noqa: E402

from specdash.bench.runner import BenchRunner, BenchSettings  # noqa: E402
from specdash.bench.stats import percentile  # noqa: E402
from specdash.bench.workload import Workload  # noqa: E402


def server_log(url: str) -> list[dict]:
    """The server's per-request log (``GET /bench/log``)."""
    return httpx.get(url + "/bench/log", trust_env=False, timeout=30).json()


def start(rec: dict) -> float:
    """When the request of log record ``rec`` reached the server: the kernel's receive stamp of its first bytes,
    else its connection's accept, else the read of its body."""
    for key in ("t_arrive", "t_accept"):
        if rec.get(key) is not None:
            return rec[key]
    return rec["t_recv"]


def truth(records: list[dict]) -> dict:
    """The server-side truth of ``records``: ``ttft_ms`` (one per request), ``itl_ms`` (one per token after the
    first chunk, a chunk's gap spread over its tokens), from the request's arrival at the server (:func:`start`)
    and the ``t_written`` stamps."""
    ttft, itl = [], []
    for rec in records:
        written = rec["t_written"]
        ttft.append((written[0] - start(rec)) * 1000.0)
        for a, b, n in zip(written, written[1:], rec["chunks"][1:], strict=False):
            itl.extend([(b - a) * 1000.0 / n] * n)
    return {"ttft_ms": ttft, "itl_ms": itl}


def rel(a: float, b: float) -> float:
    """Relative error of ``a`` against the truth ``b`` (signed)."""
    return (a - b) / b if b else 0.0


class _TimedRunner(BenchRunner):
    """BenchRunner that records the process CPU time and wall time of its measured phase."""

    cpu_s = 0.0
    wall_s = 0.0

    async def _measured(self, client, base, model):  # type: ignore[no-untyped-def]
        cpu0, wall0 = time.process_time(), time.perf_counter()
        try:
            return await super()._measured(client, base, model)
        finally:
            self.cpu_s, self.wall_s = time.process_time() - cpu0, time.perf_counter() - wall0


async def run_specdash(url: str, api: str, concurrency: int, num_requests: int, output_len: int) -> dict:
    """One specdash run; its figures against the server's truth of the same requests."""
    prompts = tuple(f"overhead prompt {time.time_ns()} {i}" for i in range(num_requests))
    settings = BenchSettings(url=url, workload=Workload("overhead", prompts), api=api, num_requests=num_requests,
                             concurrency=concurrency, output_len=output_len, warmup_requests=0, seed=1)
    before = len(server_log(url))
    runner = _TimedRunner(settings)
    result = await runner.run()
    records = server_log(url)[before:]
    true = truth(records)
    by_prompt = {rec["prompt"]: rec for rec in records}
    per_request: dict[str, list[float]] = {"ttft": [], "itl_mean": [], "tpot": [], "e2e": []}
    lag_ms: list[float] = []  # client's arrival stamp - the server's write, per chunk
    pre_ms: list[float] = []  # client's send stamp -> the request's bytes at the server
    for req in result.requests:
        rec = by_prompt.get(req.prompt)
        if rec is None or not req.success:
            continue
        one = truth([rec])
        written = rec["t_written"]
        ttft_true = one["ttft_ms"][0]
        e2e_true = (written[-1] - start(rec)) * 1000.0
        per_request["ttft"].append(rel(req.ttft_ms, ttft_true))
        if len(req.chunk_offsets_ms) == len(written):
            lag_ms.extend((req.sent_perf_s - w) * 1000.0 + off for off, w in zip(req.chunk_offsets_ms, written,
                                                                               strict=True))
        pre_ms.append((start(rec) - req.sent_perf_s) * 1000.0)
        per_request["itl_mean"].append(rel(statistics.fmean(req.itl_ms), statistics.fmean(one["itl_ms"])))
        per_request["e2e"].append(rel(req.e2e_ms, e2e_true))
        if req.tpot_ms is not None:
            per_request["tpot"].append(rel(req.tpot_ms, (e2e_true - ttft_true) / (req.output_tokens - 1)))
    tokens = result.total_output_tokens
    return {
        "client": "specdash",
        "errors": result.errors,
        "tokens": tokens,
        "cpu_s": runner.cpu_s,
        "wall_s": runner.wall_s,
        "ttft_p50_ms": result.ttft_ms.p50,
        "itl_p50_ms": result.itl_ms.p50,
        "true_ttft_p50_ms": percentile(true["ttft_ms"], 50),
        "true_itl_p50_ms": percentile(true["itl_ms"], 50),
        "per_request": {k: statistics.median(v) for k, v in per_request.items() if v},
        "stamp_lag_ms": percentile(lag_ms, 50),
        "send_to_server_ms": percentile(pre_ms, 50),
    }


def summary(r: dict) -> dict:
    """CPU per 1 000 tokens (ms), tokens/s, and the p50 errors of a run dict (specdash or bench_serving)."""
    return {
        "tokens_per_s": r["tokens"] / r["wall_s"] if r["wall_s"] else 0.0,
        "cpu_share": r["cpu_s"] / r["wall_s"] if r["wall_s"] else 0.0,
        "cpu_ms_per_1k": r["cpu_s"] * 1e6 / r["tokens"] if r["tokens"] else float("nan"),
        "ttft_p50_err": rel(r["ttft_p50_ms"], r["true_ttft_p50_ms"]),
        "itl_p50_err": rel(r["itl_p50_ms"], r["true_itl_p50_ms"]),
    }


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}ms"


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", default="generate", choices=("generate", "chat", "completions"))
    parser.add_argument("--output-len", type=int, default=200)
    parser.add_argument("--delay-ms", type=float, default=2.0, help="server's per-chunk delay")
    parser.add_argument("--concurrency", default="1,4,8,16,32", help="comma-separated steps")
    args = parser.parse_args()

    server = BenchServerProcess({"ttft_s": 0.05, "chunk_delay_s": args.delay_ms / 1000, "tokens_per_chunk": 1,
                                 "speculative": False}).start()
    try:
        print(f"api {args.api}, 1 token per chunk every {args.delay_ms} ms per stream, {args.output_len} tokens per "
              "request; truth: the server's write stamps")
        print(f"{'conc':>4} {'tokens/s':>9} {'client CPU':>10} {'CPU ms/1k tok':>13} {'TTFT p50 err':>12} "
              f"{'ITL p50 err':>11} {'stamp lag':>9} {'to server':>9}   per request (median): TTFT / ITL mean / "
              "TPOT / E2E")
        await run_specdash(server.url, args.api, 2, 2, 20)  # first use imports lazily: not measured
        for c in (int(x) for x in args.concurrency.split(",")):
            r = await run_specdash(server.url, args.api, c, c * 2, args.output_len)
            s, p = summary(r), r["per_request"]
            per = " / ".join(f"{p[k] * 100:+.2f}%" for k in ("ttft", "itl_mean", "tpot", "e2e") if k in p)
            print(f"{c:>4} {s['tokens_per_s']:>9.0f} {s['cpu_share'] * 100:>9.0f}% {s['cpu_ms_per_1k']:>13.1f} "
                  f"{s['ttft_p50_err'] * 100:>+11.2f}% {s['itl_p50_err'] * 100:>+10.2f}% "
                  f"{_ms(r['stamp_lag_ms']):>9} {_ms(r['send_to_server_ms']):>9}   {per}"
                  + (f"  [{r['errors']} errors]" if r["errors"] else ""))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
