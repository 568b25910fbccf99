"""specdash's benchmark client beside SGLang's ``bench_serving``, on the same loopback server with known timings.

Numbers to reach (printed beside their anchor): CPU per token no more than ``bench_serving``'s; TTFT p50 error at
32 streams no more than ``bench_serving``'s; ITL p50 within 1 % up to 10 000 tokens/s at 1 token per chunk.

Method: tests/bench_server.py (its own process) streams /generate with ONE token per chunk at a fixed per-chunk
delay (rate = streams / delay); the truth is the server's side of the wire (see ``bench_client_overhead.py``:
``t_written[0] - t_arrive`` for TTFT, ``t_arrive`` the kernel's receive stamp of the request, the gaps between chunk
writes for ITL). For each rate the two clients run in interleaved rounds with the same streams, requests and output
length: specdash in this process (:class:`specdash.bench.runner.BenchRunner`), ``bench_serving`` (``--backend sglang
--dataset-name random-ids``) in a Python that has SGLang installed, through ``bench_serving_driver.py`` (a stand-in
``datasets`` module and a local word-level tokenizer; no download). CPU is each client's process CPU time over its
request phase. Where a TTFT error comes from, per client: "lag" is the median over chunks of the client's arrival
stamp minus the server's write of that chunk (how late the client reads the clock; the server tags each request's
text with its id so bench_serving's outputs can be matched), "to server" the median time from the client's start
stamp to the arrival of the request's bytes at the server (the client's own work before its bytes leave, connection
set-up included; it grows with the machine's load). "TTFT p50 err" compares the run's TTFT p50 with the p50 of the
server's truth; "TTFT err p50" is the median over requests of each request's error against its own truth (the
server's own delay, which differs from request to request on a loaded machine, cancels out). Figures are the medians
over rounds; ``bench_serving`` reports ``np.median`` for its p50s, specdash linear-interpolated percentiles (the
same for the median).

SGLang's Python: ``--sglang-python PATH`` (default: ``$SGLANG_PYTHON``); without one only specdash's column is
printed. ``bench_serving`` is not part of this repository: install SGLang in a separate virtual environment
(``pip install sglang``; only its benchmark module is imported).

Usage: ``python benchmarks/bench_vs_bench_serving.py --sglang-python ~/sglang-venv/bin/python
[--streams 32] [--rates 2000,5000,10000] [--rounds 3] [--output-len 200]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from bench_client_overhead import percentile, rel, run_specdash, server_log, start, summary, truth  # noqa: E402
from bench_server import BenchServerProcess  # noqa: E402


def run_bench_serving(python: str, url: str, streams: int, num_requests: int, output_len: int) -> dict:
    """One bench_serving run through the driver; its figures against the server's truth of the same requests."""
    before = len(server_log(url))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                                                             "http_proxy", "https_proxy", "all_proxy")}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost"
    proc = subprocess.run(
        [python, str(HERE / "bench_serving_driver.py"), url, str(streams), str(num_requests), str(output_len)],
        capture_output=True, text=True, env=env, timeout=600,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"bench_serving failed: {proc.stderr.strip().splitlines()[-1:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    records = server_log(url)[before:]
    true = truth(records)
    by_rid = {rec["rid"]: rec for rec in records}
    lag_ms, pre_ms, ttft_err = [], [], []
    for req in out["requests"]:  # arrivals: start + ttft, then + each gap (1 token per chunk: a gap per chunk)
        rec = by_rid.get(req["rid"])
        if rec is None or len(req["itl"]) + 1 != len(rec["t_written"]):
            continue
        arrival = req["start"] + req["ttft"]
        arrivals = [arrival]
        for gap in req["itl"]:
            arrival += gap
            arrivals.append(arrival)
        lag_ms.extend((a - w) * 1000.0 for a, w in zip(arrivals, rec["t_written"], strict=True))
        pre_ms.append((start(rec) - req["start"]) * 1000.0)
        ttft_err.append(rel(req["ttft"] * 1000.0, truth([rec])["ttft_ms"][0]))
    return {
        "client": "bench_serving",
        "errors": num_requests - out["completed"],
        "tokens": out["total_output_tokens"],
        "cpu_s": out["cpu_s"],
        "wall_s": out["wall_s"],
        "ttft_p50_ms": out["median_ttft_ms"],
        "itl_p50_ms": out["median_itl_ms"],
        "true_ttft_p50_ms": percentile(true["ttft_ms"], 50),
        "true_itl_p50_ms": percentile(true["itl_ms"], 50),
        "stamp_lag_ms": percentile(lag_ms, 50),
        "send_to_server_ms": percentile(pre_ms, 50),
        "per_request": {"ttft": percentile(ttft_err, 50)},
    }


def _median(rows: list[dict], key: str) -> float:
    values = [r[key] for r in rows if r[key] is not None]
    return statistics.median(values) if values else float("nan")


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sglang-python", default=os.environ.get("SGLANG_PYTHON"))
    parser.add_argument("--streams", type=int, default=32)
    parser.add_argument("--rates", default="2000,5000,10000", help="target tokens/s (all streams), comma-separated")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--requests-per-stream", type=int, default=2)
    parser.add_argument("--output-len", type=int, default=200)
    args = parser.parse_args()
    clients = ["specdash"] + (["bench_serving"] if args.sglang_python else [])
    print(f"/generate, 1 token per chunk, {args.streams} streams, {args.streams * args.requests_per_stream} requests "
          f"x {args.output_len} tokens, {args.rounds} interleaved rounds (medians); truth: the server's write stamps")
    print(f"{'target tok/s':>12} {'client':>13} {'tokens/s':>9} {'CPU ms/1k tok':>13} {'TTFT p50 err':>12} "
          f"{'TTFT err p50':>13} "
          f"{'ITL p50 err':>11} {'lag p50 µs':>11} {'to server ms':>12}")
    verdicts: list[str] = []
    for rate in (float(x) for x in args.rates.split(",")):
        delay_s = args.streams / rate
        server = BenchServerProcess({"ttft_s": 0.05, "chunk_delay_s": delay_s, "tokens_per_chunk": 1,
                                     "speculative": False, "tag_text": True}).start()
        rows: dict[str, list[dict]] = {c: [] for c in clients}
        try:
            await run_specdash(server.url, "generate", 2, 2, 20)  # lazy imports: not measured
            n = args.streams * args.requests_per_stream
            for _ in range(args.rounds):
                for client in clients:
                    if client == "specdash":
                        r = await run_specdash(server.url, "generate", args.streams, n, args.output_len)
                    else:
                        r = run_bench_serving(args.sglang_python, server.url, args.streams, n, args.output_len)
                    rows[client].append({**summary(r), "errors": r["errors"], "stamp_lag_ms": r["stamp_lag_ms"],
                                         "send_to_server_ms": r["send_to_server_ms"],
                                         "ttft_req_err": r["per_request"].get("ttft")})
        finally:
            server.stop()
        figures = {}
        for client in clients:
            keys = ("tokens_per_s", "cpu_ms_per_1k", "ttft_p50_err", "ttft_req_err", "itl_p50_err", "stamp_lag_ms",
                    "send_to_server_ms")
            f = {k: _median(rows[client], k) for k in keys}
            figures[client] = f
            errors = sum(r["errors"] for r in rows[client])
            print(f"{rate:>12.0f} {client:>13} {f['tokens_per_s']:>9.0f} {f['cpu_ms_per_1k']:>13.1f} "
                  f"{f['ttft_p50_err'] * 100:>+11.2f}% {f['ttft_req_err'] * 100:>+12.2f}% "
                  f"{f['itl_p50_err'] * 100:>+10.2f}% "
                  f"{f['stamp_lag_ms'] * 1000:>11.0f} {f['send_to_server_ms']:>12.2f}"
                  + (f"  [{errors} errors]" if errors else ""))
        ours = figures["specdash"]
        verdicts.append(f"{rate:>6.0f} tok/s: ITL p50 within 1 %: {'yes' if abs(ours['itl_p50_err']) <= 0.01 else 'NO'}"
                        f" ({ours['itl_p50_err'] * 100:+.2f}%)")
        if "bench_serving" in figures:
            theirs = figures["bench_serving"]
            verdicts.append(
                f"{rate:>6.0f} tok/s: CPU per token <= bench_serving's: "
                f"{'yes' if ours['cpu_ms_per_1k'] <= theirs['cpu_ms_per_1k'] else 'NO'} "
                f"({ours['cpu_ms_per_1k']:.1f} vs {theirs['cpu_ms_per_1k']:.1f} ms per 1 000 tokens); "
                f"|TTFT p50 error| <= bench_serving's: "
                f"{'yes' if abs(ours['ttft_p50_err']) <= abs(theirs['ttft_p50_err']) else 'NO'} "
                f"({ours['ttft_p50_err'] * 100:+.2f}% vs {theirs['ttft_p50_err'] * 100:+.2f}%), per request: "
                f"{'yes' if abs(ours['ttft_req_err']) <= abs(theirs['ttft_req_err']) else 'NO'} "
                f"({ours['ttft_req_err'] * 100:+.2f}% vs {theirs['ttft_req_err'] * 100:+.2f}%)"
            )
    print("\n".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
