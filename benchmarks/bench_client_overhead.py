"""Client overhead of specdash's benchmark runner: streamed tokens/s one core can receive, and the timing error.

Target: the client alone receives >= 5 000 streamed tokens/s on one core without its own timing error
exceeding 1 %.

Method: tests/bench_server.py runs in its own process (``--pin``: on the other cores) and streams ONE
token per chunk (the worst case for a client: no multi-token speculative chunks) at a fixed per-chunk delay; it
logs on the shared monotonic clock when it sent every chunk. This process (``--pin``: on one core) runs
:class:`specdash.bench.runner.BenchRunner` with increasing concurrency. For each step the script prints

* received tokens/s (all tokens of all requests / wall time) and the client's CPU use (process CPU time / wall);
  tokens/s per fully used core = received / CPU share;
* the client's timing error against the server's own send log: TTFT (client TTFT vs first chunk sent - client
  send), mean ITL and p50 ITL (per-token gaps vs the server's gaps), TPOT and E2E; the median over requests of
  the relative error is reported (and the max).

Usage: ``python benchmarks/bench_client_overhead.py [--api generate|chat] [--output-len 400] [--delay-ms 2]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from bench_server import BenchServerProcess  # noqa: E402

from specdash.bench.runner import BenchRunner, BenchSettings  # noqa: E402
from specdash.bench.workload import Workload  # noqa: E402


def pin(pid: int, cpus: set[int]) -> bool:
    try:
        os.sched_setaffinity(pid, cpus)
        return True
    except (AttributeError, OSError):
        return False


def match(result, log):
    pairs, used = [], set()
    for req in result.requests:
        best = min(
            ((rec["t_recv"] - req.sent_perf_s, i) for i, rec in enumerate(log)
             if i not in used and rec["prompt"] == req.prompt and rec["t_recv"] >= req.sent_perf_s),
            default=None,
        )
        if best is None:
            continue
        used.add(best[1])
        pairs.append((req, log[best[1]]))
    return pairs


def rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if b else 0.0


async def step(url: str, api: str, concurrency: int, output_len: int) -> dict:
    prompts = tuple(f"overhead prompt {i}" for i in range(concurrency * 2))
    settings = BenchSettings(url=url, workload=Workload("overhead", prompts), api=api, num_requests=concurrency * 2,
                             concurrency=concurrency, output_len=output_len, warmup_requests=0, seed=1)
    before = len(httpx.get(url + "/bench/log", trust_env=False).json())
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = await BenchRunner(settings).run()
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    log = httpx.get(url + "/bench/log", trust_env=False).json()[before:]
    errs: dict[str, list[float]] = {"ttft": [], "itl_mean": [], "itl_p50": [], "tpot": [], "e2e": []}
    for req, rec in match(result, log):
        sends = rec["t_send"]
        ttft_true = sends[0] - req.sent_perf_s
        e2e_true = sends[-1] - req.sent_perf_s
        gaps = [(b - a) / n for a, b, n in zip(sends, sends[1:], rec["chunks"][1:]) for _ in range(n)]
        errs["ttft"].append(rel(req.ttft_ms / 1000, ttft_true))
        errs["e2e"].append(rel(req.e2e_ms / 1000, e2e_true))
        errs["itl_mean"].append(rel(statistics.fmean(req.itl_ms) / 1000, statistics.fmean(gaps)))
        errs["itl_p50"].append(rel(statistics.median(req.itl_ms) / 1000, statistics.median(gaps)))
        errs["tpot"].append(rel(req.tpot_ms / 1000, (e2e_true - ttft_true) / (req.output_tokens - 1)))
    tokens = sum(r.output_tokens for r in result.requests if r.success)
    return {
        "concurrency": concurrency,
        "errors": result.errors,
        "tokens_per_s": tokens / wall,
        "cpu_share": cpu / wall,
        "per_core": tokens / cpu if cpu else float("inf"),
        "err_median": {k: statistics.median(v) for k, v in errs.items() if v},
        "err_max": {k: max(v) for k, v in errs.items() if v},
    }


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", default="generate", choices=("generate", "chat", "completions"))
    parser.add_argument("--output-len", type=int, default=400)
    parser.add_argument("--delay-ms", type=float, default=2.0, help="server's per-chunk delay")
    parser.add_argument("--tokens-per-chunk", type=int, default=1,
                        help="tokens per streamed chunk (1: worst case; speculative decoding sends several)")
    parser.add_argument("--concurrency", default="1,4,8,16,24", help="comma-separated steps")
    parser.add_argument("--pin", action="store_true",
                        help="pin the client to one CPU and the server to the others (needs an otherwise idle "
                             "machine: on a busy one a pinned client waits for its CPU and reads late)")
    args = parser.parse_args()

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else [0]
    server = BenchServerProcess({"ttft_s": 0.05, "chunk_delay_s": args.delay_ms / 1000,
                                 "tokens_per_chunk": args.tokens_per_chunk, "speculative": False}).start()
    try:
        pinned = args.pin and len(cpus) > 1 and pin(0, {cpus[0]}) and pin(server.proc.pid, set(cpus[1:]))
        print(f"client pinned to CPU {cpus[0]}, server on {cpus[1:]}" if pinned else
              f"not pinned ({len(cpus)} CPUs); 'client CPU' is the client's own CPU time / wall time")
        print(f"api {args.api}, {args.tokens_per_chunk} token(s) per chunk every {args.delay_ms} ms per stream, "
              f"{args.output_len} tokens per request")
        print(f"{'conc':>4} {'tokens/s':>9} {'client CPU':>10} {'tok/s/core':>10}   median rel. error (max): "
              "TTFT / ITL mean / ITL p50 / TPOT / E2E")
        await step(server.url, args.api, 2, 20)  # first use of httpx/anyio imports lazily: not measured
        for c in (int(x) for x in args.concurrency.split(",")):
            r = await step(server.url, args.api, c, args.output_len)
            e, m = r["err_median"], r["err_max"]
            errs = " / ".join(f"{e[k] * 100:.2f}% ({m[k] * 100:.1f}%)" for k in ("ttft", "itl_mean", "itl_p50", "tpot", "e2e"))
            print(f"{c:>4} {r['tokens_per_s']:>9.0f} {r['cpu_share'] * 100:>9.0f}% {r['per_core']:>10.0f}   {errs}"
                  + (f"  [{r['errors']} errors]" if r["errors"] else ""))
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
