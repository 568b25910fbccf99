"""The benchmarks pane driven with Pilot against a real HTTP server on 127.0.0.1 (tests/bench_server.py)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.guard import guard
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

sys.path.insert(0, str(Path(__file__).parent))
from bench_server import BenchServerProcess  # noqa: E402
from support.pilot import screen_text, wait_until  # noqa: E402
from support.sweep import BASE, FakeLifecycle  # noqa: E402

from specdash.app.bench import BenchPane  # noqa: E402
from specdash.app.modals.confirm import ConfirmScreen  # noqa: E402
from specdash.bench.sweep import SweepDefinition, SweepPoint, SweepResult  # noqa: E402
from specdash.bench.workload import load_file  # noqa: E402

DATA = Path(__file__).parent / "data" / "bench"


class PaneApp(App):
    def __init__(self, url=None, readonly=False):
        super().__init__()
        self.url, self.readonly = url, readonly
        self.finished = []

    def compose(self) -> ComposeResult:
        yield BenchPane(self.url, readonly=self.readonly)

    def on_mount(self) -> None:
        pane = self.query_one(BenchPane)
        pane.bench_overrides = {"num_requests": 4, "concurrency": 2, "output_len": 10, "warmup_requests": 0,
                                "api": "generate"}
        pane.focus()

    def on_bench_pane_run_finished(self, message: BenchPane.RunFinished) -> None:
        self.finished.append(message)


async def wait_for(pilot, predicate, timeout_s: float = 15.0) -> None:
    deadline = asyncio.get_running_loop().time() + guard(timeout_s)
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await pilot.pause(0.05)


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


async def test_b_benchmarks_the_server_and_shows_the_figures(state_dir):
    with BenchServerProcess({"ttft_s": 0.02, "chunk_delay_s": 0.01, "tokens_per_chunk": 3}) as server:
        app = PaneApp(server.url)
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(BenchPane)
            await pilot.press("b")

            def live() -> str:
                return str(app.query_one("#bench-live", Static).render())

            # the run's end reaches the table, the live line, the status and the saved file's message in turn
            await wait_for(pilot, lambda: pane.results and not pane.running and app.finished
                           and "benchmark done" in pane.status and "4/4 requests" in live())
            result = pane.results[0]
            assert result.completed == 4 and not result.partial
            assert result.accept_length == pytest.approx(10 / 3)
            table = app.query_one("#bench-runs", DataTable)
            cells = dict(zip((str(c.label) for c in table.columns.values()), table.get_row_at(0), strict=True))
            assert cells["Workload"] == "short-chat" and cells["API"] == "generate" and cells["OK/failed"] == "4/0"
            assert cells["Accept len"] == "3.33 (per request)"
            tok_s = cells["out tok/s"]
            assert "4/4 requests" in live()
            # the live line, the table and the saved JSON show one figure: tokens (3 per chunk here), not chunks
            assert f"{result.total_output_tokens} tokens · {tok_s} output tokens/s" in live()
            saved = json.loads(app.finished[0].path.read_text())
            assert saved["total_output_tokens"] == result.total_output_tokens
            assert f"{saved['output_tokens_per_s']:.1f}" == tok_s
            assert "benchmark done" in pane.status
            assert app.finished and app.finished[0].path.parent == state_dir / "bench"
            assert json.loads(app.finished[0].path.read_text())["requests"][0]["chunk_offsets_ms"]


async def test_esc_cancels_and_keeps_a_partial_result():
    with BenchServerProcess({"ttft_s": 0.02, "chunk_delay_s": 0.05, "tokens_per_chunk": 1}) as server:
        app = PaneApp(server.url)
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(BenchPane)
            pane.bench_overrides["num_requests"] = 40  # ~10 s at concurrency 2: the cancel comes long before the end
            await pilot.press("b")
            await wait_for(pilot, lambda: pane.running)
            # the first two requests finished (the live line counts finished requests)
            await wait_for(pilot, lambda: any(f"{n}/40 requests" in str(app.query_one("#bench-live", Static).render())
                                              for n in range(2, 40)))
            await pilot.press("escape")
            await wait_for(pilot, lambda: pane.results and not pane.running)
            result = pane.results[0]
            assert result.partial and result.completed >= 2
            assert "PARTIAL (cancelled)" in app.query_one("#bench-runs", DataTable).get_row_at(0)[10]
            assert "partial result kept" in pane.status


async def test_keys_explain_what_is_missing():
    app = PaneApp(None)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BenchPane)
        # a user file joins the selector and becomes the selected workload
        pane.add_workload(load_file(DATA / "prompts.txt"))
        assert pane.selected_workload().prompts == ("first prompt", "second prompt")
        await pilot.press("b")
        assert "no server to benchmark" in pane.status
        await pilot.press("S")
        assert "needs the server lifecycle" in pane.status
        pane.readonly = True  # as in a replay or with --readonly
        pane.server_url = "http://127.0.0.1:9"
        await pilot.press("b")
        assert "read-only" in pane.status and not pane.running


def two_point_lifecycle() -> FakeLifecycle:
    """Bench servers for a baseline and chain-5: chain-5 streams 4 tokens per 30 ms verify step, the baseline 1
    token per 30 ms (~3x)."""
    return FakeLifecycle(timings={0: {"tokens_per_chunk": 1, "chunk_delay_s": 0.03, "speculative": False},
                                  5: {"tokens_per_chunk": 4, "chunk_delay_s": 0.03}})


def two_point_sweep(app, fake: FakeLifecycle) -> BenchPane:
    """The app's bench pane set to sweep baseline and chain-5 (one run each, 4 short requests) through ``fake``."""
    pane = app.query_one(BenchPane)
    pane.bench_overrides = {"num_requests": 4, "concurrency": 2, "output_len": 9, "warmup_requests": 0,
                            "api": "generate"}
    pane.restart_server = fake.restart
    pane.base_command = BASE
    pane.sweep_definition = SweepDefinition(
        (SweepPoint("baseline", speculative=False), SweepPoint("chain-5", True, None, 4, 1, 5)), repeats=1
    )
    return pane


async def test_a_resumed_sweeps_plan_keeps_the_last_start_up_seen_after_the_server_stopped(state_dir):
    fake = two_point_lifecycle()
    timed: list[float | None] = [42.0]  # the followed server's start-up, then none (the server was stopped)
    try:
        app = PaneApp(None)
        async with app.run_test(size=(160, 48)) as pilot:
            pane = two_point_sweep(app, fake)
            pane.startup_seconds = lambda: timed[0]
            for _ in range(2):
                await pilot.press("S")
                await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
                plan = str(app.screen.query_one("#confirm-body", Static).render())
                # before, the second time: "start-ups: unknown (2 restarts; no start-up of this server was seen"
                assert "start-ups: about 1 min 24 s (2 x 42 s, the last start-up seen on this host)" in plan, plan
                await pilot.press("n")
                await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
                timed[0] = None
            assert fake.commands == []
    finally:
        fake.close()


async def test_S_runs_the_sweep_through_the_injected_lifecycle(state_dir):
    fake = two_point_lifecycle()
    try:
        app = PaneApp(None)
        async with app.run_test(size=(160, 48)) as pilot:
            pane = two_point_sweep(app, fake)
            await pilot.press("S")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            plan = app.screen.query_one("#confirm-body", Static).render()
            assert "2 configurations, 2 server restarts" in str(plan)
            assert "start-ups: unknown (2 restarts; no start-up of this server was seen on this host" in str(plan)
            assert fake.commands == []  # nothing before the answer
            await pilot.press("y")
            await wait_for(pilot, lambda: pane.sweep_result is not None and isinstance(app.screen, ConfirmScreen))
            assert app.screen.question == "Keep chain-5?"
            assert len(fake.commands) == 2 and pane.server_url == fake.servers[-1].url
            await pilot.press("n")  # restore the original command: the server is restarted with it
            await wait_for(pilot, lambda: len(fake.commands) == 3 and not pane.running)
            assert fake.commands[-1] == BASE and pane.server_url == fake.servers[-1].url
            table = app.query_one("#bench-sweep", DataTable)
            assert table.row_count == 2
            column = [str(c.label) for c in table.columns.values()].index("speedup")
            assert table.get_row_at(0)[column] == "1.00x"
            speedup = float(table.get_row_at(1)[column].rstrip("x"))
            assert speedup > 1.5
            assert "recommended: chain-5" in str(app.query_one("#bench-recommendation", Static).render())
            assert list((state_dir / "bench").glob("sweep-*.json"))
    finally:
        fake.close()


def test_snapshot_bench_pane_with_a_sweep(snap_compare):
    """Deterministic picture from stored results: the runs table, the sweep table, chart and recommendation."""
    sweep = SweepResult.from_dict(json.loads((DATA / "sweep_result.json").read_text()))

    async def show(pilot):
        pane = pilot.app.query_one(BenchPane)
        for run in sweep.points[-1].runs:
            pane.show_run(run)
        pane.show_sweep(sweep)
        await pilot.pause()

    assert snap_compare(PaneApp(None), terminal_size=(160, 48), run_before=show)


async def test_status_names_the_server_then_the_tunnel():
    app = PaneApp(None)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BenchPane)
        pane.server_url = "http://127.0.0.1:41234"  # an SSH forward's local end
        pane.server_address = "gpu-box:30000"
        await pilot.pause()
        status = str(app.query_one("#bench-status").render())
        assert "server gpu-box:30000 (via tunnel :41234)" in status
        pane.server_url = "http://127.0.0.1:30000"  # a local server: its own port, no tunnel to mention
        pane.server_address = "local:30000"
        await pilot.pause()
        status = str(app.query_one("#bench-status").render())
        assert "server http://127.0.0.1:30000 - b:" in status and "tunnel" not in status


async def test_i_opens_a_file_of_pasted_output_beside_the_runs(tmp_path):
    from support.bench_outputs import sglang_bench_serving
    from test_bench_imported import MARKDOWN

    path = tmp_path / "bobs Sweep output.md"  # typed into the box: b, S and i must not fire the pane's keys
    path.write_text("our numbers:\n" + MARKDOWN + "\n" + sglang_bench_serving(retokenized=12034))
    app = PaneApp(None)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BenchPane)
        await pilot.press("i")
        await pilot.pause()
        assert app.focused.id == "bench-open-path"
        await pilot.press(*str(tmp_path / "missing.md"), "enter")
        await pilot.pause()
        assert pane.status.startswith(f"cannot read {tmp_path / 'missing.md'}: No such file")
        box = app.query_one("#bench-open-path")
        box.value = ""
        await pilot.press(*str(path), "enter")
        await pilot.pause()
        assert not pane.running and pane.results == []
        assert pane.status == (f"opened {path}: 4 results (markdown table, sglang bench_serving), "
                               "2 findings below")
        table = app.query_one("#bench-runs", DataTable)
        labels = [str(c.label) for c in table.columns.values()]
        rows = [dict(zip(labels, table.get_row_at(i), strict=True)) for i in range(table.row_count)]
        assert rows[1]["Workload"] == "eagle3" and rows[1]["out tok/s"] == "142.1"
        assert rows[1]["Accept len"] == "2.90 (imported)"
        assert rows[1]["Note"] == "imported: markdown table, line 7; steps 3, topk 1, draft tokens 4; 1 finding"
        assert rows[3]["OK/failed"] == "200/-" and rows[3]["out tok/s"] == "568.9"
        warnings = str(app.query_one("#bench-warnings", Static).render())
        assert "line 7: pasted speedup 1.9x; recomputed 1.58x from 142.1/90.0" in warnings
        assert "generated 51200 tokens but the text retokenizes to 12034" in warnings
        await pilot.press("i", "escape")
        await pilot.pause()
        assert not box.display and app.focused is pane


def close_sweep() -> SweepResult:
    """The stored sweep with every mean moved into 2300-2420 tok/s (configurations 1-5 % apart, as on a real box)."""
    data = json.loads((DATA / "sweep_result.json").read_text())
    for point, mean in zip(data["points"], (2302.9, 2354.8, 2413.8, 2369.5), strict=True):
        point["throughput"]["mean"] = point["throughput"]["median"] = mean
    return SweepResult.from_dict(data)


async def show_stored_sweep(pilot, sweep: SweepResult) -> BenchPane:
    pane = pilot.app.query_one(BenchPane)
    for run in sweep.points[-1].runs:
        pane.show_run(run)
    pane.show_sweep(sweep)
    # the pane brings the sweep's table into view after a refresh: wait for it on screen (a loaded machine takes
    # more than two frames), then for the frame after it
    await wait_until(pilot, lambda: not pane._sweep_to_view and "speedup" in screen_text(pilot.app),
                     what="the sweep table in view", state=lambda: screen_text(pilot.app))
    await pilot.pause()
    return pane


async def test_80x24_the_runs_table_shows_throughput_and_accept_length_first():
    sweep = SweepResult.from_dict(json.loads((DATA / "sweep_result.json").read_text()))
    async with PaneApp(None).run_test(size=(80, 24)) as pilot:
        pane = pilot.app.query_one(BenchPane)
        for run in sweep.points[-1].runs:
            pane.show_run(run)
        await pilot.pause()  # the table lays out its new rows (a capture before that would show a stale layout)
        await wait_until(pilot, lambda: "batch1-latency" in screen_text(pilot.app), what="the runs table",
                         state=lambda: screen_text(pilot.app))
        screen = screen_text(pilot.app)
        assert "Workload        out tok/s  Accept len" in screen
        assert "batch1-latency  226.8      3.25 (per request)" in screen
        assert "TPOT p50 ms" not in screen and "Note" not in screen
        await pilot.press("right", "right")
        # the later columns are reachable with right (the table scrolls them in: waited for, a loaded machine is slow)
        await wait_until(pilot, lambda: "TPOT p50 ms" in screen_text(pilot.app) and "API" in screen_text(pilot.app),
                         what="the later columns", state=lambda: screen_text(pilot.app))
        await pilot.press("left", "left")
        await wait_until(pilot, lambda: "Workload        out tok/s  Accept len" in screen_text(pilot.app),
                         what="the first columns again", state=lambda: screen_text(pilot.app))


async def test_80x24_a_finished_sweep_is_scrolled_into_view_and_up_scrolls_back():
    sweep = SweepResult.from_dict(json.loads((DATA / "sweep_result.json").read_text()))
    async with PaneApp(None).run_test(size=(80, 24)) as pilot:
        await show_stored_sweep(pilot, sweep)
        screen = screen_text(pilot.app)
        for line in ("chain-5   227.4      2.04x    3.25        ok", "output tokens/s per config",
                     "recommended: chain-5 (5 draft tokens, 227.4 output tokens/s, 2.04x"):
            assert line in screen
        assert "workload: short-chat" not in screen  # the controls are scrolled off, above
        await pilot.press(*["up"] * 12)
        await pilot.pause()
        screen = screen_text(pilot.app)
        assert "workload: short-chat" in screen and "recommended: chain-5" not in screen
        await pilot.press("pagedown", "pagedown")
        await pilot.pause()
        assert "recommended: chain-5" in screen_text(pilot.app)


async def test_a_sweep_whose_fastest_is_within_the_baselines_noise_recommends_nothing_as_a_speedup():
    from specdash.bench.stats import repeat_spread

    sweep = SweepResult.from_dict(json.loads((DATA / "sweep_result.json").read_text()))
    base = sweep.point("baseline")
    base.status, base.throughput = "unstable", repeat_spread([190.0, 260.0, 205.0])
    async with PaneApp(None).run_test(size=(160, 48)) as pilot:
        await show_stored_sweep(pilot, sweep)
        shown = str(pilot.app.query_one("#bench-recommendation", Static).render())
        assert shown.startswith("no configuration is faster than the baseline beyond its noise; the fastest stable "
                                "is chain-5 (5 draft tokens, 227.4 output tokens/s")
        assert "recommended:" not in shown  # before: "recommended: chain-5 (...) is the fastest stable config"
        notes = str(pilot.app.query_one("#bench-sweep-notes", Static).render()).splitlines()
        assert any(note.endswith(": ok: within noise of the baseline") for note in notes), notes


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_sweep_chart_shows_a_few_percent_as_different_bar_heights(size):
    async with PaneApp(None).run_test(size=size) as pilot:
        await show_stored_sweep(pilot, close_sweep())
        await pilot.press("pagedown", "pagedown")
        await pilot.pause()
        screen = screen_text(pilot.app)
        assert "output tokens/s per config (axis from 2192, not 0)" in screen
        chart = [line for line in screen.splitlines() if "┤" in line]
        assert not any(line.split("│")[1].strip().startswith("0.0┤") for line in chart)
        bottom, top = chart[-1], chart[0]
        assert top.count("█") < bottom.count("█")  # the slower configs' bars stop below the top row


@settings(max_examples=300, deadline=None)
@given(st.floats(min_value=-1e6, max_value=1e6), st.floats(min_value=1e-3, max_value=1e6))
def test_chart_axis_labels_are_evenly_spaced_inside_the_axis(low, span):
    from specdash.app.bench.pane import axis_ticks

    ticks = axis_ticks(low, low + span)
    assert 1 <= len(ticks) <= 50
    assert all(low - span * 1e-6 <= t <= low + span * (1 + 1e-6) for t in ticks)
    steps = [b - a for a, b in zip(ticks, ticks[1:], strict=False)]
    assert all(abs(s - steps[0]) <= abs(steps[0]) * 1e-6 for s in steps)


def test_chart_floor():
    from specdash.app.bench.pane import chart_floor

    assert chart_floor([]) == 0.0
    assert chart_floor([100.0, 250.0]) == 0.0  # a 2.5x difference: the axis from 0 shows it
    assert chart_floor([2302.9, 2413.8]) == pytest.approx(2302.9 - 110.9)
    assert chart_floor([500.0, 500.0]) == pytest.approx(475.0)


def test_snapshot_bench_pane_80x24_after_a_sweep(snap_compare):
    """80x24: the finished sweep's table, chart and recommendation are in view (the runs are above, scrolled)."""
    async def show(pilot):
        await show_stored_sweep(pilot, SweepResult.from_dict(json.loads((DATA / "sweep_result.json").read_text())))

    assert snap_compare(PaneApp(None), terminal_size=(80, 24), run_before=show)


async def test_80x24_the_sweep_table_shows_each_config_status_and_a_ratio_to_an_unstable_baseline_says_so():
    data = json.loads((DATA / "sweep_result.json").read_text())
    data["points"][0]["status"] = "unstable"  # the baseline's repeats disagreed
    async with PaneApp(None).run_test(size=(80, 24)) as pilot:
        await show_stored_sweep(pilot, SweepResult.from_dict(data))
        screen = screen_text(pilot.app)
        assert "Config    out tok/s  speedup  accept len  Status" in screen
        assert "baseline  111.3      1.00x    -           unstable" in screen
        assert "chain-5   227.4      2.04x    3.25        ok" in screen
        assert "2.04x a baseline that was unstable (not a reliable ratio)" in " ".join(
            line.strip("│ ") for line in screen.splitlines())


async def test_80x24_console_f4_after_a_sweep_shows_the_sweep_not_only_the_runs(tmp_path, monkeypatch):
    """In the console (a replay here), a sweep shown while the log tab is in front is in view when F4 shows the
    pane; down/up scroll the pane to the recommendation and back to the controls."""
    from test_app_snapshots import _app, _bench

    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _bench(pilot)
        screen = screen_text(app)
        assert "chain-5   227.4      2.04x    3.25        ok" in screen and "workload: short-chat" not in screen
        await pilot.press(*["down"] * 12)
        await pilot.pause()
        await wait_until(pilot, lambda: "recommended: chain-5" in screen_text(app), what="the recommendation",
                         state=lambda: screen_text(app))
        await pilot.press(*["up"] * 30)
        await pilot.pause()
        await wait_until(pilot, lambda: "workload: short-chat" in screen_text(app), what="the controls",
                         state=lambda: screen_text(app))


async def test_an_unstable_sweep_says_why_and_m_measures_only_the_unstable_configs_again(state_dir):
    from specdash.bench.stats import repeat_spread

    fake = two_point_lifecycle()
    try:
        app = PaneApp(None)
        async with app.run_test(size=(160, 48)) as pilot:
            pane = two_point_sweep(app, fake)
            await pilot.press("S")
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            await pilot.press("y")
            await wait_for(pilot, lambda: pane.sweep_result is not None and isinstance(app.screen, ConfirmScreen))
            assert app.screen.question == "Keep chain-5?" and not app.screen.query("#more")  # all stable: no m
            await pilot.press("n")
            await wait_for(pilot, lambda: len(fake.commands) == 3 and not pane.running)
            # the same sweep as a busy machine leaves it: the baseline's repeats differed by 24 %
            checkpoint = next((state_dir / "bench").glob("sweep-*.json"))
            busy = SweepResult.from_dict(json.loads(checkpoint.read_text()))
            base = busy.point("baseline")
            base.status, base.throughput = "unstable", repeat_spread([2644, 2136, 2128])
            checkpoint.write_text(json.dumps(busy.to_dict()))
            chain = busy.point("chain-5").throughput.values
            pane.show_sweep(busy)
            pane._ask_keep_or_restore(busy, BASE)
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#confirm-body"))
            body = str(app.screen.query_one("#confirm-body", Static).render())
            # chain-5 is slower than the busy baseline's mean: named, not called a speedup, not offered to keep
            # (was "Keep chain-5?" with "Keep chain-5 (y)"): y measures the baseline again
            assert app.screen.question == "Nothing to keep yet: measure the unstable configurations again?"
            assert "No configuration to keep (no configuration is faster than the baseline beyond its noise; the " \
                   "fastest stable is chain-5" in body
            assert "Fastest" not in body and "is the fastest stable config" not in body
            assert "a baseline that was unstable (not a reliable ratio)" in body
            assert "rerun the baseline before trusting this" in body
            assert "baseline: repeats 2644 / 2136 / 2128 output tokens/s, 24.2 % apart (their noise allows 5.0 %)" in body
            assert "Measure again (y): 1 new repeat of baseline (a restart each)" in body
            assert str(app.screen.query_one("#yes").label) == "Measure again (y)" and not app.screen.query("#more")
            await pilot.press("y")
            await wait_for(pilot, lambda: len(fake.commands) == 4 and not pane.running
                           and isinstance(app.screen, ConfirmScreen), timeout_s=30)
            assert "--speculative" not in fake.commands[3]  # only the baseline was measured again
            again = pane.sweep_result
            assert again.point("baseline").status == "ok" and again.point("baseline").earlier_values == [2644, 2136,
                                                                                                          2128]
            assert again.point("chain-5").throughput.values == chain  # kept from the checkpoint
            assert app.screen.question == "Keep chain-5?" and not app.screen.query("#more")
            table = app.query_one("#bench-sweep", DataTable)
            assert str(table.get_row_at(0)[4]) == "ok"  # the status word; the note is a line under the table
            notes = str(app.query_one("#bench-sweep-notes", Static).render()).splitlines()
            assert notes[0] == "baseline: ok: measured again (the earlier repeats 2644 / 2136 / 2128 were unstable)"
            await pilot.press("y")
            await wait_for(pilot, lambda: len(fake.commands) == 5 and not pane.running)
            assert "--speculative-num-draft-tokens 5" in fake.commands[4]
    finally:
        fake.close()


async def test_a_sweep_with_nothing_stable_offers_to_measure_again_or_restore(state_dir):
    from specdash.bench.stats import repeat_spread
    from specdash.bench.sweep import PointResult

    definition = SweepDefinition((SweepPoint("baseline", speculative=False), SweepPoint("chain-5", True, None, 4, 1,
                                                                                         5)), repeats=3)
    busy = SweepResult(definition, BASE, {}, "k", "now", finished=True, points=[
        PointResult(p, "unstable", command=f"cmd {p.name}", throughput=repeat_spread(values))
        for p, values in zip(definition.points, ([2644, 2136, 2128], [2225, 2154, 2685]), strict=True)])
    app = PaneApp(None)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(BenchPane)
        pane._ask_keep_or_restore(busy, BASE)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#confirm-body"))
        body = str(app.screen.query_one("#confirm-body", Static).render())
        assert app.screen.question == "Nothing to keep yet: measure the unstable configurations again?"
        assert "differ by more than 5 % (up to 24.2 %)" in body and "other work on the machine" in body
        assert "chain-5: repeats 2225 / 2154 / 2685 output tokens/s, 23.9 % apart" in body
        assert "Measure again (y): 3 new repeats of baseline, chain-5 (a restart each)" in body
        assert "Restore (n): the server is restarted with your command." in body
        assert "No configuration to keep (no stable point" in body
        assert "Keep" not in body.split("Measure again")[0].split("\n")[0]
        buttons = [str(b.label) for b in app.screen.query("Button")]
        assert buttons == ["Measure again (y)", "Restore my command (n)"]  # y answers the question asked
        screen = app.screen.region
        for button in app.screen.query("Button"):  # on screen at 80x24 however long the body
            assert screen.contains_region(button.region), (str(button.label), button.region)
        chosen = []
        pane.measure_unstable_again = lambda result, original: chosen.append(("again", original))
        pane._go_on_with = lambda command, kept: chosen.append(("restore", command, kept))
        await pilot.press("y")
        await wait_for(pilot, lambda: chosen == [("again", BASE)])
        pane._ask_keep_or_restore(busy, BASE)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#confirm-body"))
        await pilot.press("n")  # as in the keep dialog: n restores
        await wait_for(pilot, lambda: chosen[-1] == ("restore", BASE, False))


async def test_a_row_drawn_before_the_table_measures_it_is_redrawn_with_the_measured_widths():
    """A busy app can draw the runs table between ``add_row`` and Textual's idle-time measurement of the new row:
    the row must not keep the label-wide columns it was first drawn with (it used to: ``short-ch  2752.1`` under a
    header with wider columns, the accept length cut to ``2.84 (fres``)."""
    sweep = SweepResult.from_dict(json.loads((DATA / "sweep_result.json").read_text()))
    async with PaneApp(None).run_test(size=(80, 24)) as pilot:
        pane = pilot.app.query_one(BenchPane)
        for run in sweep.points[-1].runs:
            pane.show_run(run)
            screen_text(pilot.app)  # drawn now, before the idle pass measures the row
        await pilot.pause()
        await wait_until(pilot, lambda: "batch1-latency  226.8      3.25 (per request)" in screen_text(pilot.app),
                         what="the row drawn with the measured widths", state=lambda: screen_text(pilot.app))
        assert "batch1-l " not in screen_text(pilot.app)


def remeasured_sweep() -> SweepResult:
    """The stored sweep with chain-16 measured again and still unstable: its note is the longest a row gets."""
    from specdash.bench.stats import repeat_spread

    sweep = SweepResult.from_dict(json.loads((DATA / "sweep_result.json").read_text()))
    point = sweep.point("chain-16")
    point.status, point.throughput = "unstable", repeat_spread([130.0, 158.0, 150.0])
    point.earlier_values = [2521.0, 1851.0, 2656.0]
    return sweep


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_after_a_remeasure_the_sweep_table_keeps_its_figures_on_screen_and_the_note_goes_below(size):
    """A long note (measured again, earlier repeats) used to widen the status column so far that at 160x48 the
    spread, shape, predicted and latency columns were off screen; now the cell says "unstable" and the note is
    a line of its own under the table."""
    async with PaneApp(None).run_test(size=size) as pilot:
        await show_stored_sweep(pilot, remeasured_sweep())
        screen = screen_text(pilot.app)
        header = next(line for line in screen.splitlines() if "Config" in line and "out tok/s" in line)
        wanted = ["Config", "out tok/s", "speedup", "accept len", "Status"]
        if size[0] >= 160:
            wanted += ["spread", "steps/topk/draft", "α", "predicted", "TTFT p50", "ITL p50"]
        for title in wanted:
            assert f" {title} " in f"{header} ", f"{title!r} not on screen: {header!r}"
        row = next(line for line in screen.splitlines() if line.strip("│ ").startswith("chain-16 "))
        assert "unstable" in row and "earlier repeats" not in row
        flat = " ".join(" ".join(line.strip("│ ") for line in screen.splitlines()).split())
        assert ("chain-16: unstable: repeats differ by 18.7 %; measured again (the earlier repeats 2521 / 1851 / "
                "2656 were unstable)") in flat
