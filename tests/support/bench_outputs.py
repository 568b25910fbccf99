"""Benchmark tool outputs written with the tools' own print statements (format strings copied from their source).

* :func:`sglang_bench_serving` - SGLang ``python/sglang/bench_serving.py`` ``benchmark()``: ``era="2024"`` (no
  concurrency lines, ``Total throughput (tok/s):``), ``era="2025"`` (``Max request concurrency``, ``Total token
  throughput``, ``Concurrency``, ``Accept length`` when known, ITL P95/Max).
* :func:`vllm_bench_serve` - vLLM ``vllm/benchmarks/serve.py`` ``benchmark()`` (``Failed requests``, peak lines,
  TTFT/TPOT/ITL/E2EL sections with the chosen percentiles, the Speculative Decoding section) and the older
  ``benchmarks/benchmark_serving.py`` (``Total Token throughput``, no failed line).
* :func:`bench_speculative_line` - SGLang ``scripts/playground/bench_speculative.py`` ``Finish`` line.
"""

from __future__ import annotations


def _line(label: str, value, fmt: str = "{:<10}") -> str:
    return ("{:<40} " + fmt).format(label, value)


def _rule(title: str, char: str = "-") -> str:
    return "{s:{c}^{n}}".format(s=title, n=50, c=char)


def sglang_bench_serving(era: str = "2025", *, completed: int = 200, duration: float = 90.0,
                         total_input: int = 41263, total_output: int = 51200, retokenized: int | None = None,
                         max_concurrency: int | None = 8, accept_length: float | None = 3.1,
                         ttft=(95.33, 88.2, 210.55), itl=(27.2, 26.9, 31.0, 40.12, 98.76), e2e=(3578.12, 3561.4),
                         backend: str = "sglang") -> str:
    retok = total_output if retokenized is None else retokenized
    out = ["\n" + _rule(" Serving Benchmark Result ", "=")]
    out.append(_line("Backend:", backend))
    out.append(_line("Traffic request rate:", float("inf")))
    if era != "2024":
        out.append(_line("Max request concurrency:", max_concurrency if max_concurrency else "not set"))
    out.append(_line("Successful requests:", completed))
    out.append(_line("Benchmark duration (s):", duration, "{:<10.2f}"))
    out.append(_line("Total input tokens:", total_input))
    out.append(_line("Total generated tokens:", total_output))
    out.append(_line("Total generated tokens (retokenized):", retok))
    out.append(_line("Request throughput (req/s):", completed / duration, "{:<10.2f}"))
    out.append(_line("Input token throughput (tok/s):", total_input / duration, "{:<10.2f}"))
    out.append(_line("Output token throughput (tok/s):", total_output / duration, "{:<10.2f}"))
    if era == "2024":
        out.append(_line("Total throughput (tok/s):", (total_input + total_output) / duration, "{:<10.2f}"))
    else:
        out.append(_line("Total token throughput (tok/s):", (total_input + total_output) / duration, "{:<10.2f}"))
        out.append(_line("Concurrency:", 7.95, "{:<10.2f}"))
        if accept_length:
            out.append(_line("Accept length:", accept_length, "{:<10.2f}"))
    out.append(_rule("End-to-End Latency"))
    out.append(_line("Mean E2E Latency (ms):", e2e[0], "{:<10.2f}"))
    out.append(_line("Median E2E Latency (ms):", e2e[1], "{:<10.2f}"))
    out.append(_rule("Time to First Token"))
    out.append(_line("Mean TTFT (ms):", ttft[0], "{:<10.2f}"))
    out.append(_line("Median TTFT (ms):", ttft[1], "{:<10.2f}"))
    out.append(_line("P99 TTFT (ms):", ttft[2], "{:<10.2f}"))
    out.append(_rule("Inter-Token Latency"))
    out.append(_line("Mean ITL (ms):", itl[0], "{:<10.2f}"))
    out.append(_line("Median ITL (ms):", itl[1], "{:<10.2f}"))
    if era != "2024":
        out.append(_line("P95 ITL (ms):", itl[2], "{:<10.2f}"))
    out.append(_line("P99 ITL (ms):", itl[3], "{:<10.2f}"))
    if era != "2024":
        out.append(_line("Max ITL (ms):", itl[4], "{:<10.2f}"))
    out.append("=" * 50)
    return "\n".join(out) + "\n"


def vllm_bench_serve(era: str = "serve", *, completed: int = 100, failed: int = 0, duration: float = 40.0,
                     total_input: int = 25600, total_output: int = 12800, max_concurrency: int | None = 4,
                     spec: tuple[int, int, int] | None = (4000, 16000, 8800), percentiles=(99,)) -> str:
    """``spec`` = (drafts, draft tokens, accepted tokens) or None for a run without speculative decoding."""
    out = [_rule(" Serving Benchmark Result ", "=")]
    out.append(_line("Successful requests:", completed))
    if era == "serve":
        out.append(_line("Failed requests:", failed))
        if max_concurrency is not None:
            out.append(_line("Maximum request concurrency:", max_concurrency))
    out.append(_line("Benchmark duration (s):", duration, "{:<10.2f}"))
    out.append(_line("Total input tokens:", total_input))
    out.append(_line("Total generated tokens:", total_output))
    out.append(_line("Request throughput (req/s):", completed / duration, "{:<10.2f}"))
    out.append(_line("Output token throughput (tok/s):", total_output / duration, "{:<10.2f}"))
    if era == "serve":
        out.append(_line("Peak output token throughput (tok/s):", 410.0, "{:<10.2f}"))
        out.append(_line("Peak concurrent requests:", 4.0, "{:<10.2f}"))
        out.append(_line("Total token throughput (tok/s):", (total_input + total_output) / duration, "{:<10.2f}"))
    else:
        out.append(_line("Total Token throughput (tok/s):", (total_input + total_output) / duration, "{:<10.2f}"))
    sections = (("TTFT", "Time to First Token", 40.1), ("TPOT", "Time per Output Token (excl. 1st token)", 12.2),
                ("ITL", "Inter-token Latency", 30.1))
    for name, header, base in sections:
        out.append(_rule(header))
        out.append(_line(f"Mean {name} (ms):", base, "{:<10.2f}"))
        out.append(_line(f"Median {name} (ms):", base * 0.95, "{:<10.2f}"))
        for p in percentiles:
            out.append(_line(f"P{p} {name} (ms):", base * (1 + p / 50), "{:<10.2f}"))
    if spec is not None and era == "serve":
        drafts, draft_tokens, accepted = spec
        out.append(_rule("Speculative Decoding"))
        out.append(_line("Acceptance rate (%):", accepted / draft_tokens * 100, "{:<10.2f}"))
        out.append(_line("Acceptance length:", 1 + accepted / drafts, "{:<10.2f}"))
        out.append(_line("Drafts:", drafts))
        out.append(_line("Draft tokens:", draft_tokens))
        out.append(_line("Accepted tokens:", accepted))
        out.append("Per-position acceptance (%):")
        for i, rate in enumerate((0.8, 0.6, 0.45, 0.35)):
            out.append(_line(f"  Position {i}:", rate * 100, "{:<10.2f}"))
    out.append("=" * 50)
    return "\n".join(out) + "\n"


def bench_speculative_line(i: int, batch_size: int, steps: int, topk: int, num_draft_tokens: int, speed: float,
                           step_time: float) -> str:
    """``step_time`` in seconds, as the script holds it."""
    return (f"Finish {i=}: {batch_size=}, {steps=}, {topk=}, {num_draft_tokens=}, {speed=:.2f} token/s, "
            f"step_time={step_time * 1000:.2f} ms")
