"""specdash against the real SGLang 0.5.23 (the oracle venv built by tools/sglang_oracle/build_venv.sh).

Skipped when the venv is absent. Because importing SGLang and resolving 300+ argument sets takes minutes on two
cores, the module also needs ``SPECDASH_ORACLE=1`` (so the everyday suite stays fast). Run:
``SPECDASH_ORACLE=1 python -m pytest tests/test_oracle_sweep.py -q``.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("oracle_sweep", REPO / "tools" / "sglang_oracle" / "sweep.py")
sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sweep)

PYTHON = sweep.oracle_python()
pytestmark = [
    pytest.mark.oracle,
    pytest.mark.skipif(PYTHON is None, reason="no oracle venv (tools/sglang_oracle/build_venv.sh)"),
    pytest.mark.skipif(os.environ.get("SPECDASH_ORACLE") != "1", reason="set SPECDASH_ORACLE=1 to run the sweep"),
]


@pytest.mark.timeout(1800)
def test_random_sweep_agrees_with_real_sglang(tmp_path):
    models = sweep.make_models(tmp_path)
    cases = sweep.generate(320, 20261130, models)
    assert len(cases) >= 300
    results = sweep.run_oracle(cases, PYTHON)
    agree, bad = sweep.compare_all(cases, results)
    lines = [f"{' '.join(c['argv'][2:])}: " + "; ".join(f"{d.field} specdash={d.specdash!r} sglang={d.sglang!r}"
                                                        for d in diffs) for c, diffs, _ in bad]
    print(f"oracle agreement {agree}/{len(cases)}")
    assert not bad, "\n".join(lines)


@pytest.mark.timeout(600)
async def test_dry_run_script_through_a_host_matches_prediction(tmp_path):
    from specdash.hosts.local import LocalHost
    from specdash.sglang.dry_run import argv_of, compare, dry_run_command, dry_run_request, parse_dry_run_output
    from specdash.sglang.validate import validate_command

    models = sweep.make_models(tmp_path)
    text = (f"python -m sglang.launch_server --model-path {models['llama']} --device cpu --speculative-algorithm EAGLE "
            f"--speculative-draft-model-path {models['llama']} --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 16 --speculative-num-steps 1")
    report = validate_command(text, "0.5.23", {"architectures": ["LlamaForCausalLM"]})
    host = LocalHost()
    await host.connect()
    result = await host.run(dry_run_command(str(PYTHON)), timeout_s=300,
                            input=dry_run_request(argv_of(report), report.command.env_dict()))
    parsed = parse_dry_run_output(result.stdout)
    assert parsed is not None and parsed.ok, result.stderr[-2000:]
    assert parsed.version == "0.5.23"
    assert parsed.resolved["speculative_num_draft_tokens"] == 2
    assert any("adjusted to speculative_num_steps + 1" in w for w in parsed.warnings)
    assert compare(report, parsed) == []


@pytest.mark.timeout(900)
async def test_builder_pane_detects_version_and_dry_runs_on_the_host(tmp_path):
    from textual.app import App

    from specdash.app.builder import BuilderPane
    from specdash.hosts.local import LocalHost

    models = sweep.make_models(tmp_path)
    text = (f"python -m sglang.launch_server --model-path {models['llama']} --device cpu --speculative-algorithm EAGLE "
            f"--speculative-draft-model-path {models['llama']} --speculative-eagle-topk 1 "
            "--speculative-num-draft-tokens 16 --speculative-num-steps 1")

    class PaneApp(App):
        def compose(self):
            yield BuilderPane(text)

    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        pane.python = str(PYTHON)
        pane.host = LocalHost()
        await app.workers.wait_for_complete()
        assert pane.sglang_version == "0.5.23"
        await pilot.press("ctrl+r")
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.dry_run_result is not None and pane.dry_run_result.ok
        assert pane.disagreements == []
        assert "agrees with specdash" in str(pane.query_one("#builder-status").render())


_bspec = importlib.util.spec_from_file_location("oracle_broad_sweep", REPO / "tools" / "sglang_oracle" / "broad_sweep.py")
broad = importlib.util.module_from_spec(_bspec)
_bspec.loader.exec_module(broad)
VENV_055 = Path(os.environ.get("SPECDASH_ORACLE_VENV_055", str(Path.home() / ".cache" / "specdash-oracle-055")))


@pytest.mark.timeout(3600)
@pytest.mark.parametrize("version, venv", [("0.5.23", sweep.DEFAULT_VENV), ("0.5.5", VENV_055)])
def test_broad_sweep_agrees_with_real_sglang_on_995_percent(tmp_path, version, venv):
    python = sweep.oracle_python(venv)
    if python is None:
        pytest.skip(f"no oracle venv for {version} at {venv} (tools/sglang_oracle/README.md)")
    models = broad.make_models(tmp_path)
    cases = broad.generate(2000, 20261201, models, version)
    results = sweep.run_oracle(cases, python, timeout_s=3000)
    agree, hardware, bad = broad.judge(cases, results, version)
    counted = len(cases) - hardware
    lines = [f"{c['text']}: " + "; ".join(f"{d.field} specdash={d.specdash!r} sglang={d.sglang!r}" for d in diffs)
             for c, diffs, _, _ in bad]
    print(f"SGLang {version}: {agree}/{counted} agree, {hardware} hardware-dependent")
    assert agree >= 0.995 * counted, "\n".join(lines[:40])
