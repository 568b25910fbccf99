"""Result records of a benchmark run: per request and per run, with JSON round-trips.

Units are in the names: ``_ms`` milliseconds, ``_s`` seconds, ``_per_s`` per second. Every figure is computed by
specdash from the raw per-request data kept in :attr:`RunResult.requests`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from specdash.bench.stats import Distribution

#: Where the run's accept length came from (see :mod:`specdash.bench.accept_length`).
ACCEPT_SOURCES = ("meta_info", "server_counters", "server_info_fresh", "log", "none")

#: What a user reads for each source (the tags stay in ``--json`` and the session file).
ACCEPT_SOURCE_WORDS = {
    "meta_info": "per request",
    "server_counters": "server counters",
    "server_info_fresh": "fresh server's average",
    "log": "log, approx.",
    "imported": "imported",
    "none": "unknown",
}


def accept_source_words(source: str | None) -> str:
    """The words shown for an accept-length source tag (``"+"``-joined tags of a sweep's repeats each translated):
    ``"server_info_fresh"`` -> ``"fresh server's average"``; a tag this table does not know is shown as it is."""
    if not source:
        return ACCEPT_SOURCE_WORDS["none"]
    return " + ".join(ACCEPT_SOURCE_WORDS.get(tag, tag) for tag in source.split("+"))


def accept_source_text(source: str | None, note: str) -> str:
    """``"fresh server's average: running avg_spec_accept_length over this run …"``: the source's words
    (:func:`accept_source_words`), then ``note`` without a leading ``"fresh server: "`` that says the words again
    (older results' notes start so); the words alone when there is no note."""
    words = accept_source_words(source)
    head, sep, rest = note.partition(": ")
    if sep and head and words.lower().startswith(head.strip().lower()):
        note = rest
    return f"{words}: {note}" if note else words


@dataclasses.dataclass
class RequestResult:
    """One request, raw and derived.

    ``index``: position in the run (warm-up requests are not recorded); ``prompt``: what was sent;
    ``success``/``error``: outcome (``error`` is a one-line message); ``partial``: cut short by a cancel;
    ``start_s``: send time since the run started; ``sent_perf_s``: the same instant as a ``time.perf_counter()``
    reading (CLOCK_MONOTONIC on Linux, shared by all processes: lets a test server's own stamps be compared);
    ``ttft_ms``, ``e2e_ms``, ``tpot_ms``: see :mod:`specdash.bench.timing`; ``itl_ms``: one value per token after the
    first chunk; ``output_tokens``, ``prompt_tokens``; ``spec_verify_ct``: verify steps (/generate with speculation
    only); ``chunk_offsets_ms``: arrival of each text-carrying chunk since send; ``chunk_cumulative_tokens``: the
    server's cumulative token count at each such chunk (``None`` where absent); ``token_counts``: "server" or
    "estimated".
    """

    index: int
    prompt: str
    success: bool = False
    error: str | None = None
    partial: bool = False
    start_s: float = 0.0
    sent_perf_s: float = 0.0
    ttft_ms: float | None = None
    e2e_ms: float | None = None
    tpot_ms: float | None = None
    itl_ms: list[float] = dataclasses.field(default_factory=list)
    output_tokens: int = 0
    prompt_tokens: int | None = None
    spec_verify_ct: int | None = None
    chunk_offsets_ms: list[float] = dataclasses.field(default_factory=list)
    chunk_cumulative_tokens: list[int | None] = dataclasses.field(default_factory=list)
    token_counts: str = "server"

    @property
    def output_tokens_per_s(self) -> float | None:
        """This request's own decode rate: output tokens / E2E seconds (None without an E2E)."""
        if not self.e2e_ms:
            return None
        return self.output_tokens / (self.e2e_ms / 1000.0)

    def to_dict(self) -> dict:
        """JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RequestResult:
        """Inverse of :meth:`to_dict` (unknown keys ignored)."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclasses.dataclass
class RunResult:
    """One benchmark run.

    ``settings``: the effective benchmark settings (url, api, workload name, num_requests, concurrency,
    request_rate, output_len, temperature, seed, warmup_requests, model ...); ``workload``: the workload as a dict
    (prompts included); ``effective_config``: the server configuration (algorithm, steps, topk, draft tokens, CUDA
    graph, attention backend, tp, SGLang version, GPU name ...): the caller's dict with what /server_info reports on top
    (the caller's values that the server contradicts are kept under ``"requested"``); ``started_at``: ISO-8601 UTC;
    ``duration_s``: first request sent to last request finished; ``partial``: the run was cancelled (figures cover the
    requests that finished); ``completed``/``errors``: counts of successful / failed requests; ``output_tokens_per_s`` =
    Σ output tokens of successful requests / duration; ``requests_per_s`` = completed / duration (bench_serving's
    definitions); ``ttft_ms``, ``itl_ms``, ``tpot_ms``, ``e2e_ms``: distributions over successful requests (ITL over all
    their tokens); ``output_rate_se``: within-run standard error of output tokens/s; ``accept_length`` for THIS run with
    ``accept_length_source`` (one of :data:`ACCEPT_SOURCES`) and a one-line ``accept_length_note``; ``requests``: raw
    per-request data.
    """

    settings: dict[str, Any]
    workload: dict[str, Any]
    effective_config: dict[str, Any]
    started_at: str
    duration_s: float
    partial: bool
    completed: int
    errors: int
    total_output_tokens: int
    output_tokens_per_s: float
    requests_per_s: float
    ttft_ms: Distribution
    itl_ms: Distribution
    tpot_ms: Distribution
    e2e_ms: Distribution
    output_rate_se: float
    accept_length: float | None
    accept_length_source: str
    accept_length_note: str
    requests: list[RequestResult]

    def summary_json(self) -> dict:
        """The shape ``specdash bench --json`` prints: ``output_tokens_per_s``, ``requests_per_s``,
        ``ttft_ms``/``itl_ms``/``tpot_ms`` as ``{"p50", "p90", "p99"}``, ``accept_length``,
        ``accept_length_source``, ``errors`` (count of failed requests) and ``requests`` (raw per-request dicts)."""
        return {
            "output_tokens_per_s": self.output_tokens_per_s,
            "requests_per_s": self.requests_per_s,
            "ttft_ms": self.ttft_ms.percentiles(),
            "itl_ms": self.itl_ms.percentiles(),
            "tpot_ms": self.tpot_ms.percentiles(),
            "accept_length": self.accept_length,
            "accept_length_source": self.accept_length_source,
            "errors": self.errors,
            "requests": [r.to_dict() for r in self.requests],
        }

    def to_dict(self) -> dict:
        """Full JSON-ready dict (what the state-dir file holds)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        for key in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"):
            data[key] = data[key].to_dict()
        data["requests"] = [r.to_dict() for r in self.requests]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> RunResult:
        """Inverse of :meth:`to_dict`."""
        kwargs = dict(data)
        for key in ("ttft_ms", "itl_ms", "tpot_ms", "e2e_ms"):
            kwargs[key] = Distribution.from_dict(kwargs[key])
        kwargs["requests"] = [RequestResult.from_dict(r) for r in kwargs["requests"]]
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in kwargs.items() if k in names})
