"""The depth sweep as the user sees it while it runs and after it ends, against the SGLang test double: the plan's
lines keep their line breaks; the sweep table and chart fill in as each configuration finishes (not only at the
end); a sweep configuration's server is not told to "try a depth sweep"; a sweep that ends leaving one of its
configurations running (esc, or Cancel at the end) says so in the header and the bench status line, until the
server runs the builder's command again."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.double import harness, host_env
from support.guard import guard
from support.pilot import launch_until_ready, screen_text, wait_until
from textual.widgets import DataTable, Static

from specdash.app.main import SpecdashApp
from specdash.app.modals.confirm import ConfirmScreen
from specdash.bench.sweep import SweepDefinition, SweepPoint
from specdash.hosts.local import LocalHost
from specdash.logs.analyzer import LogAnalyzer

pytestmark = pytest.mark.timeout(guard(240))  # a hang guard, scaled like every wait

CASES = Path(__file__).parent / "data" / "cases"

TWO_POINTS = SweepDefinition(points=(
    SweepPoint("baseline", speculative=False),
    SweepPoint("chain-5", speculative_num_steps=4, speculative_eagle_topk=1, speculative_num_draft_tokens=5),
), repeats=1, ready_timeout_s=60)


def modest_acceptance_explanation(in_depth_sweep: bool) -> str:
    text = (CASES / "qwen3-eagle3-accept-rate.txt").read_text(encoding="utf-8").split("--- expected ---")[0]
    analyzer = LogAnalyzer()
    analyzer.engine.in_depth_sweep = in_depth_sweep
    analyzer.feed_many(text.splitlines())
    found = [f for f in analyzer.findings if f.kind == "acceptance" and "acceptance modest" in f.message]
    assert found, [f.message for f in analyzer.findings]
    return found[0].explanation


def test_a_sweep_configurations_server_is_not_told_to_try_a_depth_sweep():
    assert modest_acceptance_explanation(False).endswith("then try a depth sweep.")
    during = modest_acceptance_explanation(True)
    assert "try a depth sweep" not in during
    assert "this server is one configuration of the depth sweep running now: its table compares them." in during


async def test_sweep_plan_lines_table_fills_in_and_a_cancelled_sweep_names_what_runs(tmp_path, started_groups,
                                                                                      monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    given = tmp_path / "before.log"
    given.write_text("")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(given), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await launch_until_ready(pilot, app, started_groups, harness.launch_command(port))
        original = app.builder_pane.command
        bench = app.bench_pane
        bench.sweep_definition = TWO_POINTS
        await pilot.press("f4")
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#confirm-body"),
                         what="the plan")
        body = str(app.screen.query_one("#confirm-body", Static).render())
        lines = body.split("\n")  # one line each: the counts, each configuration, the estimate, the end
        assert lines[0].startswith("2 configurations, 2 server restarts")
        assert lines[1] == "  baseline: no speculation (every --speculative* flag removed)"
        assert lines[2] == "  chain-5: steps 4, topk 1, 5 draft tokens"
        assert lines[3].startswith("start-ups: ") and lines[4].startswith("At the end you choose: ")
        seen = screen_text(app)
        assert "draft tokens start-ups" not in seen and "runs At the end" not in seen
        await pilot.press("y")

        table = bench.query_one("#bench-sweep", DataTable)
        recommendation = bench.query_one("#bench-recommendation", Static)
        # the first configuration's row is shown while the sweep goes on with the second
        await wait_until(pilot, lambda: bench.sweeping is not None and table.row_count == 1, timeout_s=120,
                         what="the first configuration's row during the sweep",
                         state=lambda: f"{bench.status} rows={table.row_count}")
        assert str(table.get_row_at(0)[0]) == "baseline"
        assert "sweep running: 1 of 2 configs measured so far" in str(recommendation.render())
        assert "baseline" in screen_text(app)
        await wait_until(pilot, lambda: bench.sweeping is not None and bench.sweeping[2] == "chain-5"
                         and app.run_handle.command != original and app.log_pane.analyzer.engine.in_depth_sweep,
                         timeout_s=60, what="chain-5's server followed as a sweep configuration")
        await wait_until(pilot, lambda: "runs sweep config chain-5, not the builder's command"
                         in app.status_bar.server_detail, what="the header names the sweep's config during the sweep")
        # esc ends the sweep (cancel) and leaves chain-5 running: the screen says so
        await wait_until(pilot, lambda: "chain-5: repeat" in bench.status, timeout_s=60, what="chain-5 measuring")
        bench.focus()
        await pilot.press("escape")
        await wait_until(pilot, lambda: bench.sweeping is None and "depth sweep cancelled" in bench.status,
                         what="sweep cancelled")
        assert ("resume with S: 1 configuration measured; the server now runs sweep config chain-5, not the builder's "
                "command (r restarts it with the builder's command)") in bench.status
        # a cancelled sweep recommends nothing from the configurations it measured
        shown = str(recommendation.render())
        assert "sweep cancelled: 1 of 2 configs measured - no recommendation from part of a sweep; S resumes it" \
            in shown
        assert "recommended:" not in shown
        assert app.builder_pane.command == original
        await wait_until(pilot, lambda: "runs sweep config chain-5, not the builder's command"
                         in app.status_bar.server_detail, what="the header still names it after the sweep")
        assert "runs sweep config chain-5" in app.status_bar.line(160).plain
        # x stops it: a stopped server no longer "runs" the sweep's config
        await pilot.press("x")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="stop dialog")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.status_bar.server_state == "stopped", timeout_s=60, what="stopped",
                         state=lambda: app.status_bar.line(160).plain)
        await wait_until(pilot, lambda: "server: stopped (was sweep config chain-5, not the builder's command"
                         in app.status_bar.line(160).plain, what="the stopped header",
                         state=lambda: app.status_bar.line(160).plain)
        assert "runs sweep config" not in app.status_bar.line(160).plain
        # r restarts with the builder's command: the note goes
        await pilot.press("r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="restart dialog")
        await pilot.press("y")
        await wait_until(pilot, lambda: app.run_handle.command == original, timeout_s=60, what="restarted")
        started_groups.append(app.run_handle.pgid)
        await wait_until(pilot, lambda: app.status_bar.server_state == "ready"
                         and "sweep config" not in app.status_bar.server_detail, timeout_s=60,
                         what="the header without the sweep note")
