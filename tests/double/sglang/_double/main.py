"""The double's launcher: parse flags, play the scenario's start-up phases, serve, shut down or crash.

Process layout (as SGLang): this process (tokenizer + HTTP) and children ``sglang::scheduler_TP<r>`` (one per
tensor-parallel rank, holding "GPU memory") and ``sglang::detokenizer``. SIGTERM/SIGINT: children are terminated
and their memory released, exit 0. A scripted crash prints its text and exits with its code; with
``orphan_children`` the children are left running (reparented, still holding memory), as real crashes leave them.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

from sglang._double import gpu_state
from sglang._double.args import parse_args
from sglang._double.engine import Engine
from sglang._double.http_server import DoubleState, serve
from sglang._double.logfmt import Log, ts
from sglang._double.scenario import load_scenario
from sglang._double.workers import spawn_worker

_GB = 1024.0  # MiB per GB in SGLang's "avail mem=... GB" figures (it divides bytes by 1 << 30)


def _default_crash_text(phase: str) -> str:
    if phase == "args":
        return (
            "Traceback (most recent call last):\n"
            '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
            '  File "/sgl-workspace/sglang/python/sglang/srt/server_args.py", line 612, in __post_init__\n'
            "    self._handle_speculative_decoding()\n"
            "AssertionError"
        )
    return (
        "[{ts}{prefix}] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2702, in run_scheduler_process\n'
        "    scheduler = Scheduler(\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.19 GiB of which 1.13 GiB is free.\n"
        "[{ts}] Received sigquit from a child process. It usually means the child failed."
    )


class Launcher:
    def __init__(self, scenario: dict, args) -> None:
        self.scenario, self.args = scenario, args
        self.log = Log(scenario["era"], args.tp_size, args.dp_size)
        self.stop_event = threading.Event()
        self.workers: list = []
        self.schedulers: list = []  # (rank, Popen)
        self.used_mib = 0  # per scheduler rank
        algo = args.speculative_algorithm
        self.speculative = bool(algo)
        self.has_draft_model = bool(algo) and algo != "NGRAM"
        self.crash = scenario.get("crash") or None
        self.http = None
        self.engine: Engine | None = None
        self.rewrites = self._post_init_rewrites()

    # -- helpers --------------------------------------------------------------------------------
    def _post_init_rewrites(self) -> dict[str, object]:
        """The one ServerArgs rewrite the double computes rather than scripts, as SGLang does from 0.4.10 on
        (``python/sglang/srt/server_args.py``, the EAGLE block of ``__post_init__`` / ``_handle_speculative_decoding``):
        with ``speculative_eagle_topk == 1`` and ``speculative_num_draft_tokens != speculative_num_steps + 1`` it
        logs ``speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk ==
        1`` and sets the draft tokens to steps + 1. Not in era 0.4.5 (the rule came later), not for NGRAM, and a
        value the scenario scripts under ``server_args`` still wins."""
        args = self.args
        algo = str(getattr(args, "speculative_algorithm", None) or "").upper()
        if self.scenario["era"] == "0.4.5" or algo not in ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE"):
            return {}
        steps, topk = getattr(args, "speculative_num_steps", None), getattr(args, "speculative_eagle_topk", None)
        tokens = getattr(args, "speculative_num_draft_tokens", None)
        if topk == 1 and isinstance(steps, int) and tokens != steps + 1:
            return {"speculative_num_draft_tokens": steps + 1}
        return {}

    def avail_gb(self) -> float:
        return self.scenario["gpu"]["total_gb"] - self.used_mib / _GB

    def add_memory(self, mib: float) -> None:
        self.used_mib += int(mib)
        for rank, proc in self.schedulers:
            gpu_state.set_process_memory(proc.pid, self.args.base_gpu_id + rank, self.used_mib)

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``; raises _Stop when SIGTERM/SIGINT arrived."""
        if self.stop_event.wait(max(0.0, seconds)):
            raise _Stop()

    def phase_time(self, phase: str) -> float:
        return float(self.scenario["phases_s"].get(phase, 0.0))

    def maybe_crash(self, phase: str) -> None:
        """Crash now when the scenario says so for ``phase`` (after ``after_s`` of it)."""
        if not self.crash or self.crash.get("phase") != phase:
            return
        self.wait(float(self.crash.get("after_s", 0.0)))
        text = self.crash.get("text") or _default_crash_text(phase)
        prefix = self.log.prefix(0)
        for line in str(text).rstrip("\n").split("\n"):
            self.log.bare(line.replace("{ts}", ts()).replace("{prefix}", prefix))
        code = int(self.crash.get("exit_code", 1))
        if not self.crash.get("orphan_children"):
            self.terminate_workers()
        os._exit(code)

    def terminate_workers(self) -> None:
        for proc in self.workers:
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGTERM if not self._ignore_sigterm() else signal.SIGKILL)
                except ProcessLookupError:
                    pass
        deadline = time.monotonic() + 3
        for proc in self.workers:
            try:
                proc.wait(max(0.05, deadline - time.monotonic()))
            except Exception:
                proc.kill()
                proc.wait()
        gpu_state.remove_processes([p.pid for p in self.workers])

    def _ignore_sigterm(self) -> bool:
        return bool(self.scenario["shutdown"].get("ignore_sigterm"))

    # -- the run --------------------------------------------------------------------------------
    def run(self) -> int:
        try:
            self.startup()
            self.maybe_crash("serving")
            while not self.stop_event.wait(0.1):
                pass
            raise _Stop()
        except _Stop:
            return self.shutdown()

    def startup(self) -> None:
        sc, args, log = self.scenario, self.args, self.log
        adjusted = "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"
        for warning in sc["warnings"] or []:
            # SGLang prints its speculative warnings (overlap scheduler off, draft tokens adjusted) only inside the
            # speculative block of ServerArgs: a launch without --speculative-algorithm (a sweep's baseline) has none.
            # The draft-tokens one follows the launch command (below), never the script: a scenario that scripts
            # it would say "adjusted" to a command SGLang leaves alone (steps 7, draft tokens 8)
            if str(warning) != adjusted and (self.speculative or "speculative" not in str(warning).lower()):
                log.warning(str(warning))
        if self.rewrites:
            log.warning(adjusted)
        self.wait(self.phase_time("args"))
        self.maybe_crash("args")
        log.server_args(self.server_args_fields())

        orphan = bool(self.crash and self.crash.get("orphan_children"))
        ignore = self._ignore_sigterm()
        for rank in range(args.tp_size):
            # SGLang's titles: sglang::scheduler_TP0, or with DP attention / EP e.g. sglang::scheduler_DP0_TP0_EP0
            title = "sglang::scheduler"
            if args.dp_size > 1:
                title += f"_DP{rank * args.dp_size // args.tp_size}"
            title += f"_TP{rank}"
            if args.ep_size > 1:
                title += f"_EP{rank}"
            proc = spawn_worker(title, orphan_on_parent_death=orphan, ignore_sigterm=ignore)
            self.workers.append(proc)
            self.schedulers.append((rank, proc))
        self.workers.append(spawn_worker("sglang::detokenizer", orphan_on_parent_death=orphan, ignore_sigterm=ignore))

        gpu = sc["gpu"]
        ranks = range(args.tp_size)
        # target weights
        for rank in ranks:
            log.load_weight_begin(self.avail_gb(), rank)
        self.add_memory(gpu["weights_mib"] * 0.3)
        self.wait(self.phase_time("weights"))
        self.maybe_crash("weights")
        self.add_memory(gpu["weights_mib"] - int(gpu["weights_mib"] * 0.3))
        log.load_weight_end(sc["architecture"], sc["dtype"], self.avail_gb(), gpu["weights_mib"] / _GB,
                            self.phase_time("weights"))
        if self.has_draft_model:
            log.load_weight_begin(self.avail_gb())
            self.wait(self.phase_time("draft_weights"))
            self.maybe_crash("draft_weights")
            self.add_memory(gpu["draft_weights_mib"])
            log.load_weight_end(sc["draft_architecture"], sc["dtype"], self.avail_gb(),
                                gpu["draft_weights_mib"] / _GB, self.phase_time("draft_weights"))
        # KV cache
        self.wait(self.phase_time("kv_cache"))
        self.maybe_crash("kv_cache")
        self.add_memory(gpu["kv_cache_mib"])
        log.kv_cache(sc["capacity"]["max_total_num_tokens"], gpu["kv_cache_mib"] / _GB, self.avail_gb())
        # CUDA graphs
        if not args.disable_cuda_graph:
            target = "target verify" if self.has_draft_model else "target decode"
            tokens_per_req = self.sa("speculative_num_draft_tokens") or 1
            self.capture(target, gpu["cuda_graph_target_mib"], "cuda_graph_target", tokens_per_req)
            if self.has_draft_model:
                self.capture("draft decode", gpu["cuda_graph_draft_mib"], "cuda_graph_draft", 1)
        if sc["era"] == "2026":
            log.line(f"Engine startup timings (s): load_weight={self.phase_time('weights'):.2f}, "
                     f"kv_cache_allocation={self.phase_time('kv_cache'):.2f}")
        log.capacity(sc["capacity"], self.avail_gb())
        # HTTP
        self.engine = Engine(sc, log, self.speculative, self.max_accept_len())
        state = DoubleState(sc, args, log, self.engine, self.server_info())
        self.state = state
        self.wait(self.phase_time("http"))
        self.maybe_crash("http")
        try:
            self.http = serve(state, args.host, args.port)
        except OSError as exc:
            log.line(f"ERROR:    [Errno {exc.errno}] error while attempting to bind on address "
                     f"({args.host!r}, {args.port}): {exc.strerror.lower() if exc.strerror else exc}")
            self.terminate_workers()
            os._exit(1)
        self.engine.start()
        log.uvicorn_start(os.getpid(), args.host, args.port)
        # warmup: one short /generate, as SGLang's _wait_and_warmup does
        if not args.skip_server_warmup:
            log.prefill(1, 7, 0, 0, 0.0, 7 / max(self.phase_time("warmup"), 1e-3))
            self.wait(self.phase_time("warmup"))
            self.maybe_crash("warmup")
            log.access("127.0.0.1:40312", "POST", "/generate", 200)
        state.ready.set()
        log.ready()

    def capture(self, what: str, mib: float, phase: str, tokens_per_req: int) -> None:
        bs = list(self.scenario["cuda_graph_bs"])
        if self.args.cuda_graph_bs:
            bs = list(self.args.cuda_graph_bs)
        total_s = self.phase_time(phase)
        log = self.log
        log.graph_begin(what, bs, self.avail_gb(), tokens_per_req)
        start = time.monotonic()
        n = len(bs)
        per_mib = mib / max(n, 1)
        log.capture_progress(bs[-1], self.avail_gb(), 0, n, 0.0)
        for i, size in enumerate(reversed(bs)):
            self.wait(total_s / max(n, 1))
            if i == n // 2:
                self.maybe_crash(phase)
            self.used_mib += int(per_mib)
            log.capture_progress(size, self.avail_gb(), i + 1, n, time.monotonic() - start)
        if n == 0:
            self.maybe_crash(phase)
        self.add_memory(0)
        log.graph_end(what, time.monotonic() - start, mib / _GB, self.avail_gb())

    def max_accept_len(self) -> int | None:
        """The largest accept length the configuration the server_args line shows allows: steps + 1, else the draft
        tokens (NGRAM), None when neither is set."""
        try:
            steps = int(self.sa("speculative_num_steps") or 0)
            tokens = int(self.sa("speculative_num_draft_tokens") or 0)
        except (TypeError, ValueError):
            return None
        return steps + 1 if steps else tokens or None

    def sa(self, name: str):
        """A server arg as SGLang would show it: scenario's scripted post-rewrite value, else the flag value."""
        scripted = self.scenario["server_args"]
        if name in scripted:
            return scripted[name]
        return self.rewrites[name] if name in self.rewrites else getattr(self.args, name, None)

    def server_args_fields(self) -> list[tuple[str, object]]:
        fields = dict(vars(self.args))
        if fields.get("tokenizer_path") is None:
            fields["tokenizer_path"] = fields["model_path"]
        if fields.get("served_model_name") is None:
            fields["served_model_name"] = fields["model_path"]
        fields.update(self.rewrites)
        fields.update(self.scenario["server_args"])
        return list(fields.items())

    def server_info(self) -> dict:
        info = dict(self.server_args_fields())
        cap = self.scenario["capacity"]
        info.update(max_total_num_tokens=cap["max_total_num_tokens"], max_req_input_len=cap["context_len"] - 1,
                    version=self.scenario["version"])
        info.setdefault("max_running_requests", cap["max_running_requests"])
        if info.get("max_running_requests") is None:
            info["max_running_requests"] = cap["max_running_requests"]
        return info

    def shutdown(self) -> int:
        delay = float(self.scenario["shutdown"].get("delay_s", 0.0))
        if delay:
            time.sleep(delay)
        if self.engine:
            self.engine.stop()
        if self.http:
            self.http.shutdown()
        self.terminate_workers()
        return 0


class _Stop(Exception):
    pass


def main(argv: list[str], prog: str | None = None) -> int:
    """Entry point of ``python3 -m sglang.launch_server`` / ``sglang serve``; returns the exit status."""
    scenario = load_scenario()
    args = parse_args(argv, scenario["era"], prog)
    launcher = Launcher(scenario, args)

    def on_signal(signum, _frame):
        if signum == signal.SIGTERM and launcher._ignore_sigterm():
            return
        launcher.stop_event.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        return launcher.run()
    finally:
        sys.stderr.flush()
