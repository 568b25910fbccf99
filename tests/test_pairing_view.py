"""PairingView in a tiny App: placeholder, a report with the field report's case, updates, size."""

from __future__ import annotations

from support.pairing import eagle3_tensors, header_of, load
from textual.app import App, ComposeResult

from specdash.app.pairing import PairingView
from specdash.sglang.pairing import analyze_pairing


class PairingApp(App):
    CSS = "PairingView { width: 100; }"

    def compose(self) -> ComposeResult:
        yield PairingView(id="pairing")


def field_case_report():
    return analyze_pairing(
        load("kimi_k25_target"), load("kimi_k25_draft_vllm_export"), sglang_version="0.5.12",
        draft_safetensors_header=header_of(eagle3_tensors(7168, 7168, vllm_names=True)),
    )


async def test_placeholder_then_report_then_note():
    app = PairingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.query_one(PairingView)
        assert "set the model and draft paths" in view.plain
        view.show(field_case_report(), note="files read on local")
        await pilot.pause()
        text = view.plain
        assert "files read on local" in text
        assert "SGLang captures [3, 31, 59]" in text
        assert "write ids [1, 29, 57]" in text
        assert "id-convention" in text and "fix:" in text
        assert "layer map" in text and "SpecForge/TorchSpec/ModelOpt default" in text
        assert "1 error(s)" in str(view.border_title)
        assert view.region.height <= 12 and view.region.width == 100
        view.show(None, note="draft path not readable on the host")
        await pilot.pause()
        assert view.plain.strip() == "draft path not readable on the host"
        assert str(view.border_title) == "pairing"


async def test_clean_pair_shows_no_error():
    app = PairingApp()
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.query_one(PairingView)
        view.show(analyze_pairing(load("llama31_8b_target"), load("llama31_8b_draft_trainer_ids"),
                                  sglang_version="0.5.23"))
        await pilot.pause()
        assert "0 error(s)" in str(view.border_title)
        assert "SGLang captures [2, 16, 29]" in view.plain


def test_pairing_view_snapshot(snap_compare):
    class Shown(PairingApp):
        def on_mount(self) -> None:
            self.query_one(PairingView).show(field_case_report(), note="files read on local")

    assert snap_compare(Shown(), terminal_size=(110, 16))
