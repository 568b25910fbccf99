"""Recompute derived figures of imported results, flag pasted values that disagree, sanity checks, ranking.

Rounding is allowed for exactly what the text shows: each pasted value stands for an interval of half a unit of its
last digit (``1.58`` is 1.575..1.585), a recomputation is carried out on those intervals, and a pasted derived value
is a finding only when its own interval and the recomputed one do not meet.

Relations used (each tool's own definition):

* ``output_tokens_per_s = total_output_tokens / duration_s``, ``requests_per_s = completed / duration_s``,
  ``input_tokens_per_s = total_input_tokens / duration_s``, ``total_tokens_per_s = (input + output) / duration_s``
  (SGLang ``bench_serving.calculate_metrics``; vLLM ``vllm/benchmarks/serve.py`` ``calculate_metrics``).
* vLLM's speculative section: ``acceptance length = 1 + accepted tokens / drafts``, ``acceptance rate (%) =
  accepted tokens / draft tokens * 100`` (vLLM ``serve.py``, spec-decode metrics).
* SGLang ``bench_speculative``: ``speed = accept length / step time``.
* speedup against the table's own baseline row (same batch size / concurrency): ``throughput / baseline
  throughput``, else ``baseline TPOT / TPOT``.
* accept rate with ``topk`` 1: ``(accept length - 1) / steps`` (accepted draft tokens per proposed draft token).
* accept length can never exceed ``steps + 1`` (each verify accepts at most one token per draft step plus the
  bonus token; SGLang ``eagle_worker.py`` verify), nor ``num_draft_tokens`` when steps are unknown.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from specdash.bench.difference import Measure, rank_items
from specdash.bench.imported.record import Finding, ImportedRecord, half_unit

#: retokenized / generated token counts outside this range are a finding
RETOKENIZED_RANGE = (0.8, 1.25)

Interval = tuple[float, float]


def _interval(record: ImportedRecord, key: str) -> Interval | None:
    value = record.metrics.get(key)
    if value is None:
        return None
    h = half_unit(record.raw.get(key, "")) if key in record.raw else 0.0
    return value - h, value + h


def _div(a: Interval, b: Interval) -> Interval | None:
    if b[0] <= 0:
        return None
    return min(a[0] / b[0], a[0] / b[1]), max(a[1] / b[0], a[1] / b[1])


def _add(a: Interval, b: Interval) -> Interval:
    return a[0] + b[0], a[1] + b[1]


def _meets(a: Interval, b: Interval) -> bool:
    slack = 1e-9 * max(abs(a[0]), abs(a[1]), abs(b[0]), abs(b[1]), 1.0)
    return a[0] <= b[1] + slack and b[0] <= a[1] + slack


def _mid(iv: Interval) -> float:
    return (iv[0] + iv[1]) / 2.0


def _fmt(value: float) -> str:
    return f"{value:.2f}" if abs(value) < 1e6 else f"{value:.4g}"


def _relation(record: ImportedRecord, key: str, label: str, computed: Interval | None, how: str, unit: str = "",
              scale: float = 1.0, central: float | None = None) -> None:
    """Store the recomputed value of ``key`` (``central``: computed from the values as pasted, else the middle
    of ``computed``); a finding when the pasted one disagrees beyond rounding."""
    if computed is None:
        return
    computed = (computed[0] * scale, computed[1] * scale)
    value = _mid(computed) if central is None else central * scale
    pasted = _interval(record, key)
    if pasted is None:
        record.derived[key] = value
        return
    if not _meets(pasted, computed):
        record.derived[key] = value  # the pasted figure is not trusted: comparisons and rankings use this one
        record.findings.append(Finding(
            "warning", "derived-mismatch",
            f"pasted {label} {record.raw.get(key, _fmt(record.metrics[key]))}{unit}; recomputed "
            f"{_fmt(value)}{unit} from {how}: the pasted figure is wrong or belongs to another run",
            record.line))


def check_record(record: ImportedRecord) -> None:
    """Recompute what one record's own raw values allow and add its sanity findings (in place)."""
    iv = {k: _interval(record, k) for k in list(record.metrics)}
    dur = iv.get("duration_s") if record.metrics.get("duration_s", 0) > 0 else None
    if dur is not None:
        for key, source, label, unit in (
            ("output_tokens_per_s", "total_output_tokens", "output throughput", " tok/s"),
            ("requests_per_s", "completed", "request throughput", " req/s"),
            ("input_tokens_per_s", "total_input_tokens", "input throughput", " tok/s"),
        ):
            src = iv.get(source)
            if src is not None and record.metrics["duration_s"] > 0:
                _relation(record, key, label, _div(src, dur),
                          f"{record.raw.get(source)} / {record.raw.get('duration_s')} s", unit,
                          central=record.metrics[source] / record.metrics["duration_s"])
        if iv.get("total_input_tokens") and iv.get("total_output_tokens"):
            total = _add(iv["total_input_tokens"], iv["total_output_tokens"])  # type: ignore[arg-type]
            _relation(record, "total_tokens_per_s", "total throughput", _div(total, dur),
                      "(input + output tokens) / duration", " tok/s",
                      central=(record.metrics["total_input_tokens"] + record.metrics["total_output_tokens"])
                      / record.metrics["duration_s"])
    m = record.metrics
    positive = {k: iv.get(k) if (m.get(k) or 0) > 0 else None for k in ("drafts", "draft_tokens", "step_time_ms")}
    drafts, draft_tokens, accepted = positive["drafts"], positive["draft_tokens"], iv.get("accepted_tokens")
    if drafts and accepted:
        per = _div(accepted, drafts)
        if per:
            _relation(record, "accept_length", "acceptance length", (1 + per[0], 1 + per[1]),
                      f"1 + {record.raw.get('accepted_tokens')} accepted / {record.raw.get('drafts')} drafts",
                      central=1 + record.metrics["accepted_tokens"] / record.metrics["drafts"])
    if drafts and draft_tokens:
        per_draft = record.metrics["draft_tokens"] / record.metrics["drafts"]
        if per_draft == int(per_draft) and per_draft >= 1:  # vLLM proposes num_speculative_tokens per draft
            record.config.setdefault("num_speculative_tokens", int(per_draft))
    if draft_tokens and accepted:
        _relation(record, "accept_rate_pct", "acceptance rate", _div(accepted, draft_tokens),
                  f"{record.raw.get('accepted_tokens')} accepted / {record.raw.get('draft_tokens')} draft tokens",
                  "%", scale=100.0, central=record.metrics["accepted_tokens"] / record.metrics["draft_tokens"])
    speed, step, acc = iv.get("speed_tokens_per_s"), positive["step_time_ms"], iv.get("accept_length")
    if step and acc:
        rate = _div(acc, (step[0] / 1000.0, step[1] / 1000.0))
        _relation(record, "speed_tokens_per_s", "speed", rate,
                  f"accept length {record.raw.get('accept_length')} / step time {_fmt(record.metrics['step_time_ms'])}"
                  " ms", " token/s", central=record.metrics["accept_length"] / record.metrics["step_time_ms"] * 1000.0)
    elif step and speed and acc is None:
        record.derived["accept_length"] = m["speed_tokens_per_s"] * m["step_time_ms"] / 1000.0
        iv["accept_length_derived"] = (speed[0] * step[0] / 1000.0, speed[1] * step[1] / 1000.0)
    _rate_vs_length(record)
    _accept_max(record, iv.get("accept_length") or iv.get("accept_length_derived"))
    _sanity(record)


def _rate_vs_length(record: ImportedRecord) -> None:
    """A pasted accept rate must match its accept length under one of the definitions in use: ``(accept length -
    1) / steps`` (accepted drafts per drafted position; SGLang before ~0.5.3, NVIDIA NeMo), ``accept length / draft
    tokens`` (SGLang's field from ~0.5.3) or the chain model's per-token acceptance alpha (Leviathan et al. 2023,
    :func:`specdash.bench.acceptance.estimate_alpha`). Only chains (topk 1) are judged."""
    from specdash.bench.acceptance import estimate_alpha

    rate = _interval(record, "accept_rate_pct")
    length = _interval(record, "accept_length")
    steps = record.config.get("speculative_num_steps")
    ndt = record.config.get("speculative_num_draft_tokens")
    if rate is None or length is None or record.config.get("speculative_eagle_topk") != 1 or not (steps or ndt):
        return
    lo, hi = max(length[0], 1.0), max(length[1], 1.0)
    candidates: list[tuple[str, Interval]] = []
    if steps:
        candidates.append((f"({record.raw.get('accept_length')} - 1) / {steps} steps",
                           ((lo - 1) / steps * 100.0, (hi - 1) / steps * 100.0)))
        candidates.append((f"chain-model alpha at {steps} steps",
                           (estimate_alpha(lo, steps) * 100.0, estimate_alpha(hi, steps) * 100.0)))
    if ndt:
        candidates.append((f"{record.raw.get('accept_length')} / {ndt} draft tokens",
                           (length[0] / ndt * 100.0, length[1] / ndt * 100.0)))
    if any(_meets(rate, iv) for _, iv in candidates):
        return
    shown = "; ".join(f"{how} = {_fmt(_mid(iv))}%" for how, iv in candidates)
    record.findings.append(Finding(
        "warning", "accept-rate-mismatch",
        f"pasted accept rate {_fmt(record.metrics['accept_rate_pct'])}% does not match accept length "
        f"{record.raw.get('accept_length')} under any definition in use ({shown})", record.line))


def _accept_max(record: ImportedRecord, length: Interval | None) -> None:
    if length is None:
        return
    steps = record.config.get("speculative_num_steps")
    ndt = record.config.get("speculative_num_draft_tokens")
    k = record.config.get("num_speculative_tokens")
    if steps:
        limit, why = steps + 1, f"steps {steps} + 1 bonus token"
    elif k:
        limit, why = k + 1, f"{k} speculative tokens per draft + 1 bonus token"
    elif ndt:  # "draft tokens" may count the root (SGLang) or not (vLLM's num_speculative_tokens): the looser bound
        limit, why = ndt + 1, f"{ndt} draft tokens + 1"
    elif record.baseline:
        limit, why = 1, "no speculative decoding"
    else:
        return
    if length[0] > limit + 1e-9:
        shown = record.raw.get("accept_length") or _fmt(_mid(length))
        record.findings.append(Finding(
            "error", "accept-length-above-max",
            f"accept length {shown} is above the most this configuration can accept ({why} = {limit}): the figure "
            "belongs to another configuration or the configuration shown is not the one that ran", record.line))


def _sanity(record: ImportedRecord) -> None:
    m = record.metrics
    completed, errors = m.get("completed"), m.get("errors")
    if completed == 0:
        failed = f" ({int(errors)} failed)" if errors else ""
        record.findings.append(Finding("error", "no-completed-requests",
                                       f"0 requests completed{failed}: the run measured nothing", record.line))
    elif errors:
        total = f" of {int(errors + completed)}" if completed is not None else ""
        record.findings.append(Finding(
            "warning", "failed-requests",
            f"{int(errors)}{total} requests failed: the figures cover only the completed ones", record.line))
    generated, retok = m.get("total_output_tokens"), m.get("total_output_tokens_retokenized")
    if generated and retok:  # 0: the text was not retokenized (bench_speculative passes a tokenizer returning [])
        ratio = retok / generated
        if not RETOKENIZED_RANGE[0] <= ratio <= RETOKENIZED_RANGE[1]:
            record.findings.append(Finding(
                "warning", "retokenized-mismatch",
                f"generated {int(generated)} tokens but the text retokenizes to {int(retok)} ({ratio:.0%}): a sign "
                "of degenerate output (repeated tokens, text after the end of sequence with ignore_eos), which "
                "inflates n-gram and draft acceptance; accept length and throughput of this run are not "
                "representative of real text", record.line))
    for metric in ("ttft", "tpot", "itl", "e2e"):
        stats = [(s, m.get(f"{metric}_ms.{s}")) for s in ("p50", "p90", "p95", "p99", "max")]
        known = [(s, v) for s, v in stats if v is not None]
        for (s1, v1), (s2, v2) in zip(known, known[1:], strict=False):
            if v1 > v2 + 0.01:
                record.findings.append(Finding(
                    "warning", "percentiles-out-of-order",
                    f"{metric.upper()} {s1} {_fmt(v1)} ms is above {s2} {_fmt(v2)} ms: the lines come from different "
                    "runs or were edited", record.line))
                break
    ttft, e2e = m.get("ttft_ms.mean"), m.get("e2e_ms.mean")
    if ttft is not None and e2e is not None and ttft > e2e + 0.01:
        record.findings.append(Finding(
            "warning", "ttft-above-e2e",
            f"mean TTFT {_fmt(ttft)} ms is above mean end-to-end latency {_fmt(e2e)} ms, which contains it: the "
            "lines come from different runs or were edited", record.line))


def _group_key(record: ImportedRecord) -> object:
    return record.config.get("concurrency")


def check_group(records: Sequence[ImportedRecord]) -> None:
    """Per-record checks, then speedups against the baseline row of the same concurrency / batch size."""
    for record in records:
        check_record(record)
    groups: dict[object, list[ImportedRecord]] = {}
    for record in records:
        groups.setdefault(_group_key(record), []).append(record)
    for members in groups.values():
        bases = [r for r in members if r.baseline]
        if len(bases) != 1:
            continue
        base = bases[0]
        for record in members:
            _speedup(record, base)
    for record in records:  # an overflow from absurd pasted figures is no figure
        record.derived = {k: v for k, v in record.derived.items() if math.isfinite(v)}


def _speedup(record: ImportedRecord, base: ImportedRecord) -> None:
    for key, invert, label in (("output_tokens_per_s", False, "throughput"), ("tpot_ms.mean", True, "TPOT"),
                               ("speed_tokens_per_s", False, "speed")):
        mine, theirs = _interval(record, key), _interval(base, key)
        if mine is None or theirs is None:
            continue
        ratio = _div(theirs, mine) if invert else _div(mine, theirs)
        if ratio is None or not record.metrics[key] or not base.metrics[key]:
            return
        central = (base.metrics[key] / record.metrics[key] if invert
                   else record.metrics[key] / base.metrics[key])
        mine_raw, base_raw = record.raw.get(key), base.raw.get(key)
        how = f"{base_raw}/{mine_raw} {label}" if invert else f"{mine_raw}/{base_raw} {label}"
        pasted = _interval(record, "speedup")
        if pasted is not None and not _meets(pasted, ratio):
            record.derived["speedup"] = central
            record.findings.append(Finding(
                "warning", "speedup-mismatch",
                f"pasted speedup {record.raw.get('speedup')}x; recomputed {central:.2f}x from {how} against "
                f"the baseline row (line {base.line})", record.line))
        elif pasted is None:
            record.derived["speedup"] = central
        return


def rank_basis(records: Sequence[ImportedRecord]) -> tuple[str, str, Callable[[ImportedRecord], float]] | None:
    """The figure that ranks these records: output throughput, else bench_speculative's speed, else TPOT.
    Accept length is never a basis. ``(key, words, sort key)`` or None when no figure is known for two records."""
    for key, words, sign in (("output_tokens_per_s", "output throughput (tok/s, higher is better)", -1.0),
                             ("speed_tokens_per_s", "decode speed per request (token/s, higher is better)", -1.0),
                             ("tpot_ms.mean", "TPOT (ms, lower is better)", 1.0)):
        if sum(1 for r in records if r.value(key) is not None) >= 2:
            def sort_key(r: ImportedRecord, key: str = key, sign: float = sign) -> float:
                value = r.value(key)
                return sign * value if value is not None else float("inf")
            return key, words, sort_key
    return None


def rank(records: Sequence[ImportedRecord]) -> list[dict]:
    """Rank depth choices per concurrency / batch size by :func:`rank_basis` (never by accept length), with shared
    ranks for results within noise of each other (:func:`specdash.bench.difference.rank_items`: one run each, so
    a difference counts only beyond the single-run floor).

    Returns one dict per group: ``concurrency``, ``basis`` (key), ``basis_text``, ``order`` (records best first;
    records without the figure last, ``unranked`` lists them), ``ranks`` (the shared rank of each record of
    ``order``), ``note`` (when the highest accept length ranks below the best beyond noise, a line saying so;
    else ``""``)."""
    groups: dict[object, list[ImportedRecord]] = {}
    for record in records:
        groups.setdefault(_group_key(record), []).append(record)
    out: list[dict] = []
    for concurrency, members in groups.items():
        basis = rank_basis(members)
        if basis is None:
            continue
        key, words, _ = basis
        known = [r for r in members if r.value(key) is not None and math.isfinite(r.value(key) or 0.0)]

        def measure(r: ImportedRecord, key: str = key) -> Measure:
            return Measure(r.value(key) or 0.0)

        pairs = rank_items(known, key, measure)
        ranked = [r for _, r in pairs]
        ranks = [n for n, _ in pairs]
        unranked = [r for r in members if r not in known]
        note = ""
        with_al = [r for r in ranked if r.value("accept_length") is not None]
        if with_al and ranked:
            top_al = max(with_al, key=lambda r: r.value("accept_length") or 0.0)
            place = ranks[ranked.index(top_al)]
            if place > 1 and (top_al.value("accept_length") or 0) > (ranked[0].value("accept_length") or 0):
                basis_name = words.split(" (")[0]
                note = (f"the highest accept length ({_fmt(top_al.value('accept_length') or 0.0)}, "
                        f"{top_al.title()}) ranks {place} of {len(ranked)} by {basis_name}:"
                        " a longer accept length does not pay for a slower step")
        out.append({"concurrency": concurrency, "basis": key, "basis_text": words, "order": ranked,
                    "ranks": ranks, "unranked": unranked, "note": note})
    return out
