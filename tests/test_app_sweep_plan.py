"""The depth sweep as a plan, against the SGLang test double: ``S`` shows the configurations, the restarts and the
start-up estimate and asks first; the status says which configuration runs (k of n); the keys keep working during
the sweep (F-keys switch tabs, ``x`` cancels the sweep and stops the server); at the end the user keeps the fastest
configuration (the builder gets its command and the server runs it) or restores the original command."""

from __future__ import annotations

import asyncio
import re

import pytest
from support.double import empty_log, harness, host_env
from support.guard import guard
from support.pilot import launch_until_ready, wait_until
from textual.widgets import Static

from specdash.app.main import SpecdashApp
from specdash.app.modals.confirm import ConfirmScreen
from specdash.bench.sweep import SweepDefinition, SweepPoint
from specdash.hosts.local import LocalHost
from specdash.server import find_runs

pytestmark = pytest.mark.timeout(guard(240))  # a hang guard, scaled like every wait

TWO_POINTS = SweepDefinition(points=(
    SweepPoint("baseline", speculative=False),
    SweepPoint("chain-5", speculative_num_steps=4, speculative_eagle_topk=1, speculative_num_draft_tokens=5),
), repeats=1, ready_timeout_s=60)


def dialog_text(app) -> str:
    screen = app.screen
    assert isinstance(screen, ConfirmScreen), type(screen)
    body = screen.query("#confirm-body")
    return screen.question + "\n" + (str(body.first(Static).render()) if body else "")


def dialog_shown(app) -> bool:
    """A confirmation dialog is on screen with its body composed (when it has one)."""
    screen = app.screen
    return isinstance(screen, ConfirmScreen) and (not screen.details or bool(screen.query("#confirm-body")))


async def launched(pilot, app, started_groups, port: int) -> None:
    await launch_until_ready(pilot, app, started_groups, harness.launch_command(port))
    await wait_until(pilot, lambda: app.log_pane.analyzer.startup.time_to_ready_s is not None, what="start-up timed")


async def start_two_point_sweep(pilot, app):
    """The two-point sweep started the user's way on a ready server: F4, S, y on its plan; returns the bench pane."""
    bench = app.bench_pane
    bench.sweep_definition = TWO_POINTS
    await pilot.press("f4")
    await pilot.press("S")
    await wait_until(pilot, lambda: dialog_shown(app), what="the plan")
    await pilot.press("y")
    return bench


async def key_during_the_sweeps_first_restart(pilot, app, started_groups, port: int, key: str):
    """Launch, start the two-point sweep (F4, S, y), press ``key`` while it restarts the server for its first
    configuration and wait until the question is shown and the sweep holds; returns the bench pane."""
    await launched(pilot, app, started_groups, port)
    bench = await start_two_point_sweep(pilot, app)
    await wait_until(pilot, lambda: "restarting the server for baseline" in bench.status, what="restarting")
    await pilot.press(key)  # in the middle of the sweep's restart
    await wait_until(pilot, lambda: dialog_shown(app), what="stop/restart dialog")
    # while the question is open the sweep finishes the restart in flight and then holds: no new restart, no
    # benchmark, so what the question says stays true however long the user takes to answer
    await wait_until(pilot, lambda: "held until you answer" in bench.status, what="the sweep held")
    # what starts once released, and no "esc cancels": esc answers the question, it does not cancel the sweep
    assert bench.status == "depth sweep held until you answer; next: repeat 1/1 of baseline (config 1 of 2)"
    return bench


async def test_S_shows_the_plan_asks_and_ends_with_keep_or_restore(tmp_path, started_groups, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await launched(pilot, app, started_groups, port)
        original = app.builder_pane.command
        first_pgid = app.run_handle.pgid
        bench = app.bench_pane
        bench.sweep_definition = TWO_POINTS
        await pilot.press("f4")
        await pilot.press("S")
        await wait_until(pilot, lambda: dialog_shown(app), what="the plan")
        plan = dialog_text(app)
        assert plan.startswith("Run the depth sweep?")
        assert "2 configurations, 2 server restarts, 2 benchmark runs (1 per configuration):" in plan
        assert "baseline: no speculation (every --speculative* flag removed)" in plan
        assert "chain-5: steps 4, topk 1, 5 draft tokens" in plan
        # the double is ready within a second or two: "about 2 s (2 x 1 s" or "under 2 s (2 x under 1 s"
        assert "start-ups: " in plan and "(2 x " in plan and "the last start-up seen on this host" in plan
        assert "start-ups: unknown" not in plan
        assert "keep the fastest configuration (by output tokens/s) or restore your command" in plan
        assert app.run_handle.pgid == first_pgid  # nothing restarted before the answer
        await pilot.press("y")
        await wait_until(pilot, lambda: bench.sweeping is not None, what="sweep running")
        await wait_until(pilot, lambda: "sweep config " in bench.status, what="k of n in the status")
        assert " of 2: " in bench.status
        await pilot.press("f3")  # keys work during the sweep
        await wait_until(pilot, lambda: app.query_one("TabbedContent").active == "builder", what="F3")
        await pilot.press("f4")
        await wait_until(pilot, lambda: dialog_shown(app), timeout_s=180, what="keep or restore")
        question = dialog_text(app)
        result = bench.sweep_result
        rec = result.recommendation()
        assert rec.name is not None, rec.reason
        best = result.point(rec.name)
        assert question.startswith(f"Keep {rec.name}?") and "By output tokens/s: " in question
        await pilot.press("y")
        await wait_until(pilot, lambda: app.builder_pane.command == best.command, what="builder shows the kept")
        await wait_until(pilot, lambda: app.run_handle.command == best.command and not bench.running,
                         timeout_s=60, what="the server runs the kept configuration")
        started_groups.append(app.run_handle.pgid)
        assert best.command != original
        await wait_until(pilot, lambda: app.status_bar.server_state == "ready", what="ready again")


@pytest.mark.parametrize("key", ["x", "r"])
async def test_x_or_r_during_the_sweep_cancels_it_cleanly(tmp_path, started_groups, monkeypatch, key):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        bench = await key_during_the_sweeps_first_restart(pilot, app, started_groups, port, key)
        original = app.builder_pane.command
        text = dialog_text(app)
        title = "Stop the server?" if key == "x" else "Restart the server?"
        assert text.startswith(title) and "This cancels the depth sweep (config 1 of 2, baseline)" in text
        # the dialog never names a process group that is gone: while the sweep's restart is in flight it names the
        # server that restart is starting (it named the group the restart had already stopped)
        named = [int(n) for n in re.findall(r"[Pp]rocess group (\d+)", text)]
        assert all(harness.pids_in_group(n) for n in named), (named, text)
        assert len(await find_runs(app.host)) == 2 and dialog_shown(app)  # the first launch and the sweep's restart
        await pilot.press("y")
        await wait_until(pilot, lambda: bench.sweeping is None, what="sweep cancelled")
        assert "depth sweep cancelled" in bench.status
        expected_runs = 2 if key == "x" else 3  # the first launch, the sweep's restart (and r's)
        runs: list = []

        async def settled() -> bool:
            runs[:] = await find_runs(app.host)
            started_groups.extend(run.pgid for run in runs)
            alive = [run for run in runs if harness.pids_in_group(run.pgid)]
            if key == "x":
                return len(runs) == expected_runs and not alive and app.status_bar.server_state == "stopped"
            return (len(runs) == expected_runs and [run.pgid for run in alive] == [app.run_handle.pgid]
                    and app.run_handle.command == original and app.status_bar.server_state == "ready")

        deadline = asyncio.get_running_loop().time() + guard(60)
        # nothing left running untracked: only the server the header shows (r) or none (x)
        while not await settled() and asyncio.get_running_loop().time() < deadline:
            await pilot.pause(0.1)
        assert await settled(), (
            f"runs (newest first) {[(run.pgid, bool(harness.pids_in_group(run.pgid))) for run in runs]}, header "
            f"{app.status_bar.server_state} ({app.status_bar.server_detail}), followed run "
            f"{app.run_handle and app.run_handle.pgid}, builder's command kept: "
            f"{app.run_handle is not None and app.run_handle.command == original}")
        assert not isinstance(app.screen, ConfirmScreen)  # no keep/restore question after a cancel


async def test_answering_no_to_x_during_the_sweep_lets_it_go_on_to_its_end(tmp_path, started_groups, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        bench = await key_during_the_sweeps_first_restart(pilot, app, started_groups, port, "x")
        assert dialog_text(app).startswith("Stop the server?")
        await pilot.press("n")
        # the sweep goes on: chain-5 is measured and the end-of-sweep question comes
        await wait_until(pilot, lambda: bench.sweeping is None and dialog_shown(app), timeout_s=180,
                         what="keep or restore", state=lambda: bench.status)
        assert "held" not in bench.status
        assert [p.point.name for p in bench.sweep_result.points] == ["baseline", "chain-5"]
        assert dialog_text(app).startswith("Keep ") or "Nothing to keep" in dialog_text(app)
        started_groups.extend(run.pgid for run in await find_runs(app.host))

