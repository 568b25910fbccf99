import os, signal
import pytest
from support.double import empty_log, harness, host_env
from support.pilot import wait_until, screen_text
from test_app_sweep_plan import key_during_the_sweeps_first_restart, dialog_text, dialog_shown
from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost
from specdash.server import find_runs

async def test_dies_while_held(tmp_path, started_groups, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        bench = await key_during_the_sweeps_first_restart(pilot, app, started_groups, port, "r")
        print("STATUS1", bench.status)
        await pilot.press("n")
        await pilot.pause(0.3)
        print("STATUS2", bench.status)
        await pilot.press("x")
        await wait_until(pilot, lambda: dialog_shown(app), what="stop dialog")
        await pilot.pause(0.5)
        print("STATUS3", bench.status, "| DIALOG", dialog_text(app)[:300])
        pg = app.run_handle.pgid
        started_groups.extend(r.pgid for r in await find_runs(app.host))
        os.killpg(pg, signal.SIGKILL)
        await wait_until(pilot, lambda: app.status_bar.server_state in ("crashed", "stopped"), what="dead", timeout_s=30)
        await pilot.pause(1)
        print("HEADER", app.status_bar.server_state, app.status_bar.server_detail)
        print("STATUS4", bench.status)
        print("SCREEN4", screen_text(app))
        await pilot.press("n")
        for i in range(40):
            await pilot.pause(0.5)
            if bench.sweeping is None: break
        print("STATUS5", bench.status, bench.sweeping)
        print("NOTES", [str(n.message)[:200] for n in app._notifications])
        print("SCREEN5", screen_text(app))
        started_groups.extend(r.pgid for r in await find_runs(app.host))
