"""Server lifecycle: launch detached, follow starting → ready, stop (SIGTERM, SIGKILL), refuse a reused PGID,
restart only once the GPU memory is released, crashed status with exit reason. Real processes and HTTP on
127.0.0.1 with the SGLang double and LocalHost."""

from __future__ import annotations

import json
import os
import pathlib
import signal

import pytest
from support.double import harness
from support.guard import guard

from specdash.hosts.local import LocalHost
from specdash.logs.startup import PHASES
from specdash.server import (
    RunHandle,
    ServerState,
    find_runs,
    launch,
    probe,
    probe_http,
    probe_via_host,
    restart,
    server_status,
    stop,
    wait_for_state,
)
from specdash.sglang.command_edit import launch_port

pytestmark = pytest.mark.timeout(guard(60))  # a hang guard, scaled like every wait

SETTLED = frozenset({ServerState.READY, ServerState.CRASHED, ServerState.STOPPED})


def held_by_group(env: dict[str, str]):
    """gpu_memory_held_by(pgid): MiB the fake nvidia-smi state shows for live processes of process group pgid."""

    async def held(pgid: int) -> int:
        live = set(harness.pids_in_group(pgid))
        return sum(p["used_mib"] for p in harness.gpu_processes(env) if p["pid"] in live)

    return held


def test_launch_port_reads_the_command_as_sglangs_argparse_does():
    assert launch_port("python3 -m sglang.launch_server --model-path m --port 31000") == 31000
    assert launch_port("sglang serve --model-path m --port=8080 --tp 2") == 8080
    assert launch_port("python3 -m sglang.launch_server --model-path m") == 30000
    # argparse's abbreviation (allow_abbrev, every release): the validator and the launch agree
    assert launch_port("python3 -m sglang.launch_server --model-path m --po 31000") == 31000
    assert launch_port("python3 -m sglang.launch_server --model-path m --po=31000", "0.4.1") == 31000
    # the last occurrence wins; continuations, comments and env prefixes are no obstacle
    assert launch_port("A=1 python3 -m sglang.launch_server --port 1 \\\n  --port 31000 # c\n") == 31000
    # a value SGLang would refuse gives the default, never a made-up port
    assert launch_port("python3 -m sglang.launch_server --model-path m --port abc") == 30000


async def test_launch_with_an_abbreviated_port_flag_records_and_probes_that_port(tmp_path, started_groups):
    env = harness.double_env(tmp_path, "fast")
    host = LocalHost(env=env)
    port = harness.free_port()
    command = harness.launch_command(port).replace(f"--port {port}", f"--po {port}")
    assert "--port" not in command
    handle = await launch(host, command)
    started_groups.append(handle.pgid)
    assert handle.port == port and pathlib.Path(handle.run_dir).name.endswith(f"-{port}")
    assert json.loads((pathlib.Path(handle.run_dir) / "run.json").read_text())["port"] == port
    status = await wait_for_state(host, handle, SETTLED, timeout_s=30)
    assert status.state is ServerState.READY  # the /health probe asked the port the server listens on
    assert (await probe_http(f"http://127.0.0.1:{port}")).health_status == 200


async def test_launch_runs_detached_and_reaches_ready_then_stops(tmp_path, started_groups):
    env = harness.double_env(tmp_path, "fast")
    host = LocalHost(env=env)
    port = harness.free_port()
    command = harness.launch_command(port)
    handle = await launch(host, command)
    started_groups.append(handle.pgid)

    run_dir = pathlib.Path(handle.run_dir)
    assert run_dir.parent == tmp_path / "state" / "specdash" / "runs"
    assert run_dir.name.endswith(f"-{port}") and len(run_dir.name) == len("20261130-093512-") + len(str(port))
    assert handle.log_path == str(run_dir / "server.log") and handle.port == port
    assert (run_dir / "command.txt").read_text().strip() == command
    assert json.loads((run_dir / "run.json").read_text())["run_id"] == handle.run_id
    assert RunHandle.from_json(handle.to_json()) == handle
    assert await find_runs(host) == [handle]  # found again after a specdash restart
    # its own session and process group, not a child of specdash
    assert handle.pgid == handle.leader_pid
    assert os.getsid(handle.leader_pid) == handle.leader_pid
    assert harness.proc_info(handle.leader_pid)["ppid"] != os.getpid()

    first = await server_status(host, handle)
    assert first.state is ServerState.STARTING
    # the log pane's phase vocabulary (one reader: specdash.logs)
    known = ("waiting for the first log line",) + tuple(label for _, label in PHASES)
    status = first
    while status.state is ServerState.STARTING:
        assert status.detail.startswith(known), status.detail
        status = await wait_for_state(host, handle, SETTLED, timeout_s=0.05, poll_s=0.02)
    assert status.state is ServerState.READY, status.describe()
    assert status.describe().startswith("ready (SGLang 0.5.0rc0, EAGLE3")
    assert status.probe.healthy and status.probe.server_info_path == "/get_server_info"
    via_host = await probe_via_host(host, port)  # 0.5.x: /server_info is 404, falls back to /get_server_info
    assert via_host.server_info_path == "/get_server_info" and via_host.server_info["version"] == "0.5.0rc0"

    result = await stop(host, handle, grace_s=10)
    assert result.was_running and result.gone and not result.escalated
    assert result.describe().startswith(f"stopped process group {handle.pgid} with SIGTERM")
    assert harness.pids_in_group(handle.pgid) == []
    after = await server_status(host, handle)
    assert after.state is ServerState.STOPPED and after.describe() == "stopped"
    again = await stop(host, handle, grace_s=1)
    assert not again.was_running and again.signals == ()


async def test_stop_escalates_to_sigkill_when_sigterm_is_ignored(tmp_path, started_groups):
    host = LocalHost(env=harness.double_env(tmp_path, "stubborn"))
    handle = await launch(host, harness.launch_command(harness.free_port()))
    started_groups.append(handle.pgid)
    status = await wait_for_state(host, handle, SETTLED, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.READY

    result = await stop(host, handle, grace_s=0.5)
    assert result.signals == ("SIGTERM", "SIGKILL") and result.escalated and result.gone
    assert result.elapsed_s >= 0.5
    assert harness.pids_in_group(handle.pgid) == []


async def test_stop_never_signals_a_group_it_did_not_start(tmp_path, started_groups):
    """A handle whose PGID now belongs to processes without the run's id (a reused PGID) is not signalled."""
    host = LocalHost(env=harness.double_env(tmp_path, None))
    result = await host.run("setsid sleep 30 > /dev/null 2>&1 < /dev/null & echo $!")
    other = int(result.stdout.strip())
    started_groups.append(other)
    stale = RunHandle(host_name="local", command="python3 -m sglang.launch_server", run_id="20261130-000000-30000-dead",
                      run_dir=str(tmp_path / "old-run"), log_path=str(tmp_path / "old-run" / "server.log"),
                      leader_pid=other, pgid=other, port=30000, started_at_s=0.0)

    outcome = await stop(host, stale, grace_s=0.2)
    assert outcome.refused and outcome.signals == () and outcome.survivors == (other,)
    assert "nothing was signalled" in outcome.describe()
    assert harness.proc_info(other)["state"] != "Z"  # still running
    os.kill(other, signal.SIGKILL)  # ours (the test started it): clean up by PID


async def test_restart_waits_for_gpu_memory_release_then_relaunches(tmp_path, started_groups):
    env = harness.double_env(tmp_path, "fast")
    host = LocalHost(env=env)
    port = harness.free_port()
    handle = await launch(host, harness.launch_command(port))
    started_groups.append(handle.pgid)
    assert (await wait_for_state(host, handle, SETTLED, timeout_s=20, poll_s=0.1)).state is ServerState.READY
    held = held_by_group(env)
    assert await held(handle.pgid) > 60000

    result = await restart(host, handle, gpu_memory_held_by=held, grace_s=10, release_timeout_s=10, poll_s=0.05)
    assert result.released and result.held_mib == 0 and result.new_handle is not None
    started_groups.append(result.new_handle.pgid)
    assert result.describe().startswith("restarted:")
    assert [h.run_id for h in await find_runs(host)] == [result.new_handle.run_id, handle.run_id]
    assert harness.pids_in_group(handle.pgid) == []
    new = result.new_handle
    assert new.pgid != handle.pgid and new.run_dir != handle.run_dir and new.command == handle.command
    status = await wait_for_state(host, new, SETTLED, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.READY and new.port == port
    await stop(host, new, grace_s=10)


async def test_restart_does_not_relaunch_while_memory_is_held(tmp_path, started_groups):
    host = LocalHost(env=harness.double_env(tmp_path, None))
    chosen = tmp_path / "my runs" / "run 1"  # a caller-chosen run dir, with spaces
    handle = await launch(host, "sleep 30", run_dir=str(chosen))
    started_groups.append(handle.pgid)
    assert handle.run_dir == str(chosen) and (chosen / "server.log").exists() and handle.port == 30000
    calls = []

    async def still_held(pgid: int) -> int:
        calls.append(pgid)
        return 5120  # e.g. a process outside the group still holds memory attributed to it

    entries_before = set(os.listdir(tmp_path))
    result = await restart(host, handle, gpu_memory_held_by=still_held, grace_s=10, release_timeout_s=0.3,
                           poll_s=0.05)
    assert result.new_handle is None and not result.released and result.held_mib == 5120
    assert "still holds 5120 MiB" in result.describe()
    assert result.stop.was_running and result.stop.gone and harness.pids_in_group(handle.pgid) == []
    # a look at the start and one begun after the release timeout, however slow each look is
    assert set(calls) == {handle.pgid} and len(calls) >= 2
    assert set(os.listdir(tmp_path)) == entries_before and not (tmp_path / "state").exists()  # nothing launched


async def test_argparse_failure_is_reported_as_crashed_with_reason(tmp_path, started_groups):
    host = LocalHost(env=harness.double_env(tmp_path, "fast"))
    handle = await launch(host, "python3 -m sglang.launch_server --model-path /m --tensor-parallel 2 --bogus-flag")
    started_groups.append(handle.pgid)
    status = await wait_for_state(host, handle, SETTLED, timeout_s=20, poll_s=0.1)
    assert status.state is ServerState.CRASHED
    assert status.exit_status == 2
    assert status.describe() == ("crashed: launch_server.py: error: unrecognized arguments: --bogus-flag "
                                 "(exit status 2)")


async def test_probes_from_here_and_through_the_host_agree(tmp_path, started_groups):
    host = LocalHost(env=harness.double_env(tmp_path, "era_2026"))
    port = harness.free_port()
    handle = await launch(host, harness.launch_command(port))
    started_groups.append(handle.pgid)
    assert (await wait_for_state(host, handle, SETTLED, timeout_s=20, poll_s=0.1)).state is ServerState.READY

    direct = await probe_http(f"http://127.0.0.1:{port}")
    via_host = await probe_via_host(host, port)
    chosen = await probe(host, port)
    for p in (direct, via_host, chosen):
        assert p.healthy and p.server_info_path == "/server_info"
        assert p.server_info["version"] == "0.5.11.dev0" and p.server_info["port"] == port
    await stop(host, handle, grace_s=10)

    closed = harness.free_port()
    assert (await probe_http(f"http://127.0.0.1:{closed}")).health_status is None
    nothing = await probe_via_host(host, closed)
    assert nothing.health_status is None and nothing.error == f"nothing answers on port {closed}"


async def test_clean_exit_is_stopped_and_an_outside_kill_is_crashed(tmp_path, started_groups):
    host = LocalHost(env=harness.double_env(tmp_path, None))
    done = await launch(host, "echo finished")
    started_groups.append(done.pgid)
    status = await wait_for_state(host, done, SETTLED, timeout_s=10, poll_s=0.05)
    assert status.state is ServerState.STOPPED and status.detail == "exited by itself with status 0"
    assert pathlib.Path(done.log_path).read_text() == "finished\n"

    killed = await launch(host, "sleep 30")
    started_groups.append(killed.pgid)
    assert (await server_status(host, killed)).state is ServerState.STARTING  # alive, no HTTP yet
    harness.kill_group(killed.pgid)  # someone else kills it (the test started it)
    status = await wait_for_state(host, killed, SETTLED, timeout_s=10, poll_s=0.05)
    assert status.state is ServerState.CRASHED and "killed from outside specdash" in status.detail
