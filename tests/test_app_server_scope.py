"""Which server the keys act on, said on screen: a followed server this console did not launch (discovered on the
host) is named as such and x, r, b and S say they act only on a server launched here; the kill dialog says whether
it signals a whole process group or a PID alone, and points at x for the server launched here; on quit a launched
server left running is named with its PGID and how to re-attach; a re-attached server's log pane shows its log path.
Real processes (the SGLang test double started the user's way) on LocalHost."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from support.double import harness, host_env
from support.guard import guard
from support.pilot import benchmark_from_the_bench_pane, screen_text, wait_until

from specdash.app.gpus.kill_modal import KillConfirmScreen
from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

pytestmark = pytest.mark.timeout(guard(180))  # a hang guard, scaled like every wait


def notices(app) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


async def test_a_discovered_server_is_said_not_launched_here_and_x_r_b_say_their_scope(tmp_path, started_groups,
                                                                                      monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))  # the benchmark is saved there
    env = host_env(tmp_path, "fast")
    port = harness.free_port()
    log = tmp_path / "elsewhere.log"
    with open(log, "wb") as out:  # started from another terminal: nohup-like, own session, output to a file
        proc = subprocess.Popen(shlex.split(harness.launch_command(port)), env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    started_groups.append(proc.pid)
    app = SpecdashApp(LocalHost(env=env), log_path=None, gpu_interval_s=0.5, server_port=port)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.log_path == str(log), what="the discovered server's log")
        await wait_until(pilot, lambda: f"following PID {proc.pid} (not launched from here)" in screen_text(app),
                         what="the log title names the server as not launched here", state=lambda: screen_text(app))
        await pilot.resize_terminal(80, 24)  # a narrow pane cuts the log path's start, never the note
        await wait_until(pilot, lambda: f"log · following PID {proc.pid} (not launched from here)" in screen_text(app),
                         what="the note at 80 columns", state=lambda: screen_text(app).splitlines()[1])
        await pilot.resize_terminal(160, 48)
        await pilot.press("x")
        await wait_until(pilot, lambda: "x stops only a server launched from this console" in notices(app),
                         what="x's scope")
        assert f"the followed server (PID {proc.pid}) was not" in notices(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: "r restarts only a server launched from this console" in notices(app),
                         what="r's scope")
        await pilot.pause(0.5)
        assert app.run_handle is None  # r did not launch a second server next to it
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.bench_pane is not None and "not launched from here" in app.bench_pane.status,
                         what="the bench pane's idle line")
        # b benchmarks the followed server (a benchmark does not change it); S (it restarts the server) is refused
        idle = f"server http://127.0.0.1:{port}, followed (not launched from here) - b: benchmark the selected"
        await wait_until(pilot, lambda: idle in " ".join(screen_text(app).split()), what="the server named",
                         state=lambda: screen_text(app))
        result = await benchmark_from_the_bench_pane(pilot, app, port, num_requests=2, concurrency=1, output_len=8)
        assert result.completed == 2 and result.errors == 0
        await pilot.press("S")
        refusal = "S is off: the depth sweep restarts the server for each configuration, and the followed server"
        await wait_until(pilot, lambda: refusal in " ".join(screen_text(app).split()), what="S's refusal on screen",
                         state=lambda: screen_text(app))
        await pilot.pause(0.5)
        assert app.run_handle is None and not app.bench_pane.sweeping
    assert proc.poll() is None  # still running: nothing here stopped it


async def test_kill_dialog_says_pid_alone_and_points_at_x_then_quit_names_the_server_and_reattach_shows_its_log(
        tmp_path, started_groups, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    env = host_env(tmp_path, "fast")
    port = harness.free_port()
    given = tmp_path / "given.log"
    given.write_text("")
    app = SpecdashApp(LocalHost(env=env), log_path=str(given), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        app.builder_pane.set_command(harness.launch_command(port))
        await pilot.pause(0.2)
        await pilot.press("l")
        await wait_until(pilot, lambda: app.run_handle is not None, what="launch")
        handle = app.run_handle
        started_groups.append(handle.pgid)
        await wait_until(pilot, lambda: app.status_bar.server_state == "ready", what="ready")
        gpus = app.gpu_pane
        await wait_until(pilot, lambda: any(p.process_class == "server" and p.used_mib for p in gpus.processes),
                         what="the server's GPU process")
        members = [pid for pid in harness.pids_in_group(handle.pgid)]
        assert len(members) > 1  # launcher, scheduler, detokenizer: one group
        gpus.focus()
        await pilot.pause(0.1)
        row = next(i for i, p in enumerate(gpus.processes) if p.process_class == "server" and p.used_mib)
        target = gpus.processes[row]
        gpus.query_one("DataTable").move_cursor(row=row)
        await pilot.press("K")
        await wait_until(pilot, lambda: isinstance(app.screen, KillConfirmScreen), what="kill confirmation")
        seen = screen_text(app)
        assert f"Kill 1 process holding {target.used_mib} MiB?" in seen
        how = str(app.screen.query_one("#kill-how").render())
        group_size = len(app.screen.groups[handle.pgid])
        assert group_size == len(harness.pids_in_group(handle.pgid))
        assert (f"SIGTERM to PID {target.pid} only: 1 of the {group_size} processes of process group {handle.pgid} "
                f"(the other {group_size - 1} are not signalled)") in how
        assert "SIGTERM to each process group (or PID)" not in seen
        assert (f"Process group {handle.pgid} is the server launched from this console: x stops it whole"
                in str(app.screen.query_one("#kill-launched").render()))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, KillConfirmScreen), what="cancelled")
        assert set(harness.pids_in_group(handle.pgid)) == set(members)  # nothing signalled
        note = app.exit_note()
    # quit with the server still running: the exit line says so, with its PGID and how to re-attach
    assert note is not None
    assert f"still runs on local: PGID {handle.pgid}, port {port}, log {handle.log_path}" in note
    assert "`specdash connect local` re-attaches it (x stops it)" in note
    assert harness.pids_in_group(handle.pgid)

    again = SpecdashApp(LocalHost(env=env), log_path=None, gpu_interval_s=0.5)
    async with again.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: again.run_handle is not None and again.log_path == handle.log_path,
                         what="re-attached")
        # the title ends with the log's name and the marker (a long path loses its start, never the marker)
        title = f"{Path(handle.log_path).name} · re-attached, PGID {handle.pgid}"
        await wait_until(pilot, lambda: title in screen_text(again), what="the re-attached title",
                         state=lambda: screen_text(again).splitlines()[1])
        # b benchmarks the re-attached server (it said "no server to benchmark")
        await wait_until(pilot, lambda: again.bench_pane.server_url == f"http://127.0.0.1:{port}",
                         what="the bench pane pointed at the re-attached server",
                         state=lambda: again.bench_pane.server_url)
        assert "not launched from here" not in screen_text(again)


def test_without_a_known_port_b_names_the_benchmark_command(tmp_path):
    """A followed server whose command line gives no port (a renamed ``sglang::`` process): x, r, b and S stay with
    a server launched here and the line names the CLI that benchmarks a server by URL (its real flag: --url)."""
    import argparse

    from specdash.commands import bench as bench_command

    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=None)
    app.followed_pid, app.followed_port = 4242, None
    text = app.followed_elsewhere_text()
    assert text.startswith("the followed server (PID 4242) was not launched from here and its port is not known")
    assert text.endswith("benchmark it with specdash bench --url http://127.0.0.1:PORT")
    parser = argparse.ArgumentParser()
    bench_command.add_arguments(parser)
    assert parser.parse_args(["--url", "http://127.0.0.1:30000"]).url == "http://127.0.0.1:30000"
    app.followed_port = 30000
    assert "b benchmarks it (a benchmark does not change the server); x, r and S act only" in app.followed_elsewhere_text()
