"""Start-up progress of an SGLang server from its log: phases with elapsed times, capture progress and ETA.

Phases in order (SGLang's start-up log lines, 0.4.x to 2026 releases): ``args`` (ServerArgs built, ports) → ``dist``
(NCCL / torch.distributed init: ``Init torch distributed begin.`` / ``Init torch distributed ends.``, from
``ModelRunner.init_torch_distributed`` in ``python/sglang/srt/model_executor/model_runner.py``; releases before the
``ends`` line end it at ``Load weight begin``) → ``weights`` (target and draft
``Load weight begin/end``) → ``kv_cache`` (``KV Cache is allocated``) → ``graph_target`` / ``graph_draft`` (CUDA graph
capture, every spelling: ``Capture cuda graph begin/end``, ``Capture draft cuda graph end``, 2026 ``Capture target
verify CUDA graph begin``…) → ``warmup`` (until the ready line) → ``ready``.

Several ranks: a phase ends when its slowest rank ends (the latest end timestamp; for captures the largest reported
``Time elapsed``/``elapsed=``, summed over the 2026 stages of one rank). Readiness is the ready line itself.

ETA during capture: from the ``Capturing batches … i/n [elapsed<eta]`` tqdm lines when present; otherwise from the
previous start of the same configuration on the same host, remembered in ``startup_history.json`` under
the specdash state dir (see :class:`StartupHistory`).
"""

from __future__ import annotations

import hashlib
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from specdash.logs.parser import LineKind, ParsedLine

# LineKind members as module constants (an Enum attribute lookup costs ~10x a global in CPython 3.11)
_K_capacity = LineKind.capacity
_K_decode = LineKind.decode
_K_graph_begin = LineKind.graph_begin
_K_graph_end = LineKind.graph_end
_K_graph_progress = LineKind.graph_progress
_K_http = LineKind.http
_K_kv_cache = LineKind.kv_cache
_K_override = LineKind.override
_K_plain = LineKind.plain
_K_prefill = LineKind.prefill
_K_ready = LineKind.ready
_K_server_args = LineKind.server_args
_K_timings = LineKind.timings
_K_weights_begin = LineKind.weights_begin
_K_weights_end = LineKind.weights_end
_K_dist_begin = LineKind.dist_begin
_K_dist_end = LineKind.dist_end

PHASES: tuple[tuple[str, str], ...] = (
    ("args", "args"),
    ("dist", "NCCL init"),
    ("weights", "weights"),
    ("kv_cache", "KV cache"),
    ("graph_target", "CUDA graph (target)"),
    ("graph_draft", "CUDA graph (draft)"),
    ("warmup", "warmup"),
    ("ready", "ready"),
)
_ORDER = {name: i for i, (name, _) in enumerate(PHASES)}


class Phase:
    """One start-up phase: ``begin``/``end`` timestamps (server clock), ``reported_s`` (elapsed the server printed,
    slowest rank), ``ranks`` seen, ``mem`` figures (GB) of its last line."""

    __slots__ = ("name", "label", "begin", "end", "reported_s", "ranks", "mem", "_rank_sum")

    def __init__(self, name: str, label: str) -> None:
        self.name, self.label = name, label
        self.begin: datetime | None = None
        self.end: datetime | None = None
        self.reported_s: float | None = None
        self.ranks: set[str] = set()
        self.mem: dict[str, float] = {}
        self._rank_sum: dict[str, float] = {}

    @property
    def state(self) -> str:
        """``pending``, ``running`` or ``done``."""
        if self.end is not None or self.reported_s is not None:
            return "done"
        return "running" if self.begin is not None else "pending"

    @property
    def elapsed_s(self) -> float | None:
        """Reported elapsed (slowest rank) when the server printed one, else end − begin from the timestamps."""
        if self.reported_s is not None:
            return self.reported_s
        if self.begin is not None and self.end is not None:
            return max(0.0, (self.end - self.begin).total_seconds())
        return None

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly view."""
        return {
            "phase": self.name,
            "label": self.label,
            "state": self.state,
            "begin": self.begin.isoformat(sep=" ") if self.begin else None,
            "end": self.end.isoformat(sep=" ") if self.end else None,
            "elapsed_s": None if self.elapsed_s is None else round(self.elapsed_s, 2),
            "ranks": sorted(self.ranks),
            **{k: v for k, v in self.mem.items()},
        }


class StartupHistory:
    """Phase durations of previous starts, per host and configuration, in a small JSON file.

    ``path`` defaults to ``<user_state_dir("specdash")>/startup_history.json``. Read errors give an empty history;
    write errors are ignored (the ETA is a convenience)."""

    def __init__(self, path: Path | str | None = None, *, read_only: bool = False) -> None:
        if path is None:
            from specdash.paths import state_dir

            path = Path(state_dir()) / "startup_history.json"
        self.path = Path(path)
        self.read_only = read_only  # a replay reads ETAs but never records the replayed start-up as a new one

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}

    def get(self, key: str) -> dict[str, float] | None:
        """Durations (s) per phase of the last start recorded under ``key``."""
        entry = self._load().get(key)
        return entry.get("phases") if isinstance(entry, dict) else None

    def put(self, key: str, phases: dict[str, float]) -> None:
        """Remember ``phases`` (phase -> seconds) under ``key`` (atomic replace)."""
        if self.read_only:
            return
        data = self._load()
        data[key] = {"phases": phases, "saved": datetime.now().isoformat(timespec="seconds")}
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass


def config_key(host: str, server_args: dict[str, Any]) -> str:
    """Key for :class:`StartupHistory`: host + the settings that change start-up time (model, parallelism,
    speculative depth, CUDA-graph batch sizes, memory fraction)."""
    fields = ("model_path", "tp_size", "dp_size", "ep_size", "speculative_algorithm", "speculative_draft_model_path",
              "speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens", "cuda_graph_max_bs",
              "disable_cuda_graph", "mem_fraction_static")
    text = json.dumps([host] + [server_args.get(f) for f in fields], default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class StartupTracker:
    """Feed every parsed line (:meth:`observe`). Exposes :attr:`phases` (name -> :class:`Phase`), :attr:`current`
    (the running phase or None), :attr:`capture` (latest tqdm figures), :meth:`eta_s`, :attr:`time_to_ready_s`,
    :attr:`starts` (how many starts the log shows) and :meth:`timeline`."""

    def __init__(self, history: StartupHistory | None = None, host: str = "") -> None:
        self.history = history
        self.host = host
        self.starts = 0
        self._reset()

    def _reset(self) -> None:
        self.phases: dict[str, Phase] = {name: Phase(name, label) for name, label in PHASES}
        self.started_at: datetime | None = None
        self.last_ts: datetime | None = None
        self.ready_at: datetime | None = None
        self.capture: dict[str, Any] | None = None
        self.server_args: dict[str, Any] = {}
        self.engine_timings: dict[str, float] = {}
        self._previous: dict[str, float] | None = None
        self._active = False
        self._ended = False  # the last start ended without a ready line (start_ended)

    @property
    def active(self) -> bool:
        """True once a start was seen (start-up lines), until it is ready."""
        return self._active

    @property
    def current(self) -> str | None:
        """The phase in progress (the latest started, not yet done), or None."""
        if not self._active:
            return None
        running = [p for p in self.phases.values() if p.state == "running"]
        if running:
            return max(running, key=lambda p: _ORDER[p.name]).name
        done = [p for p in self.phases.values() if p.state == "done"]
        if done:
            last = max(done, key=lambda p: _ORDER[p.name]).name
            following = {"args": "weights", "dist": "weights", "weights": "kv_cache", "kv_cache": "graph_target",
                         "graph_target": "warmup", "graph_draft": "warmup", "warmup": "ready"}
            return following.get(last)
        return "args"

    @property
    def time_to_ready_s(self) -> float | None:
        """Seconds from the first line of this start to the ready line (None before ready)."""
        if self.ready_at is None or self.started_at is None:
            return None
        return (self.ready_at - self.started_at).total_seconds()

    def _begin(self, name: str, ts: datetime | None, rank: str = "") -> Phase:
        phase = self.phases[name]
        if phase.begin is None:
            phase.begin = ts
            # a later phase that had begun (e.g. warmup guessed from a prefill) was premature
            for other in self.phases.values():
                if _ORDER[other.name] > _ORDER[name] and other.state == "running":
                    other.begin = None
        if rank:
            phase.ranks.add(rank)
        # an earlier phase that never printed an end ends where this one begins
        for other in self.phases.values():
            if _ORDER[other.name] < _ORDER[name] and other.begin is not None and other.end is None \
                    and other.reported_s is None and other.name not in ("graph_draft",):
                other.end = ts
        return phase

    def _new_start(self, ts: datetime | None, args: bool = False) -> None:
        if self.ready_at is not None or self._ended:
            self._reset()  # a ready (or failed) server logging start-up lines again: a restart
        if not self._active:
            self.starts += 1
            self._active = True
            self.started_at = ts
            if args:
                self.phases["args"].begin = ts

    def observe(self, line: ParsedLine) -> bool:
        """Update from one line; True when the timeline changed."""
        kind = line.kind
        ts = line.timestamp
        if ts is not None:
            self.last_ts = ts
        if kind in (_K_decode, _K_prefill, _K_plain, _K_http):
            if kind is _K_prefill and self._active and self.ready_at is None:
                self._begin("warmup", ts)
            return False
        info = line.info or {}
        rank = line.ranks
        if kind is _K_server_args:
            if self.ready_at is not None or self.phases["weights"].begin is not None:
                self._reset()
            self._new_start(ts, args=True)
            if self.started_at is None:
                self.started_at = ts
                self.phases["args"].begin = ts
            self.server_args = dict(info)
            if self.history is not None:
                self._previous = self.history.get(config_key(self.host, self.server_args))
            return True
        if kind is _K_override and not self._active and ts is not None and self.ready_at is None:
            self._new_start(ts, args=True)
            return True
        if kind is _K_dist_begin or kind is _K_dist_end:
            if self._active and self.phases["weights"].begin is not None:
                return False  # the draft worker's model runner, after the target's weights: not the NCCL init
            if self.ready_at is not None and kind is _K_dist_begin:
                self._reset()
        if kind is _K_dist_begin:
            self._new_start(ts)
            self._begin("dist", ts, rank)
            return True
        if kind is _K_dist_end:
            self._new_start(ts)
            phase = self._begin("dist", ts, rank)
            phase.end = _later(phase.end, ts)
            if "elapsed_s" in info:
                phase.reported_s = max(phase.reported_s or 0.0, float(info["elapsed_s"]))
            phase.mem = {k: v for k, v in info.items() if k.endswith("_gb")}
            return True
        if kind is _K_weights_begin:
            if self.ready_at is not None:
                self._reset()
            self._new_start(ts)
            self._begin("weights", ts, rank)
            return True
        if kind is _K_weights_end:
            self._new_start(ts)
            phase = self._begin("weights", ts, rank)
            phase.end = _later(phase.end, ts)
            phase.mem = {k: v for k, v in info.items() if k.endswith("_gb")}
            return True
        if kind is _K_kv_cache:
            self._new_start(ts)
            weights = self.phases["weights"]
            phase = self._begin("kv_cache", weights.end or ts, rank)
            phase.end = _later(phase.end, ts)
            phase.mem = {k: v for k, v in info.items() if k.endswith("_gb")}
            if "tokens" in info:
                phase.mem["kv_tokens"] = info["tokens"]
            return True
        if kind is _K_graph_begin:
            self._new_start(ts)
            name = "graph_draft" if info.get("which") == "draft" else "graph_target"
            self._begin(name, ts, rank)
            self.capture = None
            return True
        if kind is _K_graph_progress:
            self.capture = dict(info)
            return True
        if kind is _K_graph_end:
            self._new_start(ts)
            name = "graph_draft" if info.get("which") == "draft" else "graph_target"
            phase = self.phases[name]
            if phase.begin is None and ts is not None and "elapsed_s" in info:
                from datetime import timedelta

                phase.begin = ts - timedelta(seconds=info["elapsed_s"])
            self._begin(name, phase.begin or ts, rank)
            phase.end = _later(phase.end, ts)
            if "elapsed_s" in info:
                key = rank or "-"
                phase._rank_sum[key] = phase._rank_sum.get(key, 0.0) + float(info["elapsed_s"])
                phase.reported_s = max(phase._rank_sum.values())
            phase.mem = {k: v for k, v in info.items() if k.endswith("_gb")}
            self.capture = None
            if self.phases["warmup"].begin is None or (ts and self.phases["warmup"].begin < ts):
                self.phases["warmup"].begin = ts
            return True
        if kind is _K_timings:
            self.engine_timings = dict(info)
            return True
        if kind is _K_capacity:
            self._new_start(ts)
            if self.phases["warmup"].begin is None:
                self._begin("warmup", ts)
            return True
        if kind is _K_ready:
            self._new_start(ts)
            warmup = self._begin("warmup", self.phases["warmup"].begin or ts)
            warmup.end = ts
            ready = self.phases["ready"]
            ready.begin = ready.end = ts
            self.ready_at = ts
            self._active = False
            self.capture = None
            self._remember()
            return True
        return False

    def serving_without_ready(self) -> None:
        """Decode batches arrive but no ready line was seen (the log was joined mid-way): the start is over."""
        self._active = False

    def start_ended(self) -> None:
        """The start ended without a ready line (a crash in the log, or the server's processes are gone): no phase
        is running any more, there is no capture progress or ETA to show; the phases seen stay in the timeline and
        the next start-up line begins a new start."""
        if not self._active:
            return
        self._active = False
        self.capture = None
        self._ended = True

    def _remember(self) -> None:
        if self.history is None or not self.server_args:
            return
        durations = {p.name: round(p.elapsed_s, 2) for p in self.phases.values()
                     if p.elapsed_s is not None and p.name != "ready"}
        if durations:
            self.history.put(config_key(self.host, self.server_args), durations)

    def running_s(self, name: str) -> float | None:
        """Seconds phase ``name`` has been running: log time since it began, or tqdm's own elapsed time of a
        capture when that is later (the bar updates in place between log lines). None before it began."""
        phase = self.phases[name]
        elapsed = None
        if phase.begin is not None and self.last_ts is not None:
            elapsed = (self.last_ts - phase.begin).total_seconds()
        if name == self.current and self.capture and self.capture.get("elapsed_s") is not None:
            elapsed = max(elapsed or 0.0, float(self.capture["elapsed_s"]))
        return elapsed

    def observe_capture_progress(self, info: dict[str, Any]) -> bool:
        """Progress of the running capture read from a line still being written (see
        :meth:`specdash.logs.parser.LogParser.capture_progress`); True when it changed what :meth:`progress` and
        :meth:`eta_s` say. Ignored when no capture phase is running."""
        if self.current not in ("graph_target", "graph_draft") or info == self.capture:
            return False
        self.capture = dict(info)
        return True

    def previous_duration_s(self, phase: str) -> float | None:
        """Duration of ``phase`` at the previous start of the same configuration (None when unknown)."""
        return (self._previous or {}).get(phase)

    def progress(self) -> tuple[float, str] | None:
        """(fraction 0..1, source) of the running capture: ``"tqdm"`` from progress lines, ``"history"`` from the
        previous start; None when neither is available."""
        cur = self.current
        if cur not in ("graph_target", "graph_draft"):
            return None
        if self.capture and self.capture.get("total"):
            return min(1.0, self.capture["done"] / self.capture["total"]), "tqdm"
        prev = self.previous_duration_s(cur)
        phase = self.phases[cur]
        if prev and phase.begin and self.last_ts:
            return min(0.99, (self.last_ts - phase.begin).total_seconds() / prev), "history"
        return None

    def eta_s(self, extra_s: float = 0.0) -> float | None:
        """Seconds left in the running capture phase: tqdm's own ETA (or elapsed × remaining/done) when progress
        lines exist, else previous duration − elapsed. ``extra_s``: wall time since the last line arrived."""
        cur = self.current
        if cur not in ("graph_target", "graph_draft"):
            return None
        cap = self.capture
        if cap and cap.get("total"):
            if cap.get("eta_s") is not None:
                return max(0.0, cap["eta_s"] - extra_s)
            if cap.get("done") and cap.get("elapsed_s") is not None:
                return max(0.0, cap["elapsed_s"] * (cap["total"] - cap["done"]) / cap["done"] - extra_s)
        prev = self.previous_duration_s(cur)
        phase = self.phases[cur]
        if prev and phase.begin and self.last_ts:
            return max(0.0, prev - (self.last_ts - phase.begin).total_seconds() - extra_s)
        return None

    def timeline(self) -> dict[str, Any]:
        """JSON-friendly summary: ``phases`` (seen ones, in order), ``current``, ``time_to_ready_s``, ``starts``,
        ``engine_timings``."""
        return {
            "phases": [p.as_dict() for p in self.phases.values() if p.state != "pending"],
            "current": self.current,
            "ready": self.ready_at is not None,
            "time_to_ready_s": self.time_to_ready_s,
            "starts": self.starts,
            "engine_timings": self.engine_timings,
        }


def _later(a: datetime | None, b: datetime | None) -> datetime | None:
    if a is None:
        return b
    if b is None:
        return a
    return max(a, b)
