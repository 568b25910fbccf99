"""The benchmarks pane driven with Pilot against a real HTTP server on 127.0.0.1 (tests/bench_server.py)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

sys.path.insert(0, str(Path(__file__).parent))
from bench_server import BenchServerProcess  # noqa: E402
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
    deadline = asyncio.get_running_loop().time() + timeout_s
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
            await wait_for(pilot, lambda: pane.results and not pane.running)
            result = pane.results[0]
            assert result.completed == 4 and not result.partial
            assert result.accept_length == pytest.approx(10 / 3)
            table = app.query_one("#bench-runs", DataTable)
            row = table.get_row_at(0)
            assert row[1] == "short-chat" and row[2] == "generate" and row[3] == "4/0"
            assert row[9] == "3.33 (per request)"
            live = str(app.query_one("#bench-live", Static).render())
            assert "4/4 requests" in live
            # the live line, the table and the saved JSON show one figure: tokens (3 per chunk here), not chunks
            assert f"{result.total_output_tokens} tokens · {row[4]} output tokens/s" in live
            saved = json.loads(app.finished[0].path.read_text())
            assert saved["total_output_tokens"] == result.total_output_tokens
            assert f"{saved['output_tokens_per_s']:.1f}" == row[4]
            assert "benchmark done" in pane.status
            assert app.finished and app.finished[0].path.parent == state_dir / "bench"
            assert json.loads(app.finished[0].path.read_text())["requests"][0]["chunk_offsets_ms"]


async def test_esc_cancels_and_keeps_a_partial_result():
    with BenchServerProcess({"ttft_s": 0.02, "chunk_delay_s": 0.05, "tokens_per_chunk": 1}) as server:
        app = PaneApp(server.url)
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(BenchPane)
            pane.bench_overrides["num_requests"] = 8
            await pilot.press("b")
            await wait_for(pilot, lambda: pane.running)
            await pilot.pause(0.6)  # the first two requests (~0.47 s) finished
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


async def test_S_runs_the_sweep_through_the_injected_lifecycle(state_dir):
    # chain-5 streams 4 tokens per 30 ms verify step, the baseline 1 token per 30 ms: ~3x
    fake = FakeLifecycle(timings={0: {"tokens_per_chunk": 1, "chunk_delay_s": 0.03, "speculative": False},
                                  5: {"tokens_per_chunk": 4, "chunk_delay_s": 0.03}})
    try:
        app = PaneApp(None)
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.query_one(BenchPane)
            pane.bench_overrides = {"num_requests": 4, "concurrency": 2, "output_len": 9, "warmup_requests": 0,
                                    "api": "generate"}
            pane.restart_server = fake.restart
            pane.base_command = BASE
            pane.sweep_definition = SweepDefinition(
                (SweepPoint("baseline", speculative=False), SweepPoint("chain-5", True, None, 4, 1, 5)), repeats=1
            )
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
            assert table.get_row_at(0)[4] == "1.00x"
            speedup = float(table.get_row_at(1)[4].rstrip("x"))
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


async def test_o_opens_a_file_of_pasted_output_beside_the_runs(tmp_path):
    from support.bench_outputs import sglang_bench_serving
    from test_bench_imported import MARKDOWN

    path = tmp_path / "bobs Sweep output.md"  # typed into the box: b, S and o must not fire the pane's keys
    path.write_text("our numbers:\n" + MARKDOWN + "\n" + sglang_bench_serving(retokenized=12034))
    app = PaneApp(None)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BenchPane)
        await pilot.press("o")
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
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        assert rows[1][1] == "eagle3" and rows[1][4] == "142.1" and rows[1][9] == "2.90 (imported)"
        assert rows[1][10] == "imported: markdown table, line 7; steps 3, topk 1, draft tokens 4; 1 finding"
        assert rows[3][3] == "200/-" and rows[3][4] == "568.9"
        warnings = str(app.query_one("#bench-warnings", Static).render())
        assert "line 7: pasted speedup 1.9x; recomputed 1.58x from 142.1/90.0" in warnings
        assert "generated 51200 tokens but the text retokenizes to 12034" in warnings
        await pilot.press("o", "escape")
        await pilot.pause()
        assert not box.display and app.focused is pane


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_sweep_with_no_stable_point_says_why_in_the_dialog(size):
    """Every config unstable (a busy machine): the end-of-sweep dialog says by how much the repeats differed and
    the usual cause, not only "no stable point"."""
    from specdash.bench.stats import repeat_spread
    from specdash.bench.sweep import PointResult

    def unstable(point, values):
        return PointResult(point, "unstable", throughput=repeat_spread(values))

    points = (SweepPoint("baseline", speculative=False), SweepPoint("chain-5", True, None, 4, 1, 5))
    result = SweepResult(SweepDefinition(points, repeats=3), BASE, {}, "k", "now",
                         points=[unstable(points[0], [2644, 2136, 2128]), unstable(points[1], [2225, 2154, 2685])])
    app = PaneApp(None)
    async with app.run_test(size=size) as pilot:
        pane = app.query_one(BenchPane)
        pane._ask_keep_or_restore(result, BASE)
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#confirm-body"))
        body = str(app.screen.query_one("#confirm-body", Static).render())
        assert app.screen.question == "Restore your launch command?"
        assert "No configuration to keep: no stable point: the repeats of every measured configuration differ by " \
               "more than 5 % (up to 24.2 %)" in " ".join(body.split())
        assert "rerun the sweep when the machine is quiet" in " ".join(body.split())
