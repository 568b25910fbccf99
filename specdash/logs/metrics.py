"""Live metrics from ``Decode batch`` / ``Prefill batch`` lines: current values, recent history (for sparklines),
trusted steady-state means, and the accept-rate consistency check.

Which decode samples are trusted for trends: a ``Decode batch`` line reports figures over the last
``decode_log_interval`` decode steps (default 40). A window that also contains idle time or a long prefill reports a
throughput (and a running accept length) that is not steady state. A sample is *not trusted* when

* it is the first sample of the stream or comes after idle (gap to the previous decode line > max(30 s, 3x the
  median gap)) — "the window includes idle time";
* the prefills logged since the previous decode line admitted more new tokens than the window decoded
  (≈ decode_log_interval × running requests × accept length) — "prefill-dominated window";
* its per-request gen throughput is below a quarter of the median of the recent trusted samples.

Consistency check (SGLang ``scheduler_metrics_mixin.py``): in SGLang ~0.5.3+ ``accept rate = accept len /
num_draft_tokens``; other builds print ``(accept len - 1) / num_steps``. Solving each sample for N and finding the
same integer for all samples says which formula — and which depth — the server really runs.
"""

from __future__ import annotations

import collections
import dataclasses
import statistics
from datetime import datetime
from typing import Any

from specdash.logs.parser import LineKind, ParsedLine
from specdash.logs.records import DecodeRecord, PrefillRecord

# LineKind members as module constants (an Enum attribute lookup costs ~10x a global in CPython 3.11)
_K_decode = LineKind.decode
_K_prefill = LineKind.prefill
_K_ready = LineKind.ready
_K_server_args = LineKind.server_args
_K_weights_begin = LineKind.weights_begin

#: Decode samples kept (for sparklines and means); older ones only count in totals.
MAX_SAMPLES = 5_000
IDLE_GAP_S = 30.0
#: Newest samples used by the consistency check.
CONSISTENCY_SAMPLES = 300

#: metric name -> (label, unit, DecodeRecord attribute)
METRICS: dict[str, tuple[str, str, str]] = {
    "accept_len": ("accept len", "", "accept_len"),
    "accept_rate": ("accept rate", "", "accept_rate"),
    "gen_throughput": ("gen tok/s", "tok/s", "gen_throughput_tok_s"),
    "running_reqs": ("running", "", "running_reqs"),
    "queued_reqs": ("queued", "", "queued_reqs"),
    "token_usage": ("KV usage", "", "token_usage"),
}


#: Metrics whose running means the findings need (kept as running sums over the kept samples): name -> offset
#: of its (sum, n, trusted sum, trusted n) in LiveMetrics._acc.
_SUMMED = {"accept_len": 0, "accept_rate": 4, "gen_throughput": 8}
_SUMMED_OFFSETS = tuple(_SUMMED.values())  # in LiveMetrics._account's order of DecodeRecord fields


def _reason_label(reason: str) -> str:
    """The fixed category of an untrust reason (for counting)."""
    if reason.startswith("prefill"):
        return "prefill-dominated window"
    if reason.startswith("gen throughput"):
        return "throughput far below the recent median"
    return "window includes idle time"


def _account(acc: list[float], rec: DecodeRecord, trusted: bool, sign: int) -> None:
    """Add (``sign`` 1) or remove (-1) ``rec``'s summed figures to the running sums ``acc`` (see _SUMMED)."""
    for i, v in zip(_SUMMED_OFFSETS, (rec.accept_len, rec.accept_rate, rec.gen_throughput_tok_s), strict=True):
        if v is not None:
            acc[i] += sign * v
            acc[i + 1] += sign
            if trusted:
                acc[i + 2] += sign * v
                acc[i + 3] += sign


def _median(values: collections.deque[float]) -> float:
    """:func:`statistics.median` of a non-empty sequence (the same arithmetic, without its generic overhead)."""
    data = sorted(values)
    n = len(data)
    if n % 2:
        return data[n // 2]
    return (data[n // 2 - 1] + data[n // 2]) / 2


@dataclasses.dataclass(slots=True)
class DecodeSample:
    """One decode line: ``line`` number, ``timestamp`` (or None), ``record``, ``trusted`` and the ``reason`` it is
    not (empty when trusted), ``max_accept_len`` (:attr:`LiveMetrics.max_accept_len` when it was taken)."""

    line: int
    timestamp: datetime | None
    record: DecodeRecord
    trusted: bool = True
    reason: str = ""
    #: the largest accept length the configuration in force when the line was written allows (None: unknown)
    max_accept_len: int | None = None


@dataclasses.dataclass(frozen=True)
class Consistency:
    """Result of the accept-rate check: ``formula`` is ``"accept_len/N"`` or ``"(accept_len-1)/N"``; ``n`` the depth
    it implies (draft tokens for the first, draft steps for the second); ``samples`` used; ``configured``: the value
    from server_args it was compared with (or None); ``matches``: n == configured (None when unknown)."""

    formula: str
    n: int
    samples: int
    configured: int | None
    matches: bool | None

    def describe(self) -> str:
        """One line for the metrics strip / findings."""
        if self.formula == "accept_len/N":
            text = f"accept rate = accept len / {self.n}: the server runs {self.n} draft tokens"
        else:
            text = (f"accept rate = (accept len - 1) / {self.n}: {self.n} draft steps; this build's accept rate "
                    "excludes the bonus token, so do not compare it raw across versions")
        if self.matches is True:
            text += " (matches server_args)"
        elif self.matches is False:
            text += f" (server_args says {self.configured})"
        return text


class LiveMetrics:
    """Feed it every parsed line (:meth:`observe`); read :attr:`samples`, :meth:`series`, :meth:`summary`,
    :meth:`consistency`. ``decode_log_interval`` (steps per decode line, SGLang default 40) and the configured depth
    are picked up from the ``server_args=`` line when present."""

    def __init__(self) -> None:
        self.samples: collections.deque[DecodeSample] = collections.deque(maxlen=MAX_SAMPLES)
        self.total_samples = 0
        self.decode_log_interval = 40
        self.num_draft_tokens: int | None = None
        self.num_steps: int | None = None
        self.topk: int | None = None
        self.prefills = 0
        self.last_prefill: PrefillRecord | None = None
        self.no_graph_samples = 0
        #: decode samples not trusted (lifetime), per reason (the text before the first ':'), and their lines
        self.untrusted_total = 0
        #: kept samples (:attr:`samples`) not trusted
        self.untrusted_kept = 0
        self.untrusted_reasons: collections.Counter[str] = collections.Counter()
        self.untrusted_lines: collections.deque[int] = collections.deque(maxlen=50)
        self._prefill_tokens_since = 0
        self._last_decode_ts: datetime | None = None
        self._gaps_s: collections.deque[float] = collections.deque(maxlen=50)
        self._per_req: collections.deque[float] = collections.deque(maxlen=50)
        self._per_req_median: float | None = None
        #: (running, queued, token usage) of the last batch lines, for the request-cap finding
        self.batch_state: collections.deque[tuple[int, int, float]] = collections.deque(maxlen=6)
        #: running sums over the kept samples: per summed metric (sum, n, trusted sum, trusted n), see _SUMMED
        self._acc: list[float] = [0.0] * (4 * len(_SUMMED))
        #: samples whose accept length exceeds their max_accept_len: count, highest value, its line
        self.above_max_samples = 0
        self.above_max_peak: tuple[float, int, int] | None = None  # (accept len, its maximum, line number)
        #: (newest sample, total_samples, num_draft_tokens, num_steps) -> :meth:`consistency` (asked twice per refresh)
        self._consistency_key: tuple[Any, ...] | None = None
        self._consistency: Consistency | None = None

    @property
    def max_accept_len(self) -> int | None:
        """The largest accept length the configuration from the last ``server_args=`` line allows: each verify step
        accepts at most ``speculative_num_steps`` draft tokens (SGLang ``eagle_worker.py``: the verify output's
        ``accept_length_per_req_cpu``, one per draft step at most) plus the bonus token, so ``num_steps + 1``;
        ``num_draft_tokens`` when no step count is given (NGRAM verifies that many tokens); None when the log named
        neither."""
        if self.num_steps:
            return self.num_steps + 1
        return self.num_draft_tokens or None

    def _new_run(self) -> None:
        """A ``server_args=`` line after decode samples: a new server (maybe another configuration) writes to this
        log. Its samples, means and counts start afresh, so a figure is never judged against another run's
        configuration and the counts in the findings match the samples shown."""
        self.samples.clear()
        self._acc = [0.0] * (4 * len(_SUMMED))
        self.total_samples = 0
        self.untrusted_total = 0
        self.untrusted_kept = 0
        self.untrusted_reasons.clear()
        self.untrusted_lines.clear()
        self.no_graph_samples = 0
        self.above_max_samples = 0
        self.above_max_peak = None
        self._gaps_s.clear()
        self._per_req.clear()
        self._per_req_median = None
        self.batch_state.clear()

    def observe(self, line: ParsedLine) -> DecodeSample | None:
        """Update from one line; returns the new :class:`DecodeSample` for decode lines, else None."""
        kind = line.kind
        if kind is _K_decode:
            return self.decode_line(line)
        if kind is _K_prefill:
            rec = line.record
            if isinstance(rec, PrefillRecord):
                self.prefills += 1
                self.last_prefill = rec
                self._prefill_tokens_since += rec.new_tokens or 0
                if rec.running_reqs is not None and rec.queued_reqs is not None and rec.token_usage is not None:
                    self.batch_state.append((rec.running_reqs, rec.queued_reqs, rec.token_usage))
            return None
        if kind is _K_server_args and line.info:
            info = line.info
            if self.total_samples:
                self._new_run()
            self.num_draft_tokens = self.num_steps = self.topk = None  # this run's values, not the last run's
            self.decode_log_interval = int(info.get("decode_log_interval") or self.decode_log_interval)
            for attr, key in (("num_draft_tokens", "speculative_num_draft_tokens"),
                              ("num_steps", "speculative_num_steps"), ("topk", "speculative_eagle_topk")):
                value = info.get(key)
                if isinstance(value, int):
                    setattr(self, attr, value)
        elif kind is _K_ready or kind is _K_weights_begin:
            self._last_decode_ts = None  # a (re)start: the next sample follows idle time
            self._prefill_tokens_since = 0
        return None

    def decode_line(self, line: ParsedLine) -> DecodeSample | None:
        """:meth:`observe` for a line already known to be a ``Decode batch`` line (the analyzer's short path)."""
        rec = line.record
        return self._decode(line, rec) if rec.__class__ is DecodeRecord else None

    def _decode(self, line: ParsedLine, rec: DecodeRecord) -> DecodeSample:
        # the hot path of a busy log (once per Decode batch line): attributes read once, sums kept inline
        ts = line.timestamp
        steps = self.num_steps
        max_len = steps + 1 if steps else (self.num_draft_tokens or None)  # = self.max_accept_len
        sample = DecodeSample(line.number, ts, rec, True, "", max_len)
        prev = self._last_decode_ts
        accept_len = rec.accept_len
        if max_len and accept_len is not None and accept_len > max_len + 0.005:  # printed with 2 decimals
            self.above_max_samples += 1
            if self.above_max_peak is None or accept_len > self.above_max_peak[0]:
                self.above_max_peak = (accept_len, max_len, line.number)
        if rec.engine == "sglang":
            reason = ""
            if ts is None:
                if prev is None and self.total_samples == 0:
                    reason = "first sample: its window may include idle time"
            elif prev is None:
                reason = "first sample after start or idle: its window includes idle time"
            else:
                gap = 0.0 if ts is prev else (ts - prev).total_seconds()
                # the limit is at least IDLE_GAP_S, so the median is only needed for longer gaps
                if gap > IDLE_GAP_S and gap > (max(IDLE_GAP_S, 3 * statistics.median(self._gaps_s)) if self._gaps_s
                                               else IDLE_GAP_S):
                    reason = f"first sample after {gap:.0f} s without decode lines: its window includes idle time"
                else:
                    self._gaps_s.append(gap)
            running = rec.running_reqs
            if not reason and self._prefill_tokens_since:
                decoded = self.decode_log_interval * max(1, running or 1) * (accept_len or 1.0)
                if self._prefill_tokens_since > decoded:
                    reason = (f"prefill-dominated window: {self._prefill_tokens_since} prefill tokens vs "
                              f"~{decoded:.0f} decoded")
            per_req = None
            gen = rec.gen_throughput_tok_s
            if gen is not None and running:
                per_req = gen / running
                if not reason and len(self._per_req) >= 3:
                    if self._per_req_median is None or self.total_samples % 16 == 0:
                        self._per_req_median = _median(self._per_req)
                    if per_req < 0.25 * self._per_req_median:
                        reason = (f"gen throughput {gen:g} tok/s is far below the recent median: "
                                  "the window includes a stall or a long prefill")
            if reason:
                sample.trusted, sample.reason = False, reason
                self.untrusted_total += 1
                self.untrusted_reasons[_reason_label(reason)] += 1
                self.untrusted_lines.append(line.number)
            elif per_req is not None:
                self._per_req.append(per_req)
            if rec.cuda_graph is False:
                self.no_graph_samples += 1
            queued, usage = rec.queued_reqs, rec.token_usage
            if running is not None and queued is not None and usage is not None:
                self.batch_state.append((running, queued, usage))
        self._last_decode_ts = ts if ts is not None else prev
        self._prefill_tokens_since = 0
        samples = self.samples
        acc = self._acc
        if len(samples) == MAX_SAMPLES:  # _account(acc, old.record, old.trusted, -1), inline
            old = samples[0]
            old_rec = old.record
            old_trusted = old.trusted
            if not old_trusted:
                self.untrusted_kept -= 1
            v = old_rec.accept_len
            if v is not None:
                acc[0] += -v
                acc[1] += -1
                if old_trusted:
                    acc[2] += -v
                    acc[3] += -1
            v = old_rec.accept_rate
            if v is not None:
                acc[4] += -v
                acc[5] += -1
                if old_trusted:
                    acc[6] += -v
                    acc[7] += -1
            v = old_rec.gen_throughput_tok_s
            if v is not None:
                acc[8] += -v
                acc[9] += -1
                if old_trusted:
                    acc[10] += -v
                    acc[11] += -1
        samples.append(sample)
        # _account(acc, rec, sample.trusted, 1), inline: the same additions in the same order
        trusted = sample.trusted
        if not trusted:
            self.untrusted_kept += 1
        if accept_len is not None:
            acc[0] += accept_len
            acc[1] += 1
            if trusted:
                acc[2] += accept_len
                acc[3] += 1
        v = rec.accept_rate
        if v is not None:
            acc[4] += v
            acc[5] += 1
            if trusted:
                acc[6] += v
                acc[7] += 1
        v = rec.gen_throughput_tok_s
        if v is not None:
            acc[8] += v
            acc[9] += 1
            if trusted:
                acc[10] += v
                acc[11] += 1
        self.total_samples += 1
        return sample

    def _account(self, rec: DecodeRecord, trusted: bool, sign: int) -> None:
        """Keep running sums over the kept samples so means cost O(1) (``sign`` 1 adds the record, -1 removes it)."""
        _account(self._acc, rec, trusted, sign)

    def mean(self, name: str, trusted_only: bool = False) -> tuple[float | None, int]:
        """(mean, count) of ``name`` (accept_len, accept_rate or gen_throughput; KeyError for others) over the kept
        samples (trusted ones only when asked); (None, 0) when none."""
        i = _SUMMED[name] + (2 if trusted_only else 0)
        total, n = self._acc[i], int(self._acc[i + 1])
        return (total / n, n) if n else (None, 0)

    # ---- reading ------------------------------------------------------------------------------------------
    def values(self, name: str, trusted_only: bool = False) -> list[float]:
        """Values of metric ``name`` (a key of :data:`METRICS`) over the kept samples, oldest first."""
        attr = METRICS[name][2]
        out = []
        for s in self.samples:
            if trusted_only and not s.trusted:
                continue
            v = getattr(s.record, attr)
            if v is not None:
                out.append(float(v))
        return out

    def recent(self, name: str, window_s: float = 300.0, max_samples: int = 120) -> list[float]:
        """Values of ``name`` over the last ``window_s`` seconds of log time (at most ``max_samples``, oldest first);
        the last ``max_samples`` samples when the lines carry no timestamps."""
        attr = METRICS[name][2]
        out: list[float] = []
        newest = None
        for s in reversed(self.samples):
            if newest is None:
                newest = s.timestamp
            elif newest is not None and s.timestamp is not None and (newest - s.timestamp).total_seconds() > window_s:
                break
            v = getattr(s.record, attr)
            if v is not None:
                out.append(float(v))
                if len(out) >= max_samples:
                    break
        out.reverse()
        return out

    def current(self, name: str) -> float | None:
        """Latest value of ``name`` (None before the first sample that has it)."""
        attr = METRICS[name][2]
        for s in reversed(self.samples):
            v = getattr(s.record, attr)
            if v is not None:
                return float(v)
        return None

    def summary(self) -> dict[str, dict[str, Any]]:
        """``{name: {"mean", "mean_of", "last", "samples", "trusted_samples", "min", "max"}}``; ``mean`` is over
        trusted samples (``mean_of`` = ``"trusted"``), or over all samples when none is trusted (``mean_of`` =
        ``"all"``); names absent from every line are left out."""
        out: dict[str, dict[str, Any]] = {}
        for name in METRICS:
            all_v = self.values(name)
            if not all_v:
                continue
            trusted = self.values(name, trusted_only=True)
            base = trusted or all_v
            out[name] = {
                "mean": round(statistics.fmean(base), 4),
                "mean_of": "trusted" if trusted else "all",
                "last": all_v[-1],
                "samples": len(all_v),
                "trusted_samples": len(trusted),
                "min": min(all_v),
                "max": max(all_v),
            }
        return out

    def consistency(self) -> Consistency | None:
        """Which formula links accept rate and accept len in this log, and the depth it implies (None when fewer
        than 2 samples carry both, or no formula fits every sample)."""
        samples = self.samples
        key = (samples[-1] if samples else None, self.total_samples, self.num_draft_tokens, self.num_steps)
        old = self._consistency_key
        if old is not None and old[0] is key[0] and old[1:] == key[1:]:
            return self._consistency
        self._consistency = result = self._consistency_of()
        self._consistency_key = key
        return result

    def _consistency_of(self) -> Consistency | None:
        pairs = []
        for s in reversed(self.samples):  # the newest CONSISTENCY_SAMPLES samples that carry both figures
            rec = s.record
            if rec.engine == "sglang" and rec.accept_len and rec.accept_rate:
                pairs.append((rec.accept_len, rec.accept_rate))
                if len(pairs) >= CONSISTENCY_SAMPLES:
                    break
        if len(pairs) < 2:
            return None
        for formula, solve, configured in (
            ("accept_len/N", lambda a, r: a / r, self.num_draft_tokens),
            ("(accept_len-1)/N", lambda a, r: (a - 1) / r, self.num_steps),
        ):
            estimates = [solve(a, r) for a, r in pairs]
            n = round(statistics.median(estimates))
            if n < 1:
                continue
            # values are printed with 2 decimals: allow the rounding error of the rate
            if all(abs(e - n) <= 0.12 * n + 0.05 for e in estimates):
                matches = None if configured is None else configured == n
                return Consistency(formula, n, len(pairs), configured, matches)
        return None
