"""Median time of ``validate_command`` for typical launch commands (target: < 1 ms, so typing never lags).

Usage: ``python benchmarks/bench_validate.py [--repeat N]``. Prints one line per command and the overall median
in milliseconds. Flag tables are loaded once before timing (the builder keeps them cached too).
"""

from __future__ import annotations

import argparse
import statistics
import time

from specdash.sglang.validate import validate_command

COMMANDS = {
    "typical EAGLE3 (12 flags)": (
        "python3 -m sglang.launch_server --model-path /models/Qwen3-8B --tp-size 2 --port 30000 --host 0.0.0.0 "
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path /models/Qwen3-8B_eagle3 "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 "
        "--mem-fraction-static 0.8 --cuda-graph-max-bs-decode 32 --trust-remote-code"),
    "multi-line with env and errors": (
        "export SGLANG_ENABLE_SPEC_V2=1\nCUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server \\\n"
        "  --model /models/Llama-3.1-8B-Instruct --speculative-algo EAGLE --speculative-draft /d \\\n"
        "  --speculative-eagle-topk 4 --num-speculative-tokens 5 --mem-frac 0.7 --tp 2 --port=30000\n"),
    "vLLM command to translate": (
        "vllm serve /models/Qwen3-8B --tensor-parallel-size 1 --gpu-memory-utilization 0.9 "
        "--speculative-config '{\"method\": \"eagle3\", \"model\": \"/d\", \"num_speculative_tokens\": 5}'"),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=2000)
    args = parser.parse_args()
    for version in ("0.4.3", "0.5.9", None):
        validate_command("--port 1", version)  # load the flag tables once
    medians = []
    for name, text in COMMANDS.items():
        for version in ("0.5.9", None):
            samples, cpu = [], []
            for _ in range(args.repeat):
                t0, c0 = time.perf_counter(), time.thread_time()
                validate_command(text, version)
                samples.append(time.perf_counter() - t0)
                cpu.append(time.thread_time() - c0)
            median_ms = statistics.median(samples) * 1000
            cpu_ms = statistics.median(cpu) * 1000
            p95_ms = sorted(samples)[int(len(samples) * 0.95)] * 1000
            medians.append(median_ms)
            print(f"{name:<32} sglang {version or 'current':<8} median {median_ms:.3f} ms wall, {cpu_ms:.3f} ms CPU;"
                  f"  p95 {p95_ms:.3f} ms wall")
    print(f"overall median {statistics.median(medians):.3f} ms wall (target < 1 ms for a typical command; wall time "
          "includes waiting for the CPU on a busy machine)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
