"""SGLang's launch flags (real names and dests) as an argparse parser.

Only the flags that matter to specdash's tests are listed, with SGLang's spellings (SGLang's ``server_args.py``). Like the
real parser it is a plain ``argparse.ArgumentParser`` with ``allow_abbrev`` on, so unknown flags exit 2 with
``launch_server.py: error: unrecognized arguments: ...`` and ambiguous prefixes are rejected.
"""

from __future__ import annotations

import argparse

_ALGORITHM_CHOICES = {
    "0.4.5": ["EAGLE", "EAGLE3", "NEXTN"],
    "0.5.0": ["EAGLE", "EAGLE3", "NEXTN"],
    "0.5.3": ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"],
    "0.5.9": ["EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM"],
    "2026": None,  # free string, upper-cased
}


def build_parser(era: str, prog: str | None = None) -> argparse.ArgumentParser:
    """The parser for ``era`` (``--speculative-algorithm`` choices differ by version)."""
    p = argparse.ArgumentParser(prog=prog)
    a = p.add_argument
    a("--model-path", "--model", dest="model_path", type=str, required=True)
    a("--tokenizer-path", type=str, default=None)
    a("--tokenizer-mode", type=str, default="auto")
    a("--skip-tokenizer-init", action="store_true")
    a("--load-format", type=str, default="auto")
    a("--trust-remote-code", action="store_true")
    a("--context-length", type=int, default=None)
    a("--is-embedding", action="store_true")
    a("--revision", type=str, default=None)
    a("--host", type=str, default="127.0.0.1")
    a("--port", type=int, default=30000)
    a("--dtype", type=str, default="auto")
    a("--kv-cache-dtype", type=str, default="auto")
    a("--quantization", type=str, default=None)
    a("--served-model-name", type=str, default=None)
    a("--chat-template", type=str, default=None)
    a("--device", type=str, default=None)
    a("--mem-fraction-static", type=float, default=None)
    a("--max-running-requests", type=int, default=None)
    a("--max-total-tokens", type=int, default=None)
    a("--chunked-prefill-size", type=int, default=None)
    a("--max-prefill-tokens", type=int, default=16384)
    a("--schedule-policy", type=str, default="fcfs")
    a("--page-size", type=int, default=1)
    a("--tensor-parallel-size", "--tp-size", "--tp", dest="tp_size", type=int, default=1)
    a("--data-parallel-size", "--dp-size", "--dp", dest="dp_size", type=int, default=1)
    a("--expert-parallel-size", "--ep-size", "--ep", dest="ep_size", type=int, default=1)
    a("--pipeline-parallel-size", "--pp-size", dest="pp_size", type=int, default=1)
    a("--base-gpu-id", type=int, default=0)
    a("--nnodes", type=int, default=1)
    a("--node-rank", type=int, default=0)
    a("--dist-init-addr", type=str, default=None)
    a("--random-seed", type=int, default=None)
    a("--stream-interval", type=int, default=1)
    a("--watchdog-timeout", type=float, default=300)
    a("--log-level", type=str, default="info")
    a("--log-requests", action="store_true")
    a("--decode-log-interval", type=int, default=40)
    a("--enable-metrics", action="store_true")
    a("--api-key", type=str, default=None)
    a("--attention-backend", type=str, default=None)
    a("--prefill-attention-backend", type=str, default=None)
    a("--decode-attention-backend", type=str, default=None)
    a("--sampling-backend", type=str, default=None)
    a("--grammar-backend", type=str, default=None)
    a("--moe-runner-backend", type=str, default="auto")
    a("--cuda-graph-max-bs", type=int, default=None)
    a("--cuda-graph-bs", type=int, nargs="+", default=None)
    a("--disable-cuda-graph", action="store_true")
    a("--disable-cuda-graph-padding", action="store_true")
    a("--disable-radix-cache", action="store_true")
    a("--disable-overlap-schedule", action="store_true")
    a("--enable-mixed-chunk", action="store_true")
    a("--enable-dp-attention", action="store_true")
    a("--enable-torch-compile", action="store_true")
    a("--enable-deterministic-inference", action="store_true")
    a("--skip-server-warmup", action="store_true")
    a("--enable-lora", action="store_true")
    a("--lora-paths", type=str, nargs="*", default=None)
    choices = _ALGORITHM_CHOICES[era]
    a("--speculative-algorithm", type=str, choices=choices, default=None)
    if era in ("0.4.5", "0.5.0"):
        a("--speculative-draft-model-path", type=str, default=None)
    else:
        a("--speculative-draft-model-path", "--speculative-draft-model", dest="speculative_draft_model_path",
          type=str, default=None)
        a("--speculative-draft-model-revision", type=str, default=None)
        a("--speculative-draft-load-format", type=str, default=None)
        a("--speculative-draft-attention-backend", type=str, default=None)
        a("--speculative-draft-model-quantization", type=str, default=None)
        a("--speculative-attention-mode", type=str, choices=["prefill", "decode"], default="prefill")
        a("--speculative-moe-runner-backend", type=str, default=None)
        a("--speculative-ngram-min-bfs-breadth", type=int, default=1)
        a("--speculative-ngram-max-bfs-breadth", type=int, default=10)
        a("--speculative-ngram-match-type", type=str, choices=["BFS", "PROB"], default="BFS")
        a("--speculative-ngram-capacity", type=int, default=10 * 1000 * 1000)
        a("--enable-multi-layer-eagle", action="store_true")
    a("--speculative-num-steps", type=int, default=None)
    a("--speculative-eagle-topk", type=int, default=None)
    a("--speculative-num-draft-tokens", type=int, default=None)
    a("--speculative-accept-threshold-single", type=float, default=1.0)
    a("--speculative-accept-threshold-acc", type=float, default=1.0)
    a("--speculative-token-map", type=str, default=None)
    if era == "2026":
        a("--speculative-draft-kv-cache-dtype", type=str, default=None)
        a("--speculative-use-rejection-sampling", action="store_true")
        a("--cuda-graph-max-bs-decode", type=int, default=None)
    return p


def parse_args(argv: list[str], era: str, prog: str | None = None) -> argparse.Namespace:
    """Parse like SGLang: argparse errors exit 2 with argparse's own text; 2026 upper-cases the algorithm."""
    args = build_parser(era, prog).parse_args(argv)
    if era == "2026" and args.speculative_algorithm:
        args.speculative_algorithm = args.speculative_algorithm.upper()
    return args
