"""Benchmarks from the app, against the SGLang test double: `b` benchmarks the running server; `S` runs a
(short) depth sweep, restarting the server per configuration through the lifecycle, to a table and a
recommendation."""

from __future__ import annotations

from support.double import empty_log, harness, host_env
from support.pilot import benchmark_from_the_bench_pane, launch_until_ready, wait_until

from specdash.app.main import SpecdashApp
from specdash.app.modals.confirm import ConfirmScreen
from specdash.bench.sweep import SweepDefinition, SweepPoint
from specdash.hosts.local import LocalHost


async def test_b_benchmarks_the_launched_server_and_S_sweeps(tmp_path, started_groups, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    env = host_env(tmp_path, "fast")
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=env), log_path=empty_log(tmp_path), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await launch_until_ready(pilot, app, started_groups, harness.launch_command(port))
        bench = app.bench_pane
        result = await benchmark_from_the_bench_pane(pilot, app, port, num_requests=4, concurrency=2, output_len=32)
        assert result.completed == 4 and result.errors == 0
        assert result.output_tokens_per_s > 0
        assert result.ttft_ms.p50 is not None and result.ttft_ms.p50 > 0
        # what the console knows is recorded with the run: the GPU from the sampler, the rate (all at once)
        from specdash.bench.comparable import comparable_key, group_text

        key = comparable_key(result)
        assert key["GPU"] == "NVIDIA H100 80GB HBM3" and key["request rate"] == "inf"
        assert "not stated" not in group_text(key)  # before: "not stated: request rate, GPU"

        # a two-point sweep: baseline and a topk-1 chain, each on a freshly restarted server
        bench.sweep_definition = SweepDefinition(points=(
            SweepPoint("baseline", speculative=False),
            SweepPoint("chain-5", speculative_num_steps=4, speculative_eagle_topk=1,
                       speculative_num_draft_tokens=5),
        ), repeats=1, ready_timeout_s=60)
        first_pgid = app.run_handle.pgid
        await pilot.press("S")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), what="the sweep's plan")
        await pilot.press("y")
        await wait_until(pilot, lambda: bench.sweep_result is not None, timeout_s=120, what="sweep result")
        started_groups.append(app.run_handle.pgid)
        assert app.run_handle.pgid != first_pgid  # the server was restarted for the sweep
        rows = bench.sweep_result.rows()
        assert len(rows) == 2
        assert "--speculative-num-draft-tokens 5" in app.run_handle.command
        assert bench.sweep_result.recommendation() is not None
