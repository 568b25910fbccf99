"""``q`` during a depth sweep asks first (as ``x`` and ``r`` do, the sweep held meanwhile) and names the
configuration the server is left running; after quitting, the exit line names that sweep configuration - not the
builder's command - and how to run the user's command again. Against the SGLang test double, real processes."""

from __future__ import annotations

import pytest
from support.double import empty_log, harness, host_env
from support.guard import guard
from support.pilot import wait_until
from test_app_sweep_plan import (
    dialog_shown,
    dialog_text,
    key_during_the_sweeps_first_restart,
    launched,
    start_two_point_sweep,
)

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost
from specdash.server import find_runs

pytestmark = pytest.mark.timeout(guard(240))  # a hang guard, scaled like every wait


async def test_q_during_the_sweep_asks_and_the_exit_line_names_the_config_left_running(tmp_path, started_groups,
                                                                                         monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        bench = await key_during_the_sweeps_first_restart(pilot, app, started_groups, port, "q")
        original = app.builder_pane.command
        text = dialog_text(app)
        assert text.startswith("Quit during the depth sweep?")
        assert "This cancels the depth sweep (config 1 of 2, baseline)" in text
        # the restart in flight runs to its end: the baseline is what the server is left running (on a loaded
        # machine the restart may have finished before q: then its process group is named)
        left = "The server is left running sweep config baseline, not your command ("
        assert left in text, text
        where = text.split(left, 1)[1].split(")", 1)[0]
        assert where in ("once the restart in flight to it has finished",
                         f"process group {app.run_handle.pgid}, port {app.run_handle.port}"), where
        assert "r here, or after `specdash connect local` re-attaches it, restarts it with the builder's command" in text
        await pilot.press("n")  # the sweep goes on
        await wait_until(pilot, lambda: "held" not in bench.status, what="the sweep released")
        assert app.is_running and bench.sweeping is not None
        await wait_until(pilot, lambda: app.run_handle.command != original, what="a sweep config runs")
        assert bench.sweeping is not None
        await pilot.press("q")
        await wait_until(pilot, lambda: dialog_shown(app), what="the quit question again")
        left = bench.sweep_config_of(app.run_handle.command)
        handle = app.run_handle
        if app._pending_restart is None or app._pending_restart.done():
            assert (f"The server is left running sweep config {left}, not your command (process group "
                    f"{handle.pgid}, port {handle.port})") in dialog_text(app)
        else:  # the sweep went on to its next restart meanwhile
            assert "not your command (once the restart in flight to it has finished)" in dialog_text(app)
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.is_running, timeout_s=120, what="quit")
    started_groups.extend(run.pgid for run in await find_runs(app.host))
    handle = app.run_handle
    assert bench.sweep_config_of(handle.command) is not None and harness.pids_in_group(handle.pgid)
    left = bench.sweep_config_of(handle.command)
    note = app.exit_note()
    assert note is not None
    assert (f"the server launched from this console still runs sweep config {left} of the depth sweep, not your "
            f"command, on local: PGID {handle.pgid}, port {handle.port}") in note
    assert note.endswith(f"To run your command again, re-attach and press r with it in the builder: {original}")

    # re-attached, the console says so too: the run dir records the sweep configuration it runs
    again = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=None, gpu_interval_s=0.5)
    async with again.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: again.run_handle is not None and again.run_handle.pgid == handle.pgid,
                         what="re-attached")
        assert again.run_handle.sweep_config == left
        await wait_until(pilot, lambda: f"runs sweep config {left}" in again.status_bar.server_detail,
                         what="the header names the sweep config", state=lambda: again.status_bar.server_detail)


async def test_q_without_a_sweep_quits_at_once_and_the_exit_line_is_unchanged(tmp_path, started_groups,
                                                                              monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await launched(pilot, app, started_groups, port)
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, what="quit")
    note = app.exit_note()
    assert note is not None and "sweep config" not in note and "To run your command again" not in note
    assert f"still runs on local: PGID {app.run_handle.pgid}, port {port}" in note


async def test_a_sweep_of_a_multi_line_command_measures_its_baseline(tmp_path, started_groups, monkeypatch):
    """The launch command written over lines with backslash continuations (as tools/try_local.sh writes it): the
    sweep's no-speculation baseline runs (it crashed on a dangling backslash) and is measured."""
    from support.pilot import launch_until_ready

    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    command = harness.launch_command(port).replace(" --speculative-algorithm", " \\\n  --speculative-algorithm")
    command = command.replace(" --speculative-num-steps", " \\\n  --speculative-num-steps") + "\n"
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await launch_until_ready(pilot, app, started_groups, command)
        bench = await start_two_point_sweep(pilot, app)
        await wait_until(pilot, lambda: bench.sweeping is None and dialog_shown(app), timeout_s=180,
                         what="the end of the sweep", state=lambda: bench.status)
        started_groups.extend(run.pgid for run in await find_runs(app.host))
        baseline = bench.sweep_result.point("baseline")
        assert baseline.status in ("ok", "unstable"), baseline.error
        assert baseline.command == (f"python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct "
                                    f"--host 127.0.0.1 --port {port}\n")
        assert "restart failed" not in bench.status and "unrecognized" not in dialog_text(app)
