"""The restart at the end of a depth sweep (y keeps a configuration, n restores the user's command) is recorded as
what it is, not as a sweep configuration's restart: ``replay --summary`` names it, and the findings of that server
keep their depth-sweep advice (a sweep configuration's do not)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.double import empty_log, harness, host_env
from support.guard import guard
from support.pilot import launch_until_ready, wait_until
from test_sweep_findings import decode, record_server, server_args

from specdash.app.bench.end_dialog import SweepEndScreen
from specdash.app.main import SpecdashApp
from specdash.bench.stats import repeat_spread
from specdash.bench.sweep import PointResult, SweepDefinition, SweepPoint, SweepResult, command_for_point
from specdash.hosts.local import LocalHost
from specdash.logs.analyzer import LogAnalyzer
from specdash.session.events import SWEEP_KEPT_RUNNING, SWEEP_RESTARTED, SWEEP_RESTORED
from specdash.session.reader import read_session
from specdash.session.recorder import Recorder
from specdash.session.summary import summary_lines

pytestmark = pytest.mark.timeout(guard(240))  # a hang guard, scaled like every wait

CHAIN_5 = SweepPoint("chain-5", speculative_num_steps=4, speculative_eagle_topk=1, speculative_num_draft_tokens=5)
DEFINITION = SweepDefinition(points=(SweepPoint("baseline", speculative=False), CHAIN_5), repeats=3)


def finished_sweep(original: str) -> SweepResult:
    """chain-5 stable and 2x the stable baseline: the end dialog offers to keep it."""
    points = [PointResult(p, "ok", command=command_for_point(original, p), throughput=repeat_spread(values))
              for p, values in zip(DEFINITION.points, ([1000, 1001, 1002], [2000, 2001, 2002]), strict=True)]
    return SweepResult(DEFINITION, original, {}, "k", "now", points=points, finished=True)


async def test_keep_and_restore_at_the_end_of_a_sweep_are_named_in_replay_summary(tmp_path, started_groups,
                                                                                  monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    path = tmp_path / "session.yaml"
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    app.recorder = Recorder(path, {"host": "local", "note": "test"})
    async with app.run_test(size=(160, 48)) as pilot:
        await launch_until_ready(pilot, app, started_groups, harness.launch_command(harness.free_port()))
        original = app.builder_pane.command
        kept = command_for_point(original, CHAIN_5)
        await pilot.press("f4")
        bench = app.bench_pane
        groups = []
        # y keeps chain-5 (a restart), y again keeps it while it runs (no restart), n restores the user's command
        for key, command in (("y", kept), ("y", kept), ("n", original)):
            if len(groups) == 1:  # chain-5 runs as the sweep left it: its log analysed as a sweep configuration's
                app.log_pane.analyzer.engine.in_depth_sweep = True
            bench._ask_keep_or_restore(finished_sweep(original), original)
            await wait_until(pilot, lambda: isinstance(app.screen, SweepEndScreen), what="the end-of-sweep dialog")
            await pilot.press(key)
            await wait_until(pilot, lambda c=command: app.run_handle.command == c, timeout_s=60,
                             what=f"the restart with {key}")
            started_groups.append(app.run_handle.pgid)
            groups.append(app.run_handle.pgid)
            await wait_until(pilot, lambda: app.status_bar.server_state == "ready", timeout_s=60, what="ready",
                             state=lambda: app.status_bar.line(160).plain)
            await wait_until(pilot, lambda: "the server runs the" in bench.status, timeout_s=60,
                             what="the pane's restart done", state=lambda: bench.status)
            if len(groups) == 2:  # kept while it runs: the user's server from now on, its findings advise again
                await wait_until(pilot, lambda: not app.log_pane.analyzer.engine.in_depth_sweep,
                                 what="the kept server's log out of sweep mode")
        assert app.builder_pane.command == original and groups[0] == groups[1]
    out = subprocess.run([sys.executable, "-m", "specdash", "replay", "--summary", str(path)], capture_output=True,
                         text=True, timeout=guard(60), check=True).stdout
    config = [line.split("config", 1)[1].strip() for line in out.splitlines() if "  config  " in line
              and "validated" not in line]  # the builder validates the command it gets
    # before: both were "sweep restarted (PGID ...)": their servers' findings lost their depth-sweep advice
    assert config[-3] == f"restarted with the kept sweep config (PGID {groups[0]}): {kept}"
    assert config[-2] == f"kept the running sweep config (PGID {groups[0]}): {kept}"
    assert config[-1] == f"restarted with your command after the sweep (PGID {groups[2]}): {original}"
    assert "sweep restarted" not in out


MINE, CHAIN_10, MINE_AGAIN = "/srv/runs/a/server.log", "/srv/runs/chain-10/server.log", "/srv/runs/b/server.log"


def test_the_restored_servers_findings_keep_their_advice_in_the_summary(tmp_path: Path):
    """The user's server, one sweep configuration (its log raises no sweep advice), then the user's command
    restored at the sweep's end: that server is the user's again, so its modest acceptance advises a sweep."""
    path = tmp_path / "s.yaml"
    t = 0.0
    with Recorder(path, {"host": "h", "sglang_version": "0.5.6"}, timer=False) as rec:
        for source, action, tokens, accept in ((MINE, None, 4, 2.0), (CHAIN_10, SWEEP_RESTARTED, 10, 2.86),
                                               (MINE_AGAIN, SWEEP_RESTORED, 4, 2.0)):
            if action:
                rec.record("command", t=t, action=action, command=f"python3 -m sglang.launch_server "
                           f"--speculative-num-draft-tokens {tokens}", pid=100, pgid=100, log_path=source)
            t = record_server(rec, t, source, tokens - 1, tokens, accept, action == SWEEP_RESTARTED)
    text = "\n".join(summary_lines(read_session(path)))
    before, restored = text.split("restarted with your command after the sweep (PGID 100)")
    assert "acceptance modest: mean accept length 2.00 of a possible 4" in restored
    assert "then try a depth sweep" in restored and "one configuration of the depth sweep" not in restored
    assert "one configuration of the depth sweep running now" in before.split("sweep restarted")[1]


def test_a_sweep_config_kept_while_it_runs_is_the_users_server_from_then_on(tmp_path: Path):
    path = tmp_path / "s.yaml"
    with Recorder(path, {"host": "h", "sglang_version": "0.5.6"}, timer=False) as rec:
        rec.record("command", t=0.0, action=SWEEP_RESTARTED, command="python3 -m sglang.launch_server "
                   "--speculative-num-draft-tokens 4", pid=100, pgid=100, log_path=CHAIN_10)
        raised = []
        analyzer = LogAnalyzer(on_finding=raised.append)
        analyzer.engine.in_depth_sweep = True
        lines = [server_args(3, 4)] + [decode(s, 2.0) for s in range(1, 15)]
        for i, text in enumerate(lines):
            if i == 8:  # y at the end of the sweep: the running config kept, no restart
                rec.record("command", t=float(i), action=SWEEP_KEPT_RUNNING, command="python3 -m "
                           "sglang.launch_server --speculative-num-draft-tokens 4", pid=100, pgid=100,
                           log_path=CHAIN_10)
                analyzer.engine.in_depth_sweep = False  # as the console does
            analyzer.feed_many([text])
            rec.record("log", t=float(i) + 0.5, lines=[[i * 300, text]], source=CHAIN_10)
            for f in raised:
                rec.record("finding", t=float(i) + 0.5, code=f.kind, severity=f.severity, message=f.message,
                           detail=f.explanation, line=f.line, key=f.key)
            raised.clear()
    text = "\n".join(summary_lines(read_session(path)))
    assert "kept the running sweep config (PGID 100)" in text
    # the finding as it stood at the end of its log: the user's server's advice (before: the sweep's wording)
    assert "then try a depth sweep" in text and "one configuration of the depth sweep running now" not in text
