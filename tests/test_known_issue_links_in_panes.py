"""Known SGLang issues where users look: the builder shows a matching entry's public thread under the selected
diagnostic, and the log pane lists a log line that matches an entry as a finding with its link and workaround."""

from __future__ import annotations

from support.pilot import wait_until
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Static

from specdash.app.builder import BuilderPane
from specdash.app.log import LogPane
from specdash.app.log.findings_panel import FindingsPanel
from specdash.logs.startup import StartupHistory

SIZE = (160, 48)
# SGLang issue #16274: TP4 + DP4 with DP attention and EAGLE under SPEC_V2 (fixed in 0.5.8 by PR #16310)
DP_SPEC_V2 = ("SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server --model-path nvidia/DeepSeek-R1-0528-NVFP4-v2 "
              "--tp-size 4 --dp-size 4 --enable-dp-attention --speculative-algorithm EAGLE --speculative-num-steps 3 "
              "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
DP_LINK = "https://github.com/sgl-project/sglang/issues/16274"
# SGLang issue #30549: the start-up crash line of --speculative-adaptive, as the thread quotes it
ADAPTIVE_LINE = ("[2026-07-09 03:12:44 TP0] AssertionError: shared logits buffer holds 128 rows but caller needs 256 "
                 "(vocab_size=154880)")
ADAPTIVE_LINK = "https://github.com/sgl-project/sglang/issues/30549"


class BuilderApp(App):
    def __init__(self, command: str, version: str | None) -> None:
        super().__init__()
        self.command_text, self.version = command, version

    def compose(self) -> ComposeResult:
        yield BuilderPane(self.command_text, self.version)


class LogApp(App):
    def __init__(self, history_path) -> None:
        super().__init__()
        self.history_path = history_path

    def compose(self) -> ComposeResult:
        yield LogPane("server.log", history=StartupHistory(self.history_path), host="test")


def _rows(pane: BuilderPane) -> list[str]:
    table = pane.query_one("#builder-diagnostics", DataTable)
    return [str(table.get_row_at(i)[1]) for i in range(table.row_count)]


async def test_builder_shows_the_known_issue_link_of_the_selected_diagnostic():
    app = BuilderApp(DP_SPEC_V2, "0.5.7")
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(BuilderPane)
        rows = _rows(pane)
        index = next(i for i, r in enumerate(rows) if r.startswith("known-issue:spec-v2-dp-attention-accept-length"))
        assert rows[index].endswith("[link]")
        table = pane.query_one("#builder-diagnostics", DataTable)
        table.move_cursor(row=index)
        await pilot.pause()
        detail = pane.query_one("#builder-detail", Static).render()
        assert f"see: {DP_LINK}" in str(detail)
        assert "Workaround:" in str(detail)
        # the URL is a terminal hyperlink too (and plain text the user can select)
        assert any(span.style and getattr(span.style, "link", None) == DP_LINK
                   for span in getattr(detail, "spans", []))


async def test_builder_says_fixed_in_for_a_newer_release_and_keeps_the_link():
    app = BuilderApp(DP_SPEC_V2, "0.5.9")
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(BuilderPane)
        rows = _rows(pane)
        index = next(i for i, r in enumerate(rows) if r.startswith("known-issue:spec-v2-dp-attention-accept-length"))
        assert "fixed in 0.5.8 (this is 0.5.9)" in rows[index]
        pane.query_one("#builder-diagnostics", DataTable).move_cursor(row=index)
        await pilot.pause()
        assert f"see: {DP_LINK}" in str(pane.query_one("#builder-detail", Static).render())


async def test_builder_without_a_known_issue_shows_no_link():
    command = ("python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm "
               "EAGLE3 --speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B "
               "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
    app = BuilderApp(command, "0.5.9")
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(BuilderPane)
        table = pane.query_one("#builder-diagnostics", DataTable)
        for row in range(table.row_count):
            table.move_cursor(row=row)
            await pilot.pause()
            assert "see: https://" not in str(pane.query_one("#builder-detail", Static).render())
        assert not any(r.endswith("[link]") for r in _rows(pane))


async def test_log_pane_lists_a_known_issue_with_link_and_workaround(tmp_path):
    app = LogApp(tmp_path / "history.json")
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.set_sglang_version("0.5.17")
        pane.feed(["[2026-07-09 03:12:40 TP0] Init torch distributed begin.", ADAPTIVE_LINE, ADAPTIVE_LINE])
        panel = app.query_one(FindingsPanel)
        await wait_until(pilot, lambda: any(f.kind == "known_issue" for f in panel.shown),
                         what="the known issue in the findings list")
        index = next(i for i, f in enumerate(panel.shown) if f.kind == "known_issue")
        finding = panel.shown[index]
        assert finding.line == 2 and finding.count == 2 and finding.severity == "warning"
        assert finding.data["link"] == ADAPTIVE_LINK
        panel.query_one("#findings-list").focus()
        panel.highlight(index)
        await pilot.pause()
        detail = str(panel.query_one("#finding-detail", Static).render())
        assert f"see: {ADAPTIVE_LINK}" in detail
        assert "Workaround: run without --speculative-adaptive" in detail
        assert "fixed in 0.5.19" in detail


async def test_log_pane_says_fixed_for_a_release_with_the_fix_and_reset_clears_it(tmp_path):
    app = LogApp(tmp_path / "history.json")
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.set_sglang_version("0.5.19")
        pane.feed([ADAPTIVE_LINE])
        panel = app.query_one(FindingsPanel)
        await wait_until(pilot, lambda: any(f.kind == "known_issue" for f in panel.shown),
                         what="the known issue in the findings list")
        finding = next(f for f in panel.shown if f.kind == "known_issue")
        assert finding.severity == "info" and "fixed in 0.5.19" in finding.message
        pane.reset("other.log")
        await pilot.pause()
        assert not any(f.kind == "known_issue" for f in panel.shown)
        pane.feed(["[2026-07-09 03:12:40 TP0] Decode batch. #running-req: 1, accept len: 2.10"])
        await pilot.pause()
        assert not any(f.kind == "known_issue" for f in pane.findings)


async def test_console_keys_log_matches_to_the_configured_release(tmp_path):
    """The release named in config.yaml (``sglang_version``) reaches the log pane: a log line of an issue fixed in
    a later release is a warning with "fixed in", not an info note about an unknown release."""
    from support.double import host_env

    from specdash.app.main import SpecdashApp
    from specdash.hosts.local import LocalHost

    log = tmp_path / "server.log"
    log.write_text("[2026-07-09 03:12:40 TP0] Init torch distributed begin.\n" + ADAPTIVE_LINE + "\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=0.3,
                      sglang_version="0.5.17")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: any(f.kind == "known_issue" for f in app.log_pane.findings),
                         what="the known issue among the findings")
        finding = next(f for f in app.log_pane.findings if f.kind == "known_issue")
        assert finding.severity == "warning"
        assert finding.data["link"] == ADAPTIVE_LINK
        assert "fixed in 0.5.19" in finding.explanation
