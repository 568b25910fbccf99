"""The scenario: everything the double does, scripted (times, log era, warnings, figures, crash).

Read from the YAML (or JSON) file named by ``SGLANG_DOUBLE_SCENARIO``; missing keys take the values of
:data:`DEFAULTS` (deep merge), so a scenario file only states what it changes. See tests/double/README.md.
"""

from __future__ import annotations

import copy
import json
import os

ERAS = ("0.4.5", "0.5.0", "0.5.3", "0.5.9", "2026")

#: Phases in start-up order. ``draft_weights`` and ``cuda_graph_draft`` only run with a speculative algorithm
#: other than NGRAM; ``serving`` is not a start-up phase but may be named by ``crash.phase``.
PHASES = (
    "args",
    "weights",
    "draft_weights",
    "kv_cache",
    "cuda_graph_target",
    "cuda_graph_draft",
    "http",
    "warmup",
    "serving",
)

DEFAULTS: dict = {
    # log format era: one of ERAS (0.5.0 = the v0.5.0rc0 shapes of the fixtures, group 2)
    "era": "0.5.0",
    # version reported by /get_server_info
    "version": "0.5.0rc0",
    "architecture": "LlamaForCausalLM",
    "draft_architecture": "LlamaForCausalLMEagle3",
    "dtype": "torch.bfloat16",
    # seconds spent in each start-up phase
    "phases_s": {
        "args": 0.3,
        "weights": 1.0,
        "draft_weights": 0.3,
        "kv_cache": 0.3,
        "cuda_graph_target": 1.0,
        "cuda_graph_draft": 0.5,
        "http": 0.2,
        "warmup": 0.3,
    },
    # batch sizes "captured" (one progress update per size, largest first as SGLang does)
    "cuda_graph_bs": [1, 2, 4, 8, 12, 16, 24, 32, 40, 48],
    # lines printed before logging is configured (bare before the 2026 era, timestamped in 2026), e.g.
    # "Overlap scheduler is disabled because of using eagle speculative decoding."; the draft-tokens "adjusted"
    # warning is never scripted: the double prints it when SGLang's topk-1 rule rewrites the launch command
    "warnings": [],
    # post-rewrite values shown in the server_args= line and /get_server_info (scripted; only the topk == 1 draft
    # tokens rewrite is computed, see main.Launcher._post_init_rewrites)
    "server_args": {},
    # GPU memory per scheduler rank (MiB, registered in the fake nvidia-smi state as each phase ends)
    "gpu": {
        "total_gb": 79.19,
        "weights_mib": 15462,
        "draft_weights_mib": 942,
        "kv_cache_mib": 44257,
        "cuda_graph_target_mib": 399,
        "cuda_graph_draft_mib": 250,
    },
    "capacity": {
        "max_total_num_tokens": 354112,
        "chunked_prefill_size": 8192,
        "max_prefill_tokens": 16384,
        "max_running_requests": 48,
        "context_len": 131072,
    },
    # figures for decode lines and responses; lists are cycled through, one value per decode log line
    "decode": {
        "accept_len": [2.86],
        "accept_rate": [0.54],
        "gen_throughput": [1122.58],
        "tokens_per_s": 400.0,  # per request, how fast tokens are produced
        "ttft_s": 0.02,  # prefill time before the first token
        "log_interval_s": 0.2,  # a decode line this often while requests run
        "default_max_tokens": 16,
    },
    # /health status code before "fired up" (200 after)
    "health_before_ready": 503,
    # endpoint availability; server_info None = by era (only the 2026 era has /server_info)
    "endpoints": {"server_info": None, "get_server_info": True},
    # crash: None, or {"phase": <PHASES>, "after_s": s, "text": "...", "exit_code": 1, "orphan_children": bool}
    # text lines may contain {ts} (timestamp) and {prefix} (rank prefix, e.g. " TP0"); default text by phase
    "crash": None,
    # SIGTERM/SIGINT handling: ignore_sigterm (main and workers), delay_s before exiting
    "shutdown": {"ignore_sigterm": False, "delay_s": 0.0},
}


def _merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in (override or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_scenario(path: str | None = None) -> dict:
    """Return the scenario dict: DEFAULTS merged with the file at ``path`` (default: env
    ``SGLANG_DOUBLE_SCENARIO``; none = the built-in defaults); ``SGLANG_DOUBLE_VERSION``, when set, is the
    ``version`` whatever the file says. Raises SystemExit(2) for a bad file."""
    path = path or os.environ.get("SGLANG_DOUBLE_SCENARIO") or None
    data: dict = {}
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise SystemExit(f"sglang double: cannot read scenario {path}: {exc}") from exc
        try:
            import yaml  # type: ignore

            data = yaml.safe_load(text) or {}
        except ImportError:
            data = json.loads(text)
    scenario = _merge(DEFAULTS, data)
    if os.environ.get("SGLANG_DOUBLE_VERSION"):  # one release for every scenario of a run (the demo script's)
        scenario["version"] = os.environ["SGLANG_DOUBLE_VERSION"]
    if scenario["era"] not in ERAS:
        raise SystemExit(f"sglang double: unknown era {scenario['era']!r} (one of {', '.join(ERAS)})")
    crash = scenario.get("crash")
    if crash and crash.get("phase") not in PHASES:
        raise SystemExit(f"sglang double: unknown crash phase {crash.get('phase')!r}")
    for key in ("accept_len", "accept_rate", "gen_throughput"):
        value = scenario["decode"].get(key)
        if not isinstance(value, list):
            scenario["decode"][key] = [value]
    return scenario
