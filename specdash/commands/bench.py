"""``specdash bench --url URL [--workload NAME|FILE] [-n N] [-c C] [--json]``: one benchmark without the UI.

Actions on results: ``specdash bench import FILE|-`` reads pasted benchmark output (SGLang bench_serving /
bench_speculative, vLLM bench serve, tables, one-line reports) into stored records; ``specdash bench list`` lists
and ranks stored runs and imported records; ``specdash bench compare A B`` compares two results or two launch
commands side by side. Each takes ``--json``.
"""

from __future__ import annotations

import argparse
import sys

NAME = "bench"
HELP = "benchmark a running server: output tokens/s, TTFT, ITL, TPOT and this run's accept length"
DESCRIPTION = (
    "Stream a workload to a running server (OpenAI-compatible /v1/chat/completions or /v1/completions, or SGLang's "
    "/generate) and print output tokens/s, requests/s, TTFT / ITL / TPOT percentiles (ITL per token, so "
    "multi-token speculative chunks count right) and the accept length of this run with its source. The result, "
    "with raw per-request data, is stored as JSON under the state dir (see 'specdash locate'). Without --url, an "
    "ACTION works on results: 'import FILE|-' reads pasted benchmark output, 'list' ranks stored results, "
    "'compare A B' compares two results or two launch commands."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", metavar="URL", help="server base URL, e.g. http://127.0.0.1:30000 (required to run a "
                                                     "benchmark)")
    parser.add_argument(
        "--workload", default="short-chat", metavar="NAME|FILE",
        help="preset (short-chat, long-generation, batch1-latency) or a file: ShareGPT JSON/JSONL or one prompt "
             "per line (default: short-chat)",
    )
    parser.add_argument("-n", "--num-requests", type=int, metavar="N", help="number of requests (default: workload's)")
    parser.add_argument("-c", "--concurrency", type=int, metavar="C",
                        help="max requests in flight, 0 = unlimited (default: workload's)")
    parser.add_argument("--rate", type=float, metavar="REQ_PER_S", help="Poisson request rate (default: all at once)")
    parser.add_argument("--api", choices=("chat", "completions", "generate"),
                        help="endpoint (default: workload's; 'generate' gives an exact per-run accept length)")
    parser.add_argument("--output-len", type=int, metavar="TOKENS", help="output tokens per request")
    parser.add_argument("--temperature", type=float, metavar="T", help="sampling temperature (default: workload's)")
    parser.add_argument("--seed", type=int, default=1, metavar="SEED", help="prompt order and arrivals (default 1)")
    parser.add_argument("--warmup", type=int, metavar="N", help="warm-up requests, not measured (default: workload's)")
    parser.add_argument("--model", metavar="NAME", help="OpenAI model name (default: first of /v1/models)")
    parser.add_argument("--no-save", action="store_true", help="do not store the result under the state dir")
    parser.add_argument("--json", action="store_true",
                        help='print {"output_tokens_per_s", "requests_per_s", "ttft_ms", "itl_ms", "tpot_ms", '
                             '"accept_length", "accept_length_source", "errors", "requests"}')
    from specdash.commands import bench_results

    bench_results.add_actions(parser)


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def format_summary(result) -> str:
    """Human-readable summary of a :class:`specdash.bench.results.RunResult` (several lines)."""
    from specdash.bench.acceptance import low_acceptance_warning
    from specdash.bench.results import accept_source_text

    s = result.settings
    lines = [
        f"server          {s['url']}  ({s['api']}, model {s['model']})",
        f"workload        {s['workload']}: {s['num_requests']} requests, concurrency {s['concurrency'] or 'unlimited'}"
        f", rate {s['request_rate'] or 'all at once'}, output {s['output_len']} tokens, seed {s['seed']}",
        f"requests        {result.completed} ok, {result.errors} failed"
        + ("  (PARTIAL: cancelled)" if result.partial else ""),
        f"duration        {result.duration_s:.2f} s",
        f"output tokens/s {result.output_tokens_per_s:.1f}",
        f"requests/s      {result.requests_per_s:.2f}",
    ]
    for label, dist in (("TTFT ms", result.ttft_ms), ("ITL ms", result.itl_ms), ("TPOT ms", result.tpot_ms),
                        ("E2E ms", result.e2e_ms)):
        lines.append(f"{label:<16}p50 {_fmt(dist.p50, 2)}  p90 {_fmt(dist.p90, 2)}  p99 {_fmt(dist.p99, 2)}")
    if result.accept_length is not None:
        lines.append(f"accept length   {result.accept_length:.2f}  "
                     f"[{accept_source_text(result.accept_length_source, result.accept_length_note)}]")
    else:
        lines.append(f"accept length   -  [{result.accept_length_note}]")
    warning = low_acceptance_warning(result.accept_length, result.effective_config.get("speculative_num_draft_tokens"))
    if warning:
        lines.append(f"warning         {warning}")
    failed = [r for r in result.requests if r.error and not r.partial]
    if failed:
        lines.append(f"first error     {failed[0].error}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    import asyncio
    import dataclasses
    import signal

    from specdash.bench.runner import BenchError, BenchRunner, BenchSettings
    from specdash.bench.workload import WorkloadError, resolve_workload
    from specdash.cli import UsageError
    from specdash.text.display import clean

    if getattr(args, "bench_action", None):
        from specdash.commands import bench_results

        return bench_results.run_action(args)
    if not args.url:
        raise UsageError("--url is required to run a benchmark (or give an action: import, list, compare)")
    if not args.url.startswith(("http://", "https://")):
        raise UsageError(f"--url must start with http:// or https://, got {args.url!r}")
    try:
        workload = resolve_workload(args.workload)
    except WorkloadError as exc:
        raise UsageError(str(exc)) from None
    try:
        settings = BenchSettings.from_workload(
            args.url, workload, api=args.api, num_requests=args.num_requests, concurrency=args.concurrency or None,
            request_rate=args.rate, output_len=args.output_len, temperature=args.temperature, seed=args.seed,
            warmup_requests=args.warmup, model=args.model,
        )
        if args.concurrency == 0:
            settings = dataclasses.replace(settings, concurrency=None)
    except ValueError as exc:
        raise UsageError(str(exc)) from None

    runner = BenchRunner(settings)

    async def main():
        loop = asyncio.get_running_loop()
        try:
            loop.add_signal_handler(signal.SIGINT, runner.cancel)  # Ctrl-C: keep what finished, mark partial
        except (NotImplementedError, RuntimeError):  # pragma: no cover - non-Unix
            pass
        return await runner.run()

    try:
        result = asyncio.run(main())
    except BenchError as exc:
        sys.stderr.write(f"specdash bench: {clean(exc, max_chars=1000)}\n")
        return 1
    saved = None
    if not args.no_save:
        from specdash.bench.store import save_run

        try:
            saved = save_run(result)
        except OSError as exc:
            sys.stderr.write(f"specdash bench: result not saved: {exc}\n")
    if args.json:
        import json

        print(json.dumps(result.summary_json(), indent=1))
    else:
        print(clean(format_summary(result), newlines=True))
    if saved:
        sys.stderr.write(f"saved {saved}\n")
    if result.partial:
        return 130
    return 1 if result.completed == 0 else 0
