#!/usr/bin/env python3
"""Regenerate the shipped demonstration session: ``python tools/make_demo_session.py [OUT]``.

Default OUT: ``sessions/demo-eagle3-field-reports.yaml.gz``. It drives the REAL app headless (``App.run_test`` +
Pilot key presses) on a LocalHost whose environment runs the SGLang test double (``tests/double``: PYTHONPATH, its
``sglang`` script, the fake nvidia-smi of ``tests/fakes/bin``), and records it with the app's own recorder. The
story of the two field reports, step by step (scenario files in ``tools/demo_scenarios/``):

1. a wrong flag name (``--speculative-eagle-top-k``): the builder flags it; launched anyway (``L``), the server
   exits with argparse's "unrecognized arguments";
2. topk and draft tokens without ``--speculative-num-steps``: the bare ``AssertionError``;
3. steps 1, topk 1, draft tokens 16: the builder predicts, and the log confirms, the silent 16 -> 2 override;
4. a benchmark (``b``) on that server: accept length about 1.1, the draft barely helps;
5. restart (``r``) into a CUDA OOM during graph capture that leaves the workers orphaned holding GPU memory;
   tagged in the GPU pane and killed (``K``);
6. a healthy launch and the default depth sweep (``S``: the no-speculation baseline vs 16, 10 and 5 draft tokens,
   as the README says), keeping the fastest configuration.

The scenario (what the double does at the next launch) is switched between steps through the host environment;
nothing else is scripted: every finding, GPU row, kill outcome and benchmark figure is what specdash computed.
The header says it is a demonstration recorded against the test double, not a real GPU run.

Needs: Linux, python3, the repository checkout (tests/double). Takes about two minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SCENARIOS = Path(__file__).resolve().parent / "demo_scenarios"
DEFAULT_OUT = REPO / "sessions" / "demo-eagle3-field-reports.yaml.gz"
HOST_LABEL = "gpu-demo (SGLang test double)"
#: The SGLang release of the demonstration, in one place: the double says it is this release (``sglang.__version__``
#: for the builder's host probe, ``/get_server_info``) through ``SGLANG_DOUBLE_VERSION``, and the recording's header
#: says the same (the scenario files carry no version).
SGLANG_VERSION = "0.5.1"

NOTE = ("DEMONSTRATION recorded by specdash against the SGLang test double (tests/double) and a fake nvidia-smi, "
        "not a real GPU run: the server's log lines, accept lengths and GPU memory are scripted by "
        "tools/demo_scenarios/*.yaml; every finding, classification, kill outcome and benchmark figure was "
        "computed by specdash. Driven through the real app headless (Pilot key presses) by "
        "tools/make_demo_session.py; the scenario switch between launches is the only step done outside the app.")

BASE = ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 --port {port} "
        "--speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3-LLaMA3.1-8B")
WRONG_FLAG = BASE + " --speculative-num-steps 1 --speculative-eagle-top-k 1 --speculative-num-draft-tokens 16"
NO_STEPS = BASE + " --speculative-eagle-topk 1 --speculative-num-draft-tokens 16"
OVERRIDE = BASE + " --speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 16"
HEALTHY = BASE + " --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4"


def _load(name: str, path: Path):
    """A test helper module loaded by path (tests/ is not a package on sys.path here)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _harness():
    return _load("sglang_double_harness", REPO / "tests" / "double" / "harness.py")


def say(text: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)


async def wait_until(pilot, predicate, timeout_s: float, what: str) -> None:
    """The tests' wait (tests/support/pilot.py), ending the script with one line on a timeout."""
    if str(REPO / "tests") not in sys.path:  # pilot.py imports its sibling helpers as ``support.*``
        sys.path.insert(0, str(REPO / "tests"))
    pilot_support = _load("specdash_tests_pilot", REPO / "tests" / "support" / "pilot.py")
    try:
        await pilot_support.wait_until(pilot, predicate, timeout_s=timeout_s, what=what)
    except AssertionError as exc:
        raise SystemExit(f"make_demo_session: {exc}") from None


async def record(out: Path, workdir: Path) -> None:
    harness = _harness()
    env = harness.double_env(workdir, None, gpus=2)
    env["SGLANG_DOUBLE_VERSION"] = SGLANG_VERSION  # before the app starts: its host probe reads the release
    py_dir = workdir / "python-bin"  # python3 straight to this interpreter (a pyenv shim costs ~0.2 s per call)
    py_dir.mkdir()
    (py_dir / "python3").symlink_to(sys.executable)
    env["PATH"] = os.pathsep.join((str(REPO / "tests" / "fakes" / "bin"), str(py_dir), env["PATH"]))
    os.environ["XDG_STATE_HOME"] = env["XDG_STATE_HOME"]  # the app's own state (start-up history, bench results)
    os.environ.pop("SPECDASH_STATE_DIR", None)

    from specdash.app.main import SpecdashApp
    from specdash.app.modals.confirm import ConfirmScreen
    from specdash.bench.sweep import default_sweep
    from specdash.hosts.local import LocalHost
    from specdash.session.recorder import Recorder

    def scenario(name: str) -> None:
        env["SGLANG_DOUBLE_SCENARIO"] = str(SCENARIOS / f"{name}.yaml")

    port = harness.free_port()
    host = LocalHost(env=env)
    # an empty log to start from: the app then discovers no server, so another SGLang server running on this machine
    # (someone else's, a test's) is never followed and recorded into the demonstration
    quiet = workdir / "no-server-yet.log"
    quiet.write_text("")
    app = SpecdashApp(host, log_path=str(quiet), gpu_interval_s=1.0)
    app.recorder = Recorder(out, {"host": HOST_LABEL, "sglang_version": SGLANG_VERSION, "demo": True,
                                  "note": NOTE}, overwrite=True)
    groups: set[int] = set()
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            builder, gpus, bench = app.builder_pane, app.gpu_pane, app.bench_pane
            await app.deferred_panes_ready()  # the builder and bench panes are mounted after the first frame
            await wait_until(pilot, lambda: gpus.view is not None and gpus.view.snapshot.gpus, 30,
                             "the first GPU sample")
            await pilot.pause(1.0)

            async def type_command(command: str) -> None:
                await pilot.press("f3")
                builder.set_command(command.format(port=port))
                await pilot.pause(2.5)  # the user reads the builder's diagnostics
                app.set_focus(None)

            def crashed() -> bool:
                return app.status_bar.server_state in ("crashed", "stopped")

            def remember() -> None:
                if app.run_handle is not None:
                    groups.add(app.run_handle.pgid)

            async def launch(key: str, label: str, until, what: str, timeout_s: float) -> None:
                """Press ``key`` (a launch), wait for the new server's process group, then watch the log (F2)
                until ``until()``."""
                await pilot.press(key)
                await wait_until(pilot, lambda: app.run_handle is not None and app.run_handle.pgid not in groups,
                                 30, label)
                remember()
                await pilot.press("f2")
                await wait_until(pilot, until, timeout_s, what)

            def ready() -> bool:
                return app.status_bar.server_state == "ready"

            say("1. wrong flag name, launched anyway")
            scenario("bare_assert")
            await type_command(WRONG_FLAG)
            await launch("L", "launch 1", crashed, "the argparse exit", 30)
            await pilot.pause(2.0)

            say("2. no --speculative-num-steps: bare AssertionError")
            await type_command(NO_STEPS)
            await launch("L", "launch 2", crashed, "the AssertionError", 30)
            await pilot.pause(2.0)

            say("3. steps 1 / topk 1 / draft tokens 16: the 16 -> 2 override")
            scenario("override_low_accept")
            await type_command(OVERRIDE)
            await launch("l", "launch 3", ready, "server ready", 60)
            await pilot.pause(1.5)

            say("4. benchmark: low accept length")
            # long enough for several decode lines after the first (which averages over idle time and is not judged)
            bench.bench_overrides = {"num_requests": 32, "concurrency": 4, "output_len": 128, "warmup_requests": 1}
            bench.save_results = False
            await pilot.press("f4")
            app.set_focus(bench)
            await pilot.press("b")
            await wait_until(pilot, lambda: bench.results, 120, "the benchmark result")
            await pilot.press("f2")
            await pilot.pause(3.0)

            say("5. restart into a CUDA OOM that orphans the workers; kill them from the GPU pane")
            scenario("crash_orphans")
            await pilot.press("r")
            await pilot.pause(0.5)
            await pilot.press("y")
            await wait_until(pilot, lambda: app.run_handle is not None and app.run_handle.pgid not in groups, 60,
                             "the restart")
            remember()
            try:
                await wait_until(pilot, lambda: sum(p.process_class == "orphan" for p in gpus.processes) >= 1, 40,
                                 "orphans in the GPU pane")
            except SystemExit:
                say(f"state {app.status_bar.server_state} {app.status_bar.server_detail}; GPU rows: "
                    f"{[(p.pid, p.process_class, p.pgid, p.ppid, p.reason) for p in gpus.processes]}; "
                    f"fake state: {harness.gpu_processes(env)}; snapshot {gpus.view.snapshot}; "
                    f"status {gpus.query_one('#gpu-status').render()}")
                raise
            await pilot.pause(3.0)
            await pilot.press("f5")
            for _ in range(len(gpus.processes)):
                proc = gpus._focused_process()
                if proc is not None and proc.process_class == "orphan" and proc.pid not in gpus.tagged:
                    await pilot.press("space")
                else:
                    await pilot.press("down")
                await pilot.pause(0.3)
            await pilot.press("K")
            await pilot.pause(1.0)
            await pilot.press("y")
            await wait_until(pilot, lambda: gpus.last_report is not None, 60, "the kill")
            await pilot.pause(4.0)

            say("6. healthy launch and a depth sweep against the baseline")
            scenario("healthy")
            await type_command(HEALTHY)
            await launch("l", "launch 6", ready, "server ready", 60)
            await pilot.pause(1.0)
            bench.bench_overrides = {"num_requests": 8, "concurrency": 4, "output_len": 256, "warmup_requests": 1}
            bench.base_command = builder.command
            bench.sweep_definition = dataclasses.replace(default_sweep(repeats=2), ready_timeout_s=60)
            await pilot.press("f4")
            app.set_focus(bench)
            await pilot.press("S")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 30, "the sweep's plan")
            await pilot.pause(2.0)  # the plan on screen: configurations, restarts, estimated duration
            await pilot.press("y")
            await wait_until(pilot, lambda: bench.sweep_result is not None and not bench.running, 300, "the sweep")
            await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 60, "keep or restore")
            await pilot.pause(2.0)
            await pilot.press("y")  # keep the fastest configuration: the builder gets its command
            await pilot.pause(3.0)
            remember()
            await wait_until(pilot, ready, 90, "the kept configuration's server")
            remember()
            await pilot.pause(3.0)
            say("stopping the server")
            app.set_focus(None)
            await pilot.press("x")
            await pilot.pause(0.5)
            await pilot.press("y")
            await wait_until(pilot, lambda: app.status_bar.server_state in ("stopped", "crashed")
                             or not app._server_alive, 30, "the stop")
            await pilot.pause(2.0)
    finally:
        app.close_recording()
        if app.run_handle is not None:
            groups.add(app.run_handle.pgid)
        for pgid in groups:  # only groups this script launched
            harness.kill_group(pgid)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default=str(DEFAULT_OUT), help=f"session file (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="specdash-demo-") as workdir:
        asyncio.run(record(out, Path(workdir)))
    from specdash.session.reader import read_session
    from specdash.session.summary import summary_lines

    session = read_session(out)
    say(f"wrote {out}: {out.stat().st_size / 1024:.0f} KiB, {len(session.events)} events, "
        f"{session.duration_s:.0f} s; problems: {session.problems or 'none'}")
    print("\n".join(summary_lines(session)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
