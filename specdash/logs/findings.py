"""Findings: the deduplicated, pinned list of what matters in a server log, each with time, line and a plain
explanation.

Kinds (``Finding.kind``):

* ``override`` (warning) — every silent rewrite SGLang logged, linked to its flag and the fix (explain.py);
* ``crash`` (error) — the exception line that ended a traceback / an argparse failure / a child failure, with what it
  means for the speculative flags; repeated identical crashes count up ("crash loop");
* ``request_error`` (warning) — a traceback from the HTTP server's request handling (uvicorn's ``Exception in ASGI
  application``, frames in uvicorn / starlette / fastapi / socketserver): one request failed, the server was not
  brought down (a client that disconnected mid-stream gives BrokenPipeError / ConnectionResetError); repeats count up;
* ``oom`` (error) — CUDA OOM or KV pool too small, with the memory knobs;
* ``ready`` (success) — with time-to-ready;
* ``low_acceptance`` (warning/error) — accept length against the draft tokens in use;
* ``acceptance`` (info) — steady-state acceptance summary when it is not low;
* ``accept_above_max`` (error) — an accept length above the most this run's configuration allows: the server is not
  running what its server_args line says (replaces the acceptance summary);
* ``depth_check`` (info/warning) — the accept-rate consistency check (metrics.Consistency);
* ``untrusted_samples`` (info) — decode samples excluded from trends and why;
* ``retractions`` (warning) — KV-pool-full retractions by rate (≥ 3 within 60 s), not by level;
* ``request_cap`` (warning) — requests queue while KV usage is low: the batch is capped by a request limit;
* ``no_cuda_graph`` (warning) — decode batches that ran without CUDA graphs;
* ``capture`` (info) — CUDA graph capture times, draft capture dominating start-up;
* ``stall`` (warning) / ``startup_unfinished`` (info) — the log ends inside a start-up phase, past / within what
  is expected of it (:meth:`FindingsEngine.startup_unfinished`).

A traceback cut before its exception line, or a ``... hit an exception`` line without one, is still a ``crash``
(``data["cut"]``), with the component and last frame.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from datetime import datetime
from typing import Any

from specdash.logs.explain import explain_crash, explain_oom, explain_override, traceback_component
from specdash.logs.metrics import DecodeSample, LiveMetrics
from specdash.logs.parser import LineKind, ParsedLine
from specdash.severity import severity_rank

# LineKind members as module constants (an Enum attribute lookup costs ~10x a global in CPython 3.11)
_K_decode = LineKind.decode
_K_error = LineKind.error
_K_http = LineKind.http
_K_oom = LineKind.oom
_K_override = LineKind.override
_K_plain = LineKind.plain
_K_prefill = LineKind.prefill
_K_ready = LineKind.ready
_K_retract = LineKind.retract
_K_traceback = LineKind.traceback

_HIT_EXCEPTION = "hit an exception"
#: What usually hangs in each start-up phase (first words of the phase label -> hint).
_STALL_HINTS = {
    "weight loading": "Weight loading hangs on a slow or stuck filesystem (network storage, a full disk) or a "
                      "download that stopped. ",
    "CUDA graph capture": "A capture that stops usually ran out of GPU memory or waits on another rank (NCCL). ",
    "NCCL init": "NCCL init waits for every rank to join: a rank or node that never started or cannot connect "
                 "(wrong --nnodes/--node-rank/--dist-init-addr, a firewall, another node not started yet). ",
    "start-up before weight loading": "Before weight loading the ranks initialise NCCL; a hang there is a rank "
                                      "that never joined (wrong --nnodes/--dist-init-addr, a firewall, a GPU "
                                      "already in use). ",
}
RETRACT_WINDOW_S = 60.0
#: Decode samples between two recomputations of the acceptance / depth-check findings.
DERIVED_EVERY = 512
RETRACT_MIN_IN_WINDOW = 3
LOW_ACCEPT_MIN_SAMPLES = 3
#: A mean accept length at or below this: the draft is almost never accepted (the bonus token alone is 1.0), a
#: pairing problem at any depth (finding ``low_acceptance`` with no depth advice)
ALMOST_NEVER_ACCEPTED = 1.15


#: the line uvicorn / Python's socketserver write before a request handler's traceback
_REQUEST_HEADS = ("Exception in ASGI application", "Exception occurred during processing of request")
#: frames of the HTTP server's request handling (a path part of a ``File "..."`` frame line)
_REQUEST_FRAMES = ("/uvicorn/protocols/http/", "/starlette/", "/fastapi/", "/socketserver.py", "/http/server.py")


def _is_request_error(head: str, frames: list[str]) -> bool:
    """True when a traceback (its opening line ``head`` and its ``File "..."`` frame lines) comes from the HTTP
    server's handling of one request: uvicorn logs ``ERROR:    Exception in ASGI application`` before it
    (uvicorn/protocols/http/*_impl.py ``run_asgi``), Python's socketserver ``Exception occurred during processing of
    request from ...`` (``BaseServer.handle_error``), or its frames run through uvicorn, starlette, fastapi or
    socketserver. SGLang's scheduler and detokenizer crash with their own frames (and ``... hit an exception``)."""
    return any(h in head for h in _REQUEST_HEADS) or any(f in frame for frame in frames for f in _REQUEST_FRAMES)


@dataclasses.dataclass
class Finding:
    """One pinned finding. ``key`` deduplicates (same key -> ``count`` += 1, ``last_line`` updated, message may be
    refreshed); ``line``: the stream line number it points at (first occurrence); ``severity``: ``error``,
    ``warning``, ``success`` or ``info``; ``flag``/``fix``: the SGLang flag concerned and the builder's fix."""

    kind: str
    severity: str
    line: int
    message: str
    explanation: str = ""
    time: datetime | None = None
    flag: str | None = None
    fix: str | None = None
    count: int = 1
    last_line: int = 0
    key: str = ""
    data: dict[str, Any] = dataclasses.field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON shape used by ``specdash scan --json``."""
        return {
            "kind": self.kind,
            "severity": self.severity,
            "line": self.line,
            "last_line": self.last_line or self.line,
            "count": self.count,
            "time": self.time.isoformat(sep=" ") if self.time else None,
            "message": self.message,
            "explanation": self.explanation,
            "flag": self.flag,
            "fix": self.fix,
            **({"data": self.data} if self.data else {}),
        }


class FindingsEngine:
    """Derives findings from parsed lines and decode samples. ``on_new(finding)`` is called for every new finding;
    ``on_update(finding)`` when an existing one changes (count, message)."""

    def __init__(self, metrics: LiveMetrics, on_new: Callable[[Finding], None] | None = None,
                 on_update: Callable[[Finding], None] | None = None) -> None:
        self.metrics = metrics
        self.by_key: dict[str, Finding] = {}
        self.order: list[Finding] = []
        self.on_new = on_new
        self.on_update = on_update
        self._tb_frames: dict[int, list[str]] = {}
        self._tb_head: dict[int, ParsedLine] = {}
        #: the line that opened a crash report whose exception line has not come yet, and its traceback group
        self._open: ParsedLine | None = None
        self._open_group = 0
        self._retracts: collections.deque[tuple[datetime | None, int]] = collections.deque(maxlen=1000)
        self._retract_total = 0
        self._first_ts: datetime | None = None
        self._crashed = False
        self._pending: tuple[ParsedLine, DecodeSample] | None = None
        self._untrusted_at: tuple[ParsedLine, DecodeSample] | None = None
        self._untrusted_last: tuple[ParsedLine, DecodeSample] | None = None
        self._no_graph_at: tuple[ParsedLine, DecodeSample] | None = None
        self._cap_calls = 0
        #: the server writing this log is one configuration of a running depth sweep (the console sets it): the
        #: acceptance finding then does not advise a depth sweep
        self.in_depth_sweep = False
        #: crash/oom/child-failure events seen (a repeated crash counts again)
        self.crash_events = 0

    @property
    def findings(self) -> list[Finding]:
        """All findings, most severe first, then by line."""
        self.refresh_derived()
        return sorted(self.order, key=lambda f: (severity_rank(f.severity), f.line))

    @property
    def crashed(self) -> bool:
        """True once a crash/oom finding was raised."""
        return self._crashed

    def _add(self, key: str, make: Callable[[], Finding], line: int,
             refresh: Callable[[Finding], None] | None = None) -> Finding:
        existing = self.by_key.get(key)
        if existing is not None:
            existing.count += 1
            existing.last_line = line
            if refresh:
                refresh(existing)
            if self.on_update:
                self.on_update(existing)
            return existing
        finding = make()
        finding.key = key
        finding.last_line = line
        self.by_key[key] = finding
        self.order.append(finding)
        if self.on_new:
            self.on_new(finding)
        return finding

    def _set(self, key: str, finding: Finding) -> None:
        """Insert or replace a state-like finding (acceptance, depth check ...): keeps one per key."""
        finding.key = key
        old = self.by_key.get(key)
        if old is None:
            self.by_key[key] = finding
            self.order.append(finding)
            if self.on_new:
                self.on_new(finding)
            return
        if (old.kind, old.message, old.severity) == (finding.kind, finding.message, finding.severity):
            return
        old.kind = finding.kind  # a verdict can change kind (acceptance not judged -> low_acceptance)
        old.message, old.severity, old.explanation = finding.message, finding.severity, finding.explanation
        old.last_line, old.data, old.flag, old.fix = finding.line, finding.data, finding.flag, finding.fix
        if self.on_update:
            self.on_update(old)

    # ---- state-like findings the analyzer reports -----------------------------------------------------------
    def server_ready(self, line: ParsedLine, start_number: int, time_to_ready_s: float | None) -> None:
        """The ``ready`` finding of start number ``start_number`` (one per start), from SGLang's ready ``line``
        and the seconds from the start's first line (None when unknown)."""
        ttr = time_to_ready_s
        self._set(f"ready:{start_number}", Finding(
            "ready", "success", line.number, f"server ready{f' after {ttr:.0f} s' if ttr is not None else ''}",
            "The server answered its warmup request (The server is fired up and ready to roll!).",
            line.timestamp, data={"time_to_ready_s": ttr}))

    def capture_times(self, line: ParsedLine, target: Any, draft: Any) -> None:
        """The ``capture`` finding: CUDA graph capture times of the ``target`` and ``draft``
        :class:`~specdash.logs.startup.Phase` (``elapsed_s``, ``mem``), flagging a draft capture that takes at least
        twice the target's. Nothing while the draft capture has no duration."""
        if draft.elapsed_s is None:
            return
        t, d = target.elapsed_s, draft.elapsed_s
        parts = []
        if t is not None:
            parts.append(f"target {t:.2f} s" + (f" ({target.mem['mem_usage_gb']} GB)" if "mem_usage_gb" in target.mem
                                                 else ""))
        parts.append(f"draft {d:.2f} s" + (f" ({draft.mem['mem_usage_gb']} GB)" if "mem_usage_gb" in draft.mem
                                           else ""))
        avail = draft.mem.get("avail_mem_gb")
        ratio = d / t if t else None
        dominates = ratio is not None and ratio >= 2
        message = "CUDA graph capture: " + ", ".join(parts)
        if avail is not None:
            message += f"; {avail} GB free after"
        explanation = ""
        if dominates:
            explanation = (f"Draft capture took {ratio:.1f}x the target capture and dominates start-up — progress, "
                           "not a hang. ")
        explanation += "Fewer captured batch sizes (--cuda-graph-max-bs / --cuda-graph-bs) shorten start-up."
        self._set("capture", Finding(
            "capture", "info", line.number, message, explanation, line.timestamp, "--cuda-graph-max-bs", None,
            data={"target_s": t, "draft_s": d, "ratio": round(ratio, 2) if ratio else None, "avail_mem_gb": avail}))

    # ---- per line -----------------------------------------------------------------------------------------
    def observe(self, line: ParsedLine, sample: DecodeSample | None = None) -> None:
        """Update from one parsed line (and its decode sample, when the line is a decode line)."""
        kind = line.kind
        if self._first_ts is None and line.timestamp is not None:
            self._first_ts = line.timestamp
        if kind is _K_decode or kind is _K_prefill:
            if sample is not None:
                self._after_sample(line, sample)
            elif kind is _K_prefill:
                self._request_cap(line)
            return
        if kind is _K_plain or kind is _K_http:
            return
        if self._open is not None and not self._continues_open(line):
            self._cut_crash(at_end=False)
        if kind is _K_traceback:
            if line.group == line.number and self._open is None:
                self._open, self._open_group = line, line.group
            if line.group == line.number:
                self._tb_head[line.group] = line
                self._tb_frames[line.group] = []
            if line.message.lstrip().startswith('File "'):
                self._tb_frames.setdefault(line.group, []).append(line.message.strip())
            return
        if kind is _K_override:
            expl = explain_override(line.message)
            self._add(f"override:{line.message.strip()[:160]}", lambda: Finding(
                "override", "warning", line.number, expl.title, expl.detail + f"  Log: “{line.message.strip()}”",
                line.timestamp, expl.flag, expl.fix), line.number)
            return
        if kind in (_K_error, _K_oom):
            self._failure(line)
            return
        if kind is _K_ready:
            self._crashed = False
            return  # the analyzer adds the ready finding (it knows time-to-ready)
        if kind is _K_retract:
            self._retraction(line)
            return

    def _failure(self, line: ParsedLine) -> None:
        info = line.info or {}
        exception = info.get("exception", "")
        detail = info.get("detail", line.message)
        if line.group and line.group == line.number:
            # "Scheduler hit an exception: Traceback ..." opens a group; the exception line will name the reason
            self._tb_head[line.group] = line
            self._tb_frames[line.group] = []
            self._open, self._open_group = line, line.group
            return
        if exception and line.group and line.group == self._open_group:
            self._open, self._open_group = None, 0
        if not exception and _HIT_EXCEPTION in line.message:
            # "... hit an exception:" with its traceback on the next lines (or not at all): a crash either way
            self._open, self._open_group = line, 0
            return
        if not exception:
            if "Received sigquit" in line.message:
                self._add("crash:sigquit", lambda: Finding(
                    "crash", "error", line.number, "server process tree torn down: a child process failed",
                    "The main process received SIGQUIT from a scheduler/detokenizer child; the reason is the "
                    "traceback logged just before.", line.timestamp), line.number)
                self._crashed = True
                self.crash_events += 1
            elif line.group:
                return  # part of a traceback chain already explained by its exception line
            else:
                self._add(f"error:{line.message.strip()[:120]}", lambda: Finding(
                    "error", "error", line.number, line.message.strip()[:160], "", line.timestamp), line.number)
            return
        frames = self._tb_frames.get(line.group, []) if line.group else []
        head = self._tb_head.get(line.group) if line.group else None
        if line.kind is not _K_oom and _is_request_error(head.message if head is not None else "", frames):
            self._request_error(line, exception, detail)
            return
        if line.kind is _K_oom:
            expl = explain_oom(line.message)
            kind = "oom"
        else:
            expl = explain_crash(exception, detail, frames)
            kind = "crash"
        key = f"{kind}:{exception}:{detail[:100]}"

        def refresh(f: Finding) -> None:
            f.message = f"{expl.title} — crash loop: {f.count} times" if f.count > 1 else expl.title
            f.data["occurrences"] = f.count

        where = f" (traceback from line {line.group})" if line.group and line.group != line.number else ""
        self._add(key, lambda: Finding(kind, "error", line.number, expl.title, expl.detail + where, line.timestamp,
                                       expl.flag, expl.fix, data={"exception": exception, "detail": detail[:500],
                                                                  "traceback_line": line.group or None}),
                  line.number, refresh)
        self._crashed = True
        self.crash_events += 1

    def _request_error(self, line: ParsedLine, exception: str, detail: str) -> None:
        """A request handler's exception (see :func:`_is_request_error`): a warning that counts its repeats, not a
        crash (the server state is not touched)."""
        title = f"request error: {exception}: {detail.strip()[:120]}".rstrip(": ")

        def refresh(f: Finding) -> None:  # the count is the finding's own (shown as xN)
            f.data["occurrences"] = f.count

        where = f" (traceback from line {line.group})" if line.group and line.group != line.number else ""
        self._add(f"request_error:{exception}", lambda: Finding(
            "request_error", "warning", line.number, title,
            "The traceback runs through the HTTP server's request handling (uvicorn, starlette, fastapi or "
            "Python's socketserver): it ended one request, not the server, so it is not a crash (a server crash "
            "shows its scheduler's traceback or 'Received sigquit'). A client that disconnects in the middle of "
            "a stream (a cancelled benchmark, a closed connection) gives BrokenPipeError or ConnectionResetError; "
            "another exception repeating here is worth reading" + where + ".",
            line.timestamp, data={"exception": exception, "detail": detail[:500],
                                  "traceback_line": line.group or None}), line.number, refresh)

    def startup_unfinished(self, line_number: int, label: str, running_s: float | None,
                           expected_s: float | None, basis: str, when: datetime | None) -> None:
        """The log ends while start-up phase ``label`` runs: ``running_s`` seconds of log time since it began
        (None without timestamps), ``expected_s`` how long it should take at most (``basis`` says from what; None
        when nothing says). A ``stall`` warning when it ran past that, else an ``info`` saying what the log cannot
        tell."""
        if running_s is not None and expected_s is not None and running_s > expected_s:
            self._set("stall", Finding(
                "stall", "warning", line_number,
                f"stall: {label} began and had not ended {running_s:.0f} s later (expected at most "
                f"{expected_s:.0f} s, {basis})",
                "The phase's end line never came. " + _STALL_HINTS.get(label.split(" (")[0], "") +
                "Check the server process (py-spy dump) and nvidia-smi before killing it.", when,
                data={"phase": label, "running_s": running_s, "expected_s": expected_s, "basis": basis}))
            return
        since = f", {running_s:.0f} s after it began" if running_s is not None else ""
        known = (f"expected at most {expected_s:.0f} s ({basis})" if expected_s is not None
                 else "no expected duration is known")
        self._set("stall", Finding(
            "startup_unfinished", "info", line_number,
            f"the log ends during {label}{since}; {known}, so whether it is still running, stalled or was cut "
            "off this log cannot tell", "", when,
            data={"phase": label, "running_s": running_s, "expected_s": expected_s, "basis": basis}))

    def _continues_open(self, line: ParsedLine) -> bool:
        """True when ``line`` belongs to the crash report still waiting for its exception line."""
        if self._open_group and line.group == self._open_group:
            return True
        if not self._open_group and line.kind is _K_traceback and line.group == line.number:
            self._open_group = line.group  # the traceback of a "hit an exception" line printed on its own line
            self._tb_frames.setdefault(line.group, [])
            return True
        return False

    def end_of_input(self) -> None:
        """The log ends here (a file read to its end): a crash report still waiting for its exception line is a
        crash whose reason was cut off."""
        if self._open is not None:
            self._cut_crash(at_end=True)

    def _cut_crash(self, at_end: bool) -> None:
        """A traceback (or a ``... hit an exception`` line) without its exception line: still a crash, with the
        last frame and the component it happened in."""
        head, group = self._open, self._open_group
        self._open, self._open_group = None, 0
        if head is None:
            return
        frames = self._tb_frames.get(group, []) if group else []
        component = traceback_component(frames, head.message)
        where = f" in the {component}" if component else ""
        cut = "the log is cut here" if at_end else "the lines after it belong to something else (an excerpt?)"
        if frames:
            message = f"crash{where}: traceback without its exception line ({cut})"
        else:
            opener = head.message.split(":", 1)[0].strip()[:80]
            message = f"crash{where}: '{opener}' with no traceback frames after it ({cut})"
        last = frames[-1] if frames else None
        explanation = ((f"Last frame: {last}. " if last else "") +
                       "The exception line that names the reason is not in this text, so the reason is unknown here; "
                       "read the full server log from line " + f"{head.number} on.")
        self._add(f"cut:{head.number}", lambda: Finding(
            "crash", "error", head.number, message, explanation, head.timestamp,
            data={"cut": True, "component": component, "last_frame": last, "traceback_line": group or None}),
            head.number)
        self._crashed = True
        self.crash_events += 1

    def _retraction(self, line: ParsedLine) -> None:
        n = (line.info or {}).get("retracted_reqs", 1)
        self._retract_total += n
        ts = line.timestamp
        self._retracts.append((ts, n))
        if ts is None:
            recent = list(self._retracts)[-RETRACT_MIN_IN_WINDOW:]
        else:
            # drop what fell out of the window (oldest first) so each retraction costs O(retractions in window)
            retracts = self._retracts
            while retracts and (retracts[0][0] is None or (ts - retracts[0][0]).total_seconds() > RETRACT_WINDOW_S):
                retracts.popleft()
            recent = [(t, k) for t, k in retracts if t is not None and (ts - t).total_seconds() <= RETRACT_WINDOW_S]
        if len(recent) < RETRACT_MIN_IN_WINDOW:
            return
        rate = sum(k for _, k in recent)
        message = f"KV pool full: {len(recent)} retractions ({rate} requests) in the last {RETRACT_WINDOW_S:.0f} s"

        def refresh(f: Finding) -> None:
            f.message = message
            f.data = {"total_retracted": self._retract_total, "in_window": len(recent)}

        self._add("retractions", lambda: Finding(
            "retractions", "warning", line.number, message,
            "Requests are being pushed back to the queue and re-prefilled because the KV pool ran full; occasional "
            "retractions are fine, frequent ones waste compute (SGLang tuning docs). Raise "
            "--schedule-conservativeness (e.g. 1.3) or --mem-fraction-static, or lower --max-running-requests.",
            line.timestamp, "--schedule-conservativeness", "--schedule-conservativeness 1.3",
            data={"total_retracted": self._retract_total, "in_window": len(recent)}), line.number, refresh)

    # ---- decode samples ------------------------------------------------------------------------------------
    def after_decode(self, line: ParsedLine, sample: DecodeSample) -> None:
        """:meth:`observe` for a ``Decode batch`` line and its sample (the analyzer's short path)."""
        if self._first_ts is None and line.timestamp is not None:
            self._first_ts = line.timestamp
        self._after_sample(line, sample)

    def _after_sample(self, line: ParsedLine, sample: DecodeSample) -> None:
        m = self.metrics
        rec = sample.record
        if rec.engine == "vllm":
            self._vllm(line, sample)
            return
        self._request_cap(line)
        if not sample.trusted:
            self._untrusted_at = self._untrusted_last = (line, sample)
            if m.untrusted_total <= 32 or m.untrusted_total % DERIVED_EVERY == 0:
                self._refresh_untrusted()
        if rec.cuda_graph is False:
            self._no_graph_at = (line, sample)
            if m.no_graph_samples <= 32 or m.no_graph_samples % DERIVED_EVERY == 0:
                self._refresh_no_graph()
        # acceptance and the depth check look at every kept sample: exact for the first samples, then refreshed
        # every DERIVED_EVERY samples (and by refresh_derived) so a busy log stays O(1) per line
        self._pending = (line, sample)
        if m.total_samples <= 32 or m.total_samples % DERIVED_EVERY == 0:  # (readers call refresh_derived too)
            self.refresh_derived()

    def _refresh_untrusted(self) -> None:
        at, self._untrusted_at = self._untrusted_at, None
        m = self.metrics
        if at is None or not m.untrusted_total:  # none, or only in a previous run of this log (LiveMetrics._new_run)
            return
        line, sample = at
        text = ", ".join(f"{n}× {r}" for r, n in m.untrusted_reasons.most_common())
        # counted over the kept samples, the ones the metrics and the acceptance finding are computed from
        kept = len(m.samples)
        excluded = m.untrusted_kept
        scope = f" (the last {kept} of {m.total_samples})" if m.total_samples > kept else ""
        self._set("untrusted_samples", Finding(
            "untrusted_samples", "info", m.untrusted_lines[0] if m.untrusted_total <= 50 else line.number,
            f"{excluded} of {kept} decode samples{scope} not trusted for trends",
            ("Excluded from means and trends" if excluded < kept else
             "No sample is steady state, so the means are over all of them and no trend or verdict is drawn")
            + f" ({text}). A Decode batch line averages over the last "
            f"{m.decode_log_interval} decode steps, so a window with idle time or a long prefill does not show "
            "steady-state acceptance or throughput.", sample.timestamp,
            data={"lines": list(m.untrusted_lines)}))

    def _refresh_no_graph(self) -> None:
        at, self._no_graph_at = self._no_graph_at, None
        if at is None:
            return
        line, sample = at
        self._set("no_cuda_graph", Finding(
            "no_cuda_graph", "warning", line.number,
            f"{self.metrics.no_graph_samples} decode batch(es) ran without CUDA graphs",
            "cuda graph: False means the batch was run eagerly, usually because it is larger than the captured "
            "sizes (--cuda-graph-max-bs); speculative decoding is much slower without graphs.",
            sample.timestamp, "--cuda-graph-max-bs", "raise --cuda-graph-max-bs to the highest concurrency"))

    def refresh_derived(self) -> None:
        """Recompute the sample-derived findings (untrusted samples, no CUDA graph, acceptance, depth check) from
        the kept samples; called every DERIVED_EVERY decode samples and whenever the findings are read."""
        if self._untrusted_at is None and self._untrusted_last is not None:
            # the "N of M samples" count must follow the trusted samples that came after the last untrusted one
            self._untrusted_at = self._untrusted_last
        self._refresh_untrusted()
        self._refresh_no_graph()
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        line, sample = pending
        self._acceptance(line, sample)
        cons = self.metrics.consistency()
        if cons is not None:
            self._set("depth_check", Finding(
                "depth_check", "warning" if cons.matches is False else "info", line.number, cons.describe(),
                "Solving accept rate against accept len for every sample gives the same integer: this tells which "
                "depth the server really runs (and which definition of accept rate this build prints).",
                sample.timestamp, "--speculative-num-draft-tokens",
                data={"formula": cons.formula, "n": cons.n, "samples": cons.samples, "configured": cons.configured}))

    def _acceptance(self, line: ParsedLine, sample: DecodeSample) -> None:
        m = self.metrics
        mean, count = m.mean("accept_len", trusted_only=True)
        basis = "steady-state"
        if not count:
            mean, count = m.mean("accept_len")
            basis = "all (none steady-state)"
        if not count or mean is None:
            return
        trusted = basis == "steady-state"
        if not trusted and not m.above_max_samples:
            # every sample is excluded from trends (idle or prefill in its window): their mean is shown, never judged
            self._set("acceptance", Finding(
                "acceptance", "info", line.number,
                f"accept length {mean:.2f} (mean of {count} samples, none steady-state): not judged",
                "Every decode sample here is excluded from trends (see the samples finding): its window includes "
                "idle time or prefill, so its accept length and throughput are not steady state. Judge acceptance "
                "on steady decode lines (a benchmark run of a few minutes).", sample.timestamp,
                data={"mean_accept_len": round(mean, 3), "samples": count, "basis": basis, "judged": False}))
            return
        cons = m.consistency()
        depth = m.num_draft_tokens or (cons.n if cons and cons.formula == "accept_len/N" else None)
        max_len = m.max_accept_len or depth  # the configuration of this run: the kept samples are all of it
        of = f" of a possible {max_len}" if max_len else ""
        rate, n_rates = m.mean("accept_rate", trusted_only=trusted)
        gen, n_gen = m.mean("gen_throughput", trusted_only=trusted)
        data = {"mean_accept_len": round(mean, 3), "samples": count, "basis": basis, "max_accept_len": max_len,
                "draft_tokens": depth}
        if n_rates:
            data["mean_accept_rate"] = round(rate or 0.0, 4)
        if n_gen:
            data["mean_gen_throughput"] = round(gen or 0.0, 2)
        extra = mean - 1
        if m.above_max_samples and m.above_max_peak is not None:
            peak, peak_max, peak_line = m.above_max_peak
            self._set("acceptance", Finding(
                "accept_above_max", "error", peak_line,
                f"accept length {peak:.2f} is above the possible {peak_max} of the configuration in the log "
                f"({m.above_max_samples} of {m.total_samples} decode samples): the server is not running what you "
                "think",
                f"A verify step accepts at most speculative_num_steps draft tokens plus the bonus token, so this "
                f"log's server_args allow an accept length of {peak_max} at most. A higher figure means the server "
                "that wrote these lines runs another configuration: another server writing to this log, a command "
                "changed after start, or a build that reads the flags otherwise. Check the process's command line "
                "and /server_info before trusting any figure here.", sample.timestamp,
                "--speculative-num-steps", data={**data, "above_max_samples": m.above_max_samples,
                                                 "peak_accept_len": peak}))
            return
        if mean <= ALMOST_NEVER_ACCEPTED:
            self._set("acceptance", Finding(
                "low_acceptance", "error" if count >= LOW_ACCEPT_MIN_SAMPLES else "warning", line.number,
                f"draft almost never accepted: accept length {mean:.2f}{of}",
                "Accept length counts the bonus token, so 1.0 means no draft token was accepted: this is not a depth "
                "problem. Check the draft/target pairing (draft trained for this exact target and chat template, "
                "multimodal inputs reaching the draft, EAGLE3 hidden-state layers).", sample.timestamp,
                "--speculative-draft-model-path", "use a draft trained for this target", data=data))
            return
        if max_len and mean / max_len < 0.25:
            why = ("this server is one configuration of the depth sweep running now: a deep configuration accepts a "
                   "small share of its draft tokens, and the sweep's table compares the depths."
                   if self.in_depth_sweep else
                   "the draft model is likely mismatched or the depth far too deep; try a smaller "
                   "--speculative-num-steps / --speculative-num-draft-tokens, or check the draft/target pairing.")
            self._set("acceptance", Finding(
                "low_acceptance", "warning", line.number,
                f"low acceptance: accept length {mean:.2f}{of} draft tokens",
                f"Only ~{extra:.1f} extra tokens per verify step while {max_len} are verified: {why}", sample.timestamp,
                "--speculative-num-draft-tokens", "lower the depth (e.g. 3/1/4) and compare", data=data))
            return
        quality = "modest" if (max_len and mean / max_len < 0.6) or mean < 2.5 else "good"
        rate_text = f", accept rate {data['mean_accept_rate']:.3f}" if n_rates else ""
        gen_text = f", ~{data['mean_gen_throughput']:.0f} tok/s" if n_gen else ""
        then = ("; this server is one configuration of the depth sweep running now: its table compares them."
                if self.in_depth_sweep else ", then try a depth sweep.")
        self._set("acceptance", Finding(
            "acceptance", "info", line.number,
            f"acceptance {quality}: mean accept length {mean:.2f}{of}{rate_text}{gen_text} ({basis}, {count} samples)",
            f"~{extra:.1f} extra tokens per verify step. " + (
                "The speed-up this draft can give is limited at this acceptance; check chat template / thinking mode "
                f"/ target revision of the draft{then}" if quality == "modest" else
                "The draft predicts the target well."), sample.timestamp, data=data))

    def _vllm(self, line: ParsedLine, sample: DecodeSample) -> None:
        rec = sample.record
        key = f"vllm:{line.ranks}"
        if rec.accepted_tokens == 0 and (rec.drafted_tokens or 0) > 0:
            zero = [s for s in self.metrics.samples if s.record.engine == "vllm" and s.record.accepted_tokens == 0]

            def refresh(f: Finding) -> None:
                f.message = (f"draft never accepted ({line.ranks or 'vLLM'}): 0 of {rec.drafted_tokens} drafted "
                             f"tokens in {len(zero)} windows")

            self._add(key + ":zero", lambda: Finding(
                "low_acceptance", "error", line.number,
                f"draft never accepted ({line.ranks or 'vLLM'}): 0 of {rec.drafted_tokens} drafted tokens",
                "vLLM's mean acceptance length includes the bonus token, so 1.00 means nothing was accepted and "
                "speculation is pure overhead here. If this happens only with prefill/decode disaggregation, the "
                "draft state does not reach the decode instance; also check the method matches the checkpoint type.",
                line.timestamp, data={"engine": "vllm"}), line.number, refresh)
        elif rec.accept_len is not None and rec.accept_len > 1.15:
            k = len(rec.per_position_rate) or None
            self._set(key + ":ok", Finding(
                "acceptance", "info", line.number,
                f"vLLM {line.ranks or ''} mean acceptance length {rec.accept_len:.2f}" + (f" with k = {k}" if k else "")
                + ": usable", "vLLM's mean acceptance length includes the bonus token.", line.timestamp,
                data={"engine": "vllm", "accept_len": rec.accept_len}))

    def _request_cap(self, line: ParsedLine) -> None:
        states = self.metrics.batch_state
        if len(states) < 4 or states[-1][1] == 0:
            return
        self._cap_calls += 1
        if "request_cap" in self.by_key and self._cap_calls % 32:
            return  # already raised: refresh its figures now and then
        self._request_cap_now(line)

    def _request_cap_now(self, line: ParsedLine) -> None:
        """:meth:`_request_cap` past its cheap checks (at least 4 batch states, the last with a queue, and the
        finding not raised yet or due for a refresh)."""
        states = self.metrics.batch_state
        if all(q > 0 for _, q, _ in states) and all(u < 0.5 for _, _, u in states):
            running = [r for r, _, _ in states]
            queued = [q for _, q, _ in states]
            usage = max(u for _, _, u in states)
            self._set("request_cap", Finding(
                "request_cap", "warning", line.number,
                f"requests wait (queue {min(queued)}-{max(queued)}) while KV usage is {usage:.0%} and running stays "
                f"at {min(running)}-{max(running)}: capped by a request limit, not by memory",
                "With speculation on, SGLang lowers max_running_requests by default (\"Max running requests is reset "
                "to 48 for speculative decoding\"). Set --max-running-requests explicitly if the GPU has room.",
                line.timestamp, "--max-running-requests", "set --max-running-requests explicitly",
                data={"running_max": max(running), "queued_max": max(queued), "token_usage_max": usage}))
