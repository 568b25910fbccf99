"""The builder's pairing section explains the field report's case before launch: the draft's config and
safetensors header are read over the host, and the section says which layers SGLang feeds and which ids to write."""

from __future__ import annotations

from support.pairing import eagle3_tensors, load, write_model_dir
from support.pilot import wait_until
from textual.app import App, ComposeResult

from specdash.app.builder.pane import BuilderPane
from specdash.app.pairing import PairingView
from specdash.hosts.local import LocalHost


class BuilderApp(App):
    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command

    def compose(self) -> ComposeResult:
        yield BuilderPane(self.command, sglang_version="0.5.12")


async def test_pairing_section_explains_the_kimi_field_case(tmp_path):
    target = write_model_dir(tmp_path / "Kimi-K2.5", load("kimi_k25_target"))
    draft = write_model_dir(tmp_path / "kimi-k2.5-eagle3-vllm", load("kimi_k25_draft_vllm_export"),
                            eagle3_tensors(7168, 7168, vllm_names=True))
    command = (f"python -m sglang.launch_server --model-path {target} --tp 8 --trust-remote-code "
               f"--speculative-algorithm EAGLE3 --speculative-draft-model-path {draft} "
               "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
    app = BuilderApp(command)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        pane.host = LocalHost()
        pane.set_command(command + " ")  # a change re-runs validation and the pairing check
        await wait_until(pilot, lambda: pane.pairing_report is not None, what="the pairing check")
        report = pane.pairing_report
        assert report.captured_boundaries == [3, 31, 59]
        assert report.has_errors
        view = app.query_one("#builder-pairing", PairingView)
        assert view.display
        text = view.plain
        assert "[3, 31, 59]" in text and "[1, 29, 57]" in text
