"""The launch builder at 80x24 and 160x48, read off the rendered screen: after esc leaves the editor, the finding
that matters is readable whole (message and fix line wrapped in its row, nothing cut at the right edge) and the
typed -> effective change is on the same screen; the ``sglang`` field names the release the title names."""

from __future__ import annotations

import pytest
from support.double import host_env
from support.pilot import wait_until
from test_app_snapshots import _app, _at_the_end
from test_small_screens_fit import OVERRIDE_16, joined, screen_lines

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost
from specdash.sglang.validate import validate_command


def _override():
    return next(d for d in validate_command(OVERRIDE_16, "0.5.9").diagnostics if d.severity == "override")


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_after_esc_the_override_and_its_fix_are_whole_and_typed_to_effective_is_on_screen(tmp_path,
                                                                                               monkeypatch, size):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await _at_the_end(pilot)
        await pilot.press("f3")
        await pilot.pause(0.2)
        pane = app.builder_pane
        pane.set_command(OVERRIDE_16)
        pane.query_one("#builder-command").focus()
        await pilot.pause(0.2)
        await pilot.press("escape")
        await pilot.pause(0.4)
        lines = screen_lines(app, pane.region)
        text = joined(lines)
        # the title names the release and the model whole (the tab already says "Launch builder")
        assert lines[0].startswith("╭─ SGLang 0.5.9 (0.5.5-0.5.10) · LlamaForCausalLM (guessed) ─"), lines[0]
        # before: "OVERRIDE  draft-tokens-adjusted: --speculative-num-draft-tokens 16 -> 2│" and the table off-screen
        assert "typed → effective: num_draft_tokens 16 → 2" in text, text
        table = pane.query_one("#builder-diagnostics")
        rows = joined(screen_lines(app, table.scrollable_content_region))  # inside the box, without its scrollbar
        d = _override()
        assert " ".join(f"{d.code}: {d.message}".split()) in rows, rows  # every word, in order
        assert f"fix (ctrl+f): {d.fix.description}" in rows, rows
        # the wrapped column fits inside the box beside its scrollbar: no row runs past the visible edge
        assert sum(c.get_render_width(table) for c in table.ordered_columns) <= table.scrollable_content_region.width
        info = next(d for d in validate_command(OVERRIDE_16, "0.5.9").diagnostics if d.severity == "info")
        await pilot.press("down")  # the next finding, whole too (a word was once cut at the box's edge)
        await pilot.pause()
        whole = " ".join(f"{info.code}: {info.message}".split())
        await wait_until(pilot, lambda: whole in joined(screen_lines(app, table.scrollable_content_region)),
                         what="the next finding, whole",
                         state=lambda: joined(screen_lines(app, table.scrollable_content_region)))
        for line in lines:  # nothing runs into the pane's right border
            assert len(line) <= pane.region.width


async def test_the_wrapped_rows_follow_a_resize_back_to_one_line_each(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _at_the_end(pilot)
        await pilot.press("f3")
        pane = app.builder_pane
        pane.set_command(OVERRIDE_16)
        await pilot.pause(0.3)
        pane.query_one("#builder-diagnostics").focus()
        await pilot.press("down")  # a moved cursor once left the finding column at its header's width (7)
        await pilot.pause(0.3)
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        table = pane.query_one("#builder-diagnostics")
        await wait_until(pilot, lambda: any("OVERRIDE  draft-tokens-adjusted: --speculative-num-draft-tokens 16 -> 2:"
                                            " with topk 1" in row for row in screen_lines(app, table.region)),
                         what="one line per finding at 160x48", state=lambda: screen_lines(app, table.region))
        rows = screen_lines(app, table.region)
        # a big screen: one line per finding, the finding column as wide as the box (not the 80x24 width)
        assert any("OVERRIDE  draft-tokens-adjusted: --speculative-num-draft-tokens 16 -> 2: with topk 1" in row
                   for row in rows), rows
        assert any("info      max-running-requests-default: max_running_requests = 48: SGLang" in row
                   for row in rows), rows
        assert pane.query_one("#builder-changes").region.area == 0  # the table beside it says it
        await pilot.resize_terminal(80, 24)
        await pilot.pause(0.5)
        pane.query_one("#builder-command").focus()
        await pilot.press("escape", "up")
        await pilot.pause()
        await wait_until(pilot, lambda: "fix (ctrl+f): set --speculative-num-steps" in joined(screen_lines(app, pane.region)),
                         what="the fix hint after the resize back", state=lambda: joined(screen_lines(app, pane.region)))


async def test_the_sglang_field_names_the_release_the_title_names(tmp_path):
    """The title said ``SGLang 0.5.0rc0`` while the field said ``newest``: both now name the detected release."""
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 10:00:00] The server is fired up and ready to roll!\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.builder_pane is not None and app.builder_pane.sglang_version,
                         what="the detected SGLang release")
        await pilot.pause()
        pane = app.builder_pane
        version = pane.sglang_version
        await wait_until(pilot, lambda: f"SGLang {version} (" in str(pane.border_title)
                         and f"sglang {version} (detected)" in joined(screen_lines(app, pane.query_one("#builder-form").region)),
                         what="the release in title and field", state=lambda: str(pane.border_title))
        assert f"SGLang {version} (" in str(pane.border_title)
        form = joined(screen_lines(app, pane.query_one("#builder-form").region))
        assert f"sglang {version} (detected)" in form, form
        assert "newest" not in form
        # a typed release wins in both places
        field = pane.query_one("#f-version")
        field.focus()
        await pilot.press(*"0.5.9")
        await pilot.pause()
        await wait_until(pilot, lambda: "SGLang 0.5.9 (" in str(pane.border_title)
                         and "sglang 0.5.9" in joined(screen_lines(app, pane.query_one("#builder-form").region)),
                         what="the typed release in title and field", state=lambda: str(pane.border_title))
        assert "SGLang 0.5.9 (" in str(pane.border_title)
        assert "sglang 0.5.9" in joined(screen_lines(app, pane.query_one("#builder-form").region))
