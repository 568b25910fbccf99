"""Accept length for ONE benchmark run, and where it came from.

SGLang's ``/server_info`` ``avg_spec_accept_length`` is a running average since server start (SGLang ``scheduler.py``
``get_internal_state``), so reading it after a run (what ``bench_serving`` does, §9) mixes in all earlier traffic.
specdash uses, in order:

1. ``"meta_info"`` - /generate requests: Σ completion_tokens / Σ spec_verify_ct over the run's successful requests
   (the definition of SGLang's ``benchmark/mtbench/bench_sglang_eagle.py``, §9 source MT). Exact for the run.
2. ``"server_counters"`` - the difference of cumulative Prometheus counters before/after the run:
   Δ ``sglang:generation_tokens_total`` / Δ ``sglang:spec_verify_calls_total`` (``/metrics``, needs
   ``--enable-metrics``; the verify counter exists in 2026 builds). Exact if nobody else used the server.
   ``"server_info_fresh"`` - ``avg_spec_accept_length`` absent before the run (no verify step yet: fresh or flushed
   server) and present after: then the whole average belongs to this run.
3. ``"log"`` - the mean of "accept len" values from Decode lines the log parser saw during the run (supplied by the
   caller); these are windowed averages, an approximation.
4. ``"none"`` - none of the above; the note says why.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from specdash.bench.results import RequestResult

#: /server_info fields copied into a result's effective configuration (SGLang ServerArgs names).
CONFIG_FIELDS = (
    "model_path",
    "served_model_name",
    "speculative_algorithm",
    "speculative_draft_model_path",
    "speculative_num_steps",
    "speculative_eagle_topk",
    "speculative_num_draft_tokens",
    "disable_cuda_graph",
    "cuda_graph_max_bs",
    "attention_backend",
    "page_size",
    "tp_size",
    "dp_size",
    "max_running_requests",
    "version",
)


@dataclasses.dataclass(frozen=True)
class ServerCounters:
    """A snapshot of the server's cumulative speculative counters.

    ``avg_spec_accept_length``: /server_info (or /get_server_info) internal_states[0] value, None when absent;
    ``generation_tokens_total`` and ``spec_verify_calls_total``: Prometheus counters summed over label sets,
    None when /metrics is off or lacks them; ``server_info``: the raw /server_info JSON (or None).
    """

    avg_spec_accept_length: float | None = None
    generation_tokens_total: float | None = None
    spec_verify_calls_total: float | None = None
    server_info: dict | None = None


def avg_accept_length_of(server_info: dict | None) -> float | None:
    """``avg_spec_accept_length`` from a /server_info payload: ``internal_states[0]``, PD ``decode[0]``, or a
    top-level key (older builds), in that order; None when absent (SGLang omits it before the first verify)."""
    if not isinstance(server_info, dict):
        return None
    if isinstance(server_info.get("decode"), list) and server_info["decode"]:
        return avg_accept_length_of(server_info["decode"][0])
    states = server_info.get("internal_states")
    if isinstance(states, list) and states and isinstance(states[0], dict):
        value = states[0].get("avg_spec_accept_length")
        if isinstance(value, (int, float)):
            return float(value)
    value = server_info.get("avg_spec_accept_length")
    return float(value) if isinstance(value, (int, float)) else None


def config_from_server_info(server_info: dict | None) -> dict[str, Any]:
    """The :data:`CONFIG_FIELDS` present in a /server_info payload (PD: from ``decode[0]``)."""
    if not isinstance(server_info, dict):
        return {}
    if isinstance(server_info.get("decode"), list) and server_info["decode"]:
        return config_from_server_info(server_info["decode"][0])
    return {k: server_info[k] for k in CONFIG_FIELDS if k in server_info}


_METRIC_LINE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{[^}]*\})?\s+(?P<value>\S+)")


def parse_prometheus_counters(text: str) -> tuple[float | None, float | None]:
    """Return (``sglang:generation_tokens_total``, ``sglang:spec_verify_calls_total``) summed over label sets
    from Prometheus text exposition; None for a counter that is absent."""
    sums: dict[str, float] = {}
    wanted = ("sglang:generation_tokens_total", "sglang:spec_verify_calls_total")
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        match = _METRIC_LINE.match(line)
        if not match or match["name"] not in wanted:
            continue
        try:
            value = float(match["value"])
        except ValueError:
            continue
        sums[match["name"]] = sums.get(match["name"], 0.0) + value
    return sums.get(wanted[0]), sums.get(wanted[1])


@dataclasses.dataclass(frozen=True)
class AcceptLength:
    """Accept length of one run: ``value`` (None when unknown), ``source`` (see module docstring), ``note``."""

    value: float | None
    source: str
    note: str


def from_meta_info(requests: Sequence[RequestResult]) -> AcceptLength | None:
    """Σ completion tokens / Σ spec_verify_ct over successful requests with a verify count; None without any."""
    done = [r for r in requests if r.success and r.spec_verify_ct]
    if not done:
        return None
    tokens = sum(r.output_tokens for r in done)
    verifies = sum(int(r.spec_verify_ct or 0) for r in done)
    return AcceptLength(
        tokens / verifies,
        "meta_info",
        f"{tokens} completion tokens / {verifies} verify steps over {len(done)} requests (/generate meta_info)",
    )


def from_counters(
    before: ServerCounters | None,
    after: ServerCounters | None,
    pre_warmup: ServerCounters | None = None,
    warmup_requests: int = 0,
) -> AcceptLength | None:
    """Accept length of the traffic between two snapshots, or None when the counters cannot isolate it.

    ``pre_warmup``: a snapshot taken before the warm-up requests; when the server had no verify step then (fresh
    after a restart, as in a sweep) the running average after the run covers the warm-up plus this run, which
    use the same workload - reported as ``server_info_fresh`` with a note saying so.
    """
    if before is None or after is None:
        return None
    if None not in (
        before.generation_tokens_total,
        before.spec_verify_calls_total,
        after.generation_tokens_total,
        after.spec_verify_calls_total,
    ):
        verifies = after.spec_verify_calls_total - before.spec_verify_calls_total  # type: ignore[operator]
        tokens = after.generation_tokens_total - before.generation_tokens_total  # type: ignore[operator]
        if verifies > 0:
            return AcceptLength(
                tokens / verifies,
                "server_counters",
                f"Δ generation tokens {tokens:.0f} / Δ verify calls {verifies:.0f} (/metrics, during this run)",
            )
    if before.avg_spec_accept_length is None and after.avg_spec_accept_length is not None:
        return AcceptLength(
            after.avg_spec_accept_length,
            "server_info_fresh",
            "server had no verify step before this run, so its running avg_spec_accept_length is this run's",
        )
    if (
        pre_warmup is not None
        and pre_warmup.server_info is not None
        and pre_warmup.avg_spec_accept_length is None
        and after.avg_spec_accept_length is not None
    ):
        return AcceptLength(
            after.avg_spec_accept_length,
            "server_info_fresh",
            f"running avg_spec_accept_length over this run plus {warmup_requests} warm-up request(s) of the same "
            "workload (the server had served no speculative request before them)",
        )
    return None


def from_log(samples: Iterable[float] | None) -> AcceptLength | None:
    """Mean of the Decode-line "accept len" samples seen during the run; None without samples."""
    values = [float(v) for v in (samples or ()) if v is not None and math.isfinite(float(v))]
    if not values:
        return None
    return AcceptLength(
        math.fsum(values) / len(values),
        "log",
        f"mean of {len(values)} Decode-line accept len samples during the run (windowed averages)",
    )


def choose(
    requests: Sequence[RequestResult],
    before: ServerCounters | None,
    after: ServerCounters | None,
    log_samples: Iterable[float] | None,
    pre_warmup: ServerCounters | None = None,
    warmup_requests: int = 0,
) -> AcceptLength:
    """Pick the best available source in the order of the module docstring."""
    counters = from_counters(before, after, pre_warmup, warmup_requests)
    for found in (from_meta_info(requests), counters, from_log(log_samples)):
        if found is not None:
            return found
    if after is not None and after.avg_spec_accept_length is not None:
        note = (
            f"server's avg_spec_accept_length ({after.avg_spec_accept_length:.2f}) is cumulative since start and "
            "includes earlier traffic; use /generate, --enable-metrics, a fresh server, or the log"
        )
    elif after is not None and after.server_info is not None:
        note = "server reports no speculative verify steps (speculation off?)"
    else:
        note = "no meta_info, server counters or log samples available"
    return AcceptLength(None, "none", note)
