"""The dry-run script runs through a real Host; its verdict is compared with specdash's prediction."""

from __future__ import annotations

import sys

from specdash.hosts.local import LocalHost
from specdash.sglang.dry_run import (
    DryRunResult,
    argv_of,
    compare,
    dry_run_command,
    dry_run_request,
    parse_dry_run_output,
)
from specdash.sglang.validate import validate_command

TEXT = ("SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --model-path /m/t --speculative-algorithm EAGLE "
        "--speculative-draft-model-path '/m/my draft' --speculative-eagle-topk 1 --speculative-num-draft-tokens 16 "
        "--speculative-num-steps 1")


async def test_script_reports_missing_sglang_as_an_exception():
    report = validate_command(TEXT)
    assert argv_of(report)[-2:] == ["--speculative-num-steps", "1"]
    assert "/m/my draft" in argv_of(report)
    host = LocalHost()
    await host.connect()
    result = await host.run(dry_run_command(sys.executable), timeout_s=60,
                            input=dry_run_request(argv_of(report), report.command.env_dict()))
    parsed = parse_dry_run_output(result.stdout)
    assert parsed is not None and not parsed.ok
    assert parsed.exception == "ModuleNotFoundError" and "sglang" in parsed.message


def test_compare_flags_value_and_verdict_disagreements():
    report = validate_command(TEXT, "0.5.23", {"architectures": ["LlamaForCausalLM"]})
    # what SGLang 0.5.23 returned for this command in the oracle venv (device cuda, no GPU)
    sglang = DryRunResult(True, None, "", {"speculative_algorithm": "EAGLE", "speculative_num_steps": 1,
                                           "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 2,
                                           "max_running_requests": 48, "disable_overlap_schedule": False,
                                           "enable_mixed_chunk": False, "page_size": 1,
                                           "attention_backend": "triton"}, (), "0.5.23")
    assert compare(report, sglang) == []
    other = DryRunResult(True, None, "", dict(sglang.resolved, speculative_num_draft_tokens=16), (), "0.5.23")
    diffs = compare(report, other)
    assert [(d.field, d.specdash, d.sglang) for d in diffs] == [("speculative_num_draft_tokens", 2, 16)]
    refused = DryRunResult(False, "ValueError", "boom", {}, (), "0.5.23")
    assert compare(report, refused)[0].field == "verdict"


def test_parse_ignores_noise_and_missing_marker():
    assert parse_dry_run_output("Traceback ...\nNameError") is None
    line = 'SPECDASH-DRY-RUN {"ok": true, "resolved": {"page_size": 1}, "warnings": ["w"], "version": "0.5.9"}'
    parsed = parse_dry_run_output("log line\n" + line + "\n")
    assert parsed.ok and parsed.resolved == {"page_size": 1} and parsed.warnings == ("w",)


def _broken_sglang(tmp_path) -> dict[str, str]:
    """An installed ``sglang`` whose import fails the way a broken install does (a CUDA library missing)."""
    import os

    package = tmp_path / "site" / "sglang"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "raise ImportError('libcudart.so.12: cannot open shared object file: No such file or directory')\n")
    return {**os.environ, "PYTHONPATH": str(tmp_path / "site")}


async def test_an_import_failure_is_said_and_never_a_disagreement(tmp_path):
    from specdash.sglang.dry_run import run_dry_run

    report = validate_command(TEXT)
    host = LocalHost(env=_broken_sglang(tmp_path))
    await host.connect()
    raw = await host.run(dry_run_command(sys.executable), timeout_s=60,
                         input=dry_run_request(argv_of(report), report.command.env_dict()))
    parsed = parse_dry_run_output(raw.stdout)
    assert parsed is not None and parsed.stage == "import" and parsed.import_failed
    assert compare(report, parsed) == []  # nothing was asked, so nothing agrees or disagrees
    result, problem = await run_dry_run(host, report, sys.executable)
    assert result is None
    assert problem.startswith("dry run could not ask SGLang on local")
    assert "libcudart.so.12" in problem and "nothing is known about the command" in problem


async def test_builder_dry_run_on_a_broken_install_shows_could_not_ask(tmp_path):
    from textual.app import App
    from textual.widgets import Static

    from specdash.app.builder import BuilderPane

    class PaneApp(App):
        def compose(self):
            yield BuilderPane(TEXT.replace("SGLANG_ENABLE_SPEC_V2=1 ", ""), "0.5.9")

    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        pane.python = sys.executable
        pane.host = LocalHost(env=_broken_sglang(tmp_path))
        await pilot.pause()
        pane.action_dry_run()
        await app.workers.wait_for_complete()
        await pilot.pause()
        status = str(pane.query_one("#builder-status", Static).render())
        assert "could not ask SGLang" in status and "libcudart" in status
        assert "DISAGREES" not in status and "agrees" not in status
        assert pane.dry_run_result is None
