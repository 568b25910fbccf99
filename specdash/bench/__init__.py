"""Benchmarks (core, no Textual): workloads, the streaming runner, statistics, the acceptance model, the sweep.

* :mod:`specdash.bench.workload` - shipped presets and user files (ShareGPT JSON/JSONL, plain prompts).
* :mod:`specdash.bench.protocol` - request bodies and SSE parsing for /v1/chat/completions, /v1/completions,
  /generate.
* :mod:`specdash.bench.timing` - TTFT / per-token ITL / TPOT / E2E from chunk arrivals (bench_serving's math).
* :mod:`specdash.bench.runner` - :class:`~specdash.bench.runner.BenchRunner` (asyncio).
* :mod:`specdash.bench.stream` - the streamed POST on an asyncio protocol, chunk arrivals stamped at the socket.
* :mod:`specdash.bench.accept_length` - the accept length of one run and its source.
* :mod:`specdash.bench.stats` - percentiles, repeat spread, "unstable".
* :mod:`specdash.bench.acceptance` - chain acceptance model (Leviathan et al. 2023) and the low-acceptance flag.
* :mod:`specdash.bench.sweep` - the depth sweep with checkpoint/resume and the recommendation.
* :mod:`specdash.bench.store` - JSON results under the state dir.
"""
