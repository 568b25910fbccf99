"""Typed figures taken from SGLang's periodic scheduler lines (``Decode batch`` / ``Prefill batch``).

Shapes per era (SGLang ``scheduler.py`` ~0.4.5 and ``scheduler_metrics_mixin.py`` 0.5.1, late 2025 and 0.5.9; real
EAGLE-3 lines in https://github.com/sgl-project/sglang/issues/11948):

* ``Decode batch. #running-req: N, #token: T, token usage: U, accept len: A, gen throughput (token/s): G,
  #queue-req: Q, `` (~0.4.5); ``cuda graph: True`` added ~0.4.7; ``accept rate: R`` added ~0.5.3;
  ``Decode batch,`` (comma) and an optional `` [<iter>]`` late 2025; no trailing ``, `` ~0.5.9.
* hybrid models print ``#full token`` / ``full token usage`` (SWA, Mamba) instead of ``#token`` / ``token usage``.
* ``Prefill batch. #new-seq: N, #new-token: T, #cached-token: C, token usage: U, #running-req: R, #queue-req: Q, ``;
  ~0.5.9 adds ``input throughput (token/s): X`` and ``cuda graph: True|False``.

vLLM's ``SpecDecoding metrics: Mean acceptance length: …, Accepted: a tokens, Drafted: d tokens, Per-position
acceptance rate: …, Avg Draft acceptance rate: x%`` lines map onto :class:`DecodeRecord` as well (engine ``vllm``).
"""

from __future__ import annotations

import dataclasses
import re


@dataclasses.dataclass(slots=True)
class DecodeRecord:
    """One ``Decode batch`` sample (figures over the last ``--decode-log-interval`` decode steps, default 40).

    ``token_usage`` is a fraction 0..1 of the KV pool; ``accept_len`` counts accepted drafts + 1 bonus token per
    verify forward (range [1, num_steps + 1]); ``accept_rate`` is the server's own ratio whose definition changed
    between versions (never compare it raw across versions). ``cuda_graph`` is None when the line has no such field.
    For vLLM lines ``accepted_tokens`` / ``drafted_tokens`` / ``per_position_rate`` are filled.
    """

    running_reqs: int | None = None
    queued_reqs: int | None = None
    num_tokens: int | None = None
    token_usage: float | None = None
    accept_len: float | None = None
    accept_rate: float | None = None
    cuda_graph: bool | None = None
    gen_throughput_tok_s: float | None = None
    iteration: int | None = None
    retracted_reqs: int | None = None
    accepted_tokens: int | None = None
    drafted_tokens: int | None = None
    per_position_rate: tuple[float, ...] = ()
    engine: str = "sglang"


@dataclasses.dataclass(slots=True)
class PrefillRecord:
    """One ``Prefill batch`` sample: new sequences/tokens admitted in this forward, KV usage (fraction 0..1)."""

    new_seqs: int | None = None
    new_tokens: int | None = None
    cached_tokens: int | None = None
    token_usage: float | None = None
    running_reqs: int | None = None
    queued_reqs: int | None = None
    input_throughput_tok_s: float | None = None
    cuda_graph: bool | None = None


# "key: value" pairs; keys are lower-case words, '#', spaces, dashes and "(token/s)".
_PAIR = re.compile(r"(#?[a-z][a-z _\-]*(?: \(token/s\))?): (-?\d+(?:\.\d+)?|True|False)")

_DECODE_KEYS: dict[str, tuple[str, type]] = {
    "#running-req": ("running_reqs", int),
    "#queue-req": ("queued_reqs", int),
    "#token": ("num_tokens", int),
    "#full token": ("num_tokens", int),
    "token usage": ("token_usage", float),
    "full token usage": ("token_usage", float),
    "accept len": ("accept_len", float),
    "accept rate": ("accept_rate", float),
    "cuda graph": ("cuda_graph", bool),
    "cpu graph": ("cuda_graph", bool),
    "npu graph": ("cuda_graph", bool),
    "gen throughput (token/s)": ("gen_throughput_tok_s", float),
    "#retracted-req": ("retracted_reqs", int),
}

_PREFILL_KEYS: dict[str, tuple[str, type]] = {
    "#new-seq": ("new_seqs", int),
    "#new-token": ("new_tokens", int),
    "#cached-token": ("cached_tokens", int),
    "token usage": ("token_usage", float),
    "full token usage": ("token_usage", float),
    "#running-req": ("running_reqs", int),
    "#queue-req": ("queued_reqs", int),
    "input throughput (token/s)": ("input_throughput_tok_s", float),
    "cuda graph": ("cuda_graph", bool),
}

_ITER = re.compile(r"batch \[(\d+)\]")


def _convert(value: str, kind: type):
    if kind is bool:
        return value == "True"
    if kind is int:
        try:
            return int(value)
        except ValueError:  # "2.0", or more digits than int() converts
            try:
                return int(float(value))
            except OverflowError:
                return None
    return float(value)


_DECODE_FAST = re.compile(
    r"Decode batch(?: \[(\d+)\])?[.,] #running-req: (\d+), #token: (\d+), token usage: ([\d.]+), "
    r"(?:accept len: ([\d.]+), )?(?:accept rate: ([\d.]+), )?(?:cuda graph: (True|False), )?"
    r"gen throughput \(token/s\): ([\d.]+), #queue-req: (\d+)"
)
_PREFILL_FAST = re.compile(
    r"Prefill batch[.,] #new-seq: (\d+), #new-token: (\d+), #cached-token: (\d+), token usage: ([\d.]+), "
    r"#running-req: (\d+), #queue-req: (\d+)(?:, input throughput \(token/s\): ([\d.]+))?"
    r"(?:, cuda graph: (True|False))?"
)


def parse_decode(message: str) -> DecodeRecord:
    """Figures of a ``Decode batch`` message (any era); fields absent from the line stay None."""
    m = _DECODE_FAST.match(message)
    if m is not None:
        it, run, tok, usage, al, ar, graph, gen, queue = m.groups()
        try:
            return DecodeRecord(
                int(run), int(queue), int(tok), float(usage),
                float(al) if al is not None else None,
                float(ar) if ar is not None else None,
                (graph == "True") if graph is not None else None,
                float(gen),
                int(it) if it is not None else None,
            )
        except ValueError:  # "1.2.3", or an int too long to convert: read the pairs one by one below
            pass
    rec = DecodeRecord()
    for key, value in _PAIR.findall(message):
        spec = _DECODE_KEYS.get(key)
        if spec is not None:
            setattr(rec, spec[0], _convert(value, spec[1]))
    if "batch [" in message[:20]:
        m = _ITER.search(message, 0, 40)
        if m:
            rec.iteration = int(m.group(1))
    return rec


def parse_prefill(message: str) -> PrefillRecord:
    """Figures of a ``Prefill batch`` message (any era); fields absent from the line stay None."""
    m = _PREFILL_FAST.match(message)
    if m is not None:
        seqs, new, cached, usage, run, queue, inp, graph = m.groups()
        try:
            return PrefillRecord(
                int(seqs), int(new), int(cached), float(usage), int(run), int(queue),
                float(inp) if inp is not None else None,
                (graph == "True") if graph is not None else None,
            )
        except ValueError:  # "1.2.3", or an int too long to convert: read the pairs one by one below
            pass
    rec = PrefillRecord()
    for key, value in _PAIR.findall(message):
        spec = _PREFILL_KEYS.get(key)
        if spec is not None:
            setattr(rec, spec[0], _convert(value, spec[1]))
    return rec


_VLLM_MEAN = re.compile(r"Mean acceptance length: ([\d.]+)")
_VLLM_ACCEPTED = re.compile(r"Accepted: (\d+) tokens")
_VLLM_DRAFTED = re.compile(r"Drafted: (\d+) tokens")
_VLLM_AVG = re.compile(r"Avg Draft acceptance rate: ([\d.]+)%")
_VLLM_POS = re.compile(r"Per-position acceptance rate: ((?:[\d.]+(?:, )?)+)")


def parse_vllm_spec_metrics(message: str) -> DecodeRecord:
    """Figures of a vLLM ``SpecDecoding metrics:`` message (vLLM ≥ 0.8; fields cut off in a truncated line stay
    None). ``accept_rate`` is vLLM's "Avg Draft acceptance rate" as a fraction (no bonus token)."""
    rec = DecodeRecord(engine="vllm")
    m = _VLLM_MEAN.search(message)
    if m:
        rec.accept_len = float(m.group(1))
    m = _VLLM_ACCEPTED.search(message)
    if m:
        rec.accepted_tokens = int(m.group(1))
    m = _VLLM_DRAFTED.search(message)
    if m:
        rec.drafted_tokens = int(m.group(1))
    m = _VLLM_AVG.search(message)
    if m:
        rec.accept_rate = float(m.group(1)) / 100.0
    m = _VLLM_POS.search(message)
    if m:
        rec.per_position_rate = tuple(float(x) for x in m.group(1).rstrip(", ").split(", ") if x)
    return rec
