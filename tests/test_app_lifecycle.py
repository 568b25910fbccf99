"""The server lifecycle in the app, against the SGLang test double: launch → follow start-up → ready → stop;
a crash leaves orphans → the GPU pane shows them with their memory → K frees it → relaunch."""

from __future__ import annotations

import pathlib

import pytest
from support.double import empty_log, harness, host_env
from support.pilot import benchmark_from_the_bench_pane, launch_until_ready, screen_text, wait_until

from specdash.app.gpus.kill_modal import KillConfirmScreen
from specdash.app.log.findings_panel import FindingsPanel
from specdash.app.main import SpecdashApp
from specdash.app.modals.confirm import ConfirmScreen
from specdash.hosts.local import LocalHost


def log_text(app) -> str:
    view = app.log_pane.view
    return "\n".join(view.text_at_row(r) for r in range(view.row_count))


async def test_launch_follow_ready_then_stop(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=env), log_path=empty_log(tmp_path), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        await launch_until_ready(pilot, app, started_groups, harness.launch_command(port))
        assert app.log_path == app.run_handle.log_path  # the log pane follows the new run's file
        await wait_until(pilot, lambda: "fired up and ready to roll" in log_text(app), what="ready line in log")
        assert "speculative_num_draft_tokens is adjusted" in log_text(app)
        # the server runs what specdash predicted (draft tokens 8 -> 4 with topk 1): no mismatch finding
        assert not [f for f in app.log_pane.findings if f.kind == "launch_mismatch"]
        gpus = app.gpu_pane
        await wait_until(pilot, lambda: any(p.process_class == "server" for p in gpus.processes),
                         what="server processes in the GPU pane")
        assert all(p.pgid == app.run_handle.pgid for p in gpus.processes if p.process_class == "server")

        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="stop confirmation")
        await pilot.press("y")
        await wait_until(pilot, lambda: not harness.pids_in_group(app.run_handle.pgid), what="group gone")
        await wait_until(pilot, lambda: not harness.gpu_processes(env), what="GPU memory released")


async def test_server_running_other_values_than_predicted_is_a_finding(tmp_path, started_groups):
    """The server's own server_args line states draft tokens 6 where specdash predicted 4 for the command: the
    findings panel says so, with both figures, and points at that line."""
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(pathlib.Path(harness.scenario_path("fast")).read_text().replace(
        "server_args:\n", "server_args:\n  speculative_num_draft_tokens: 6\n"))  # scripted: the server runs 6
    env = host_env(tmp_path, str(scenario))
    app = SpecdashApp(LocalHost(env=env), log_path=empty_log(tmp_path), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        app.builder_pane.set_command(harness.launch_command(harness.free_port()))
        await pilot.pause(0.2)
        assert app.builder_pane.report.effective["speculative_num_draft_tokens"] == 4
        await pilot.press("l")
        await wait_until(pilot, lambda: app.run_handle is not None, what="launch",
                         state=lambda: f"{type(app.screen).__name__} {[n.message for n in app._notifications]}")
        started_groups.append(app.run_handle.pgid)
        panel = app.log_pane.query_one(FindingsPanel)
        await wait_until(pilot, lambda: any(f.kind == "launch_mismatch" for f in panel.shown), what="finding")
        [finding] = [f for f in panel.shown if f.kind == "launch_mismatch"]
        assert finding.message == "the server runs speculative_num_draft_tokens 6, the command predicted 4"
        assert finding.severity == "warning" and finding.line > 0
        assert finding.data == {"server": {"speculative_num_draft_tokens": 6},
                                "predicted": {"speculative_num_draft_tokens": 4}}


async def test_crash_orphans_killed_with_K_then_relaunch(tmp_path, started_groups):
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(pathlib.Path(harness.scenario_path("crash_orphan")).read_text())
    env = host_env(tmp_path, str(scenario))
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=env), log_path=empty_log(tmp_path), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        app.builder_pane.set_command(harness.launch_command(port))
        await pilot.pause(0.2)
        await pilot.press("l")
        await wait_until(pilot, lambda: app.run_handle is not None, what="launch")
        pgid = app.run_handle.pgid
        started_groups.append(pgid)
        await wait_until(pilot, lambda: app.status_bar.server_state == "crashed", what="crash")
        assert "OutOfMemoryError" in app.status_bar.server_detail or "memory" in app.status_bar.server_detail.lower()

        await wait_until(pilot, lambda: any("K on one of its orphans cleans up the whole crashed server" in n.message
                                            for n in app._notifications), what="crash toast")
        gpus = app.gpu_pane
        await wait_until(pilot, lambda: any(p.process_class == "orphan" for p in gpus.processes), what="orphans")
        orphans = [p for p in gpus.processes if p.process_class == "orphan"]
        held = sum(p.used_mib or 0 for p in orphans)
        assert held > 0
        assert "orphan" in gpus.view.summary

        # K on one orphan row (nothing tagged): the confirmation lists the whole crashed server, detokenizer too
        await wait_until(pilot, lambda: any(p.source == "process group" for p in gpus.processes),
                         what="the detokenizer as a member of the crashed server")
        gpus.focus()
        await pilot.pause(0.1)
        table = gpus.query_one("DataTable")
        table.move_cursor(row=next(i for i, p in enumerate(gpus.processes) if p.process_class == "orphan"))
        await pilot.press("K")
        await wait_until(pilot, lambda: isinstance(app.screen, KillConfirmScreen), what="kill confirmation")
        listed = " ".join(str(w.render()) for w in app.screen.query(".kill-target"))
        assert "sglang::detokenizer" in listed and "no GPU memory" in listed and "sglang::scheduler_TP0" in listed
        assert "of a crashed server" in str(app.screen.query_one("#kill-title").render())
        members = len(harness.pids_in_group(pgid))  # every live process of the crashed group is listed: one signal
        assert f"SIGTERM to process group {pgid}: all {members} of its processes" in str(
            app.screen.query_one("#kill-how").render())
        await pilot.press("y")
        await wait_until(pilot, lambda: gpus.last_report is not None, timeout_s=40, what="kill report")
        report = gpus.last_report
        assert report.released
        assert report.before_mib >= held and report.after_mib == 0
        assert not harness.gpu_processes(env)
        assert not set(harness.pids_in_group(pgid)) & {p.pid for p in orphans}
        assert not harness.pids_in_group(pgid)  # the whole crashed server went, not only its GPU holders

        # relaunch with a healthy scenario: r on a crashed server launches the builder's command again
        scenario.write_text(pathlib.Path(harness.scenario_path("fast")).read_text())
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="restart confirmation")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.run_handle.pgid != pgid, what="new run")
        started_groups.append(app.run_handle.pgid)
        await wait_until(pilot, lambda: app.status_bar.server_state == "ready", what="ready after relaunch")


class ForwardsNoted(LocalHost):
    """LocalHost that notes which remote ports it was asked to forward (an SSH host forwards the same way)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.forwarded: list[int] = []

    async def forward_port(self, remote_port: int, remote_host: str = "127.0.0.1") -> str:
        self.forwarded.append(remote_port)
        return await super().forward_port(remote_port, remote_host)


async def test_abbreviated_port_flag_is_launched_forwarded_probed_and_benchmarked(tmp_path, started_groups,
                                                                                   monkeypatch):
    """``--po N`` is argparse's abbreviation of ``--port N``: the validator, the recorded port, the forward, the
    /health probe and the benchmark all use N (the server listens on nothing else)."""
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    env = host_env(tmp_path, "fast")
    port = harness.free_port()
    command = harness.launch_command(port).replace(f"--port {port}", f"--po {port}")
    host = ForwardsNoted(env=env)
    app = SpecdashApp(host, log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        app.builder_pane.set_command(command)
        await wait_until(pilot, lambda: any(d.code == "abbreviation" and "--port" in d.flags
                                            for d in app.builder_pane.report.diagnostics),
                         what="the abbreviation diagnostic",
                         state=lambda: [d.code for d in app.builder_pane.report.diagnostics])
        await pilot.press("l")
        await wait_until(pilot, lambda: app.run_handle is not None, what="launch")
        started_groups.append(app.run_handle.pgid)
        assert app.run_handle.port == port
        await wait_until(pilot, lambda: app.status_bar.server_state == "ready", what="ready (probe on the port)")
        # the forward and the benchmark use the port too
        result = await benchmark_from_the_bench_pane(pilot, app, port, num_requests=2, concurrency=1, output_len=8)
        assert result.completed == 2 and result.errors == 0
        assert host.forwarded and set(host.forwarded) == {port}


@pytest.mark.parametrize("tail_first_bytes", [None, 1500])
async def test_the_mismatch_finding_is_raised_again_after_re_attaching(tmp_path, started_groups, monkeypatch,
                                                                       tail_first_bytes):
    """Quit leaves the launched server running; ``connect`` re-attaches it and checks its server_args line against
    the run's recorded command again (also when that line is in the history read behind the tail: the last 1500 bytes shown first)."""
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(pathlib.Path(harness.scenario_path("fast")).read_text().replace(
        "server_args:\n", "server_args:\n  speculative_num_draft_tokens: 6\n"))  # scripted: the server runs 6
    env = host_env(tmp_path, str(scenario))
    message = "the server runs speculative_num_draft_tokens 6, the command predicted 4"
    app = SpecdashApp(LocalHost(env=env), log_path=empty_log(tmp_path), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        await launch_until_ready(pilot, app, started_groups, harness.launch_command(harness.free_port()))
        handle = app.run_handle
        await wait_until(pilot, lambda: any(f.message == message for f in app.log_pane.findings), what="finding")
    assert harness.pids_in_group(handle.pgid)  # left running on quit

    again = SpecdashApp(LocalHost(env=env), log_path=None, gpu_interval_s=0.3)
    if tail_first_bytes is not None:
        again.TAIL_FIRST_BYTES = tail_first_bytes
    async with again.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: again.run_handle is not None and again.log_path == handle.log_path,
                         what="re-attached")
        panel = again.log_pane.query_one(FindingsPanel)
        await wait_until(pilot, lambda: any(f.message == message for f in panel.shown), what="the finding again",
                         state=lambda: [f.message for f in panel.shown])
        [finding] = [f for f in panel.shown if f.kind == "launch_mismatch"]
        assert finding.line > 0 and "the command predicted 4" in screen_text(again)
        if tail_first_bytes is not None:
            assert again.log_pane.history is not None  # the server_args line was in the history


@pytest.mark.parametrize(("scenario", "steps"), [("default", 3), ("era_2026", 7)])
async def test_the_try_local_command_on_the_default_double_raises_no_false_mismatch(tmp_path, started_groups,
                                                                                    scenario, steps):
    """The command tools/try_local.sh offers (topk 1, draft tokens 8) on the double's default scenario: the double
    rewrites the draft tokens to steps + 1 as SGLang does, which is what specdash predicted: no mismatch finding.
    The same for the builder's fix of that command (steps 7) on era_2026 (which used to script draft tokens 4)."""
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, scenario)), log_path=empty_log(tmp_path), gpu_interval_s=0.3)
    command = harness.launch_command(harness.free_port()).replace("--speculative-num-steps 3",
                                                                   f"--speculative-num-steps {steps}")
    async with app.run_test(size=(160, 48)) as pilot:
        await launch_until_ready(pilot, app, started_groups, command)
        await wait_until(pilot, lambda: f"speculative_num_draft_tokens={steps + 1}," in log_text(app),
                         what="server_args line", state=lambda: log_text(app)[-2000:])
        assert ("speculative_num_draft_tokens is adjusted to speculative_num_steps + 1" in log_text(app)) == (steps == 3)
        await pilot.pause(0.3)
        assert not [f for f in app.log_pane.findings if f.kind == "launch_mismatch"]
        assert "the command predicted" not in screen_text(app)


async def test_the_header_says_stopping_while_a_server_that_ignores_sigterm_is_stopped(tmp_path, started_groups,
                                                                                      monkeypatch):
    """x on a server that ignores SIGTERM: until it is gone the header says what is happening (before, it said
    ``ready`` for the whole grace period, then ``stopped``)."""
    from specdash.app import lifecycle
    from specdash.app.status_bar import StatusBar

    monkeypatch.setattr(lifecycle, "STOP_GRACE_S", 3.0)
    env = host_env(tmp_path, "stubborn")
    app = SpecdashApp(LocalHost(env=env), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await launch_until_ready(pilot, app, started_groups, harness.launch_command(harness.free_port()))
        pgid = app.run_handle.pgid
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="stop dialog")
        await pilot.press("y")

        def header() -> str:
            return str(app.query_one(StatusBar).render())

        await wait_until(pilot, lambda: "server: stopping" in header(), what="the header while stopping",
                         state=header)
        assert f"(SIGTERM sent to process group {pgid}; SIGKILL after 3 s)" in header()
        await pilot.press("x")  # again while it stops: one line says so, no second dialog
        await wait_until(pilot, lambda: any("Already stopping: SIGTERM sent to process group" in str(n.message)
                                            for n in app._notifications),
                         what="the already-stopping notice", state=lambda: [n.message for n in app._notifications])
        assert not isinstance(app.screen, ConfirmScreen)
        await wait_until(pilot, lambda: app.status_bar.server_state == "stopped" and "stopping" not in header(),
                         what="stopped", state=header)
        assert harness.pids_in_group(pgid) == []
        await pilot.press("r")  # r after the stop: nothing is left to stop, the dialog says so
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen)
                         and app.screen.query("#confirm-body"), what="the restart dialog")
        body = str(app.screen.query_one("#confirm-body").render())
        assert body.startswith(f"Process group {pgid} is no longer running. Launch:"), body  # was "Stop process group"
        await pilot.press("escape")


def test_the_restart_dialog_names_what_differs_from_the_running_command():
    """After a re-attach the builder may hold another command (a new port, other depths): the restart dialog says
    which flags change, so the server does not move port or depth unannounced."""
    from specdash.app.lifecycle import LifecycleActions

    running = ("python3 -m sglang.launch_server --model-path m --port 48015 --speculative-algorithm EAGLE3 "
               "--speculative-num-steps 4 --speculative-eagle-topk 1 --speculative-num-draft-tokens 5")
    builder = ("python3 -m sglang.launch_server --model-path m --port 58879 \\\n  --speculative-algorithm EAGLE3 "
               "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 8\n")
    assert LifecycleActions._changes_note(running, builder) == (
        "\nNot the running server's command: --port 48015 -> 58879, --speculative-num-draft-tokens 5 -> 8, "
        "--speculative-num-steps 4 -> 3.")
    assert LifecycleActions._changes_note(running, running.replace(" --port", " \\\n  --port")) == ""
    assert LifecycleActions._changes_note(running, None) == ""
