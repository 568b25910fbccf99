"""What a user sees at 80x24 (a supported size) and 160x48: confirmation dialogs, the launch builder's findings and
the header bar fit the screen, read off the rendered screen itself (not off widget state)."""

from __future__ import annotations

import pytest
from support.pilot import wait_until
from test_app_snapshots import _app, _at_the_end

from specdash.app.modals.confirm import ConfirmScreen

SIZES = [(80, 24), (160, 48)]
RESTART = ("Stop process group [b]30599[/b], wait until its GPU memory is released, then launch:\n"
           "python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 --port 38333 "
           "--speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3-LLaMA3.1-8B "
           "--speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 16")
KEEP = ("Fastest by output tokens/s: chain-10 (10 draft tokens, 2090.8 output tokens/s, +4.1 % over baseline) "
        "ties with the fastest chain-16 within noise; the smaller depth wins a tie.\n"
        "Keep (y): the builder gets chain-10's command and the server is restarted with it.\n"
        "Restore (n): the server is restarted with your original command.")


def screen_lines(app, region=None) -> list[str]:
    """The characters on the terminal, one string per row (what the user sees, overlays included); ``region``
    (a Region) crops to that rectangle."""
    lines = [strip.text for strip in app.screen._compositor.render_strips()]
    if region is None:
        return lines
    return [line[region.x:region.right] for line in lines[region.y:region.bottom]]


def joined(lines: list[str]) -> str:
    """The screen's rows with box borders and padding removed and wrapped lines joined by one space."""
    words: list[str] = []
    for line in lines:
        words.extend(line.replace("█", " ").replace("▊", " ").replace("▎", " ").replace("│", " ").split())
    return " ".join(words)


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("details,yes,no", [(RESTART, "Restart", "Cancel"),
                                            (KEEP, "Keep chain-10", "Restore my command")])
async def test_a_confirmation_fits_the_screen_with_all_its_text_and_both_buttons(tmp_path, monkeypatch, size,
                                                                                 details, yes, no):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await _at_the_end(pilot)
        app.push_screen(ConfirmScreen("Restart the server?", details, yes_label=yes, no_label=no))
        await wait_until(pilot, lambda: bool(app.screen.query("#confirm-dialog"))
                         and app.screen.query_one("#confirm-dialog").region.area > 0, what="the dialog laid out",
                         state=lambda: type(app.screen).__name__)
        await pilot.pause()
        dialog = app.screen.query_one("#confirm-dialog")
        screen = app.screen.region
        assert dialog.region.x >= 0 and dialog.region.right <= screen.right
        assert dialog.region.y >= 0 and dialog.region.bottom <= screen.bottom
        text = joined(screen_lines(app, dialog.region))
        plain = " ".join(details.replace("[b]", "").replace("[/b]", "").split())
        assert plain in text  # every word, in order, nothing cut at the right edge
        assert f"{yes} (y)" in text and f"{no} (n)" in text


OVERRIDE_16 = ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 --port 38333 "
               "--speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3-LLaMA3.1-8B "
               "--speculative-num-steps 1 --speculative-eagle-topk 1 --speculative-num-draft-tokens 16")


async def test_the_builder_at_80x24_shows_the_override_above_the_editor(tmp_path, monkeypatch):
    """The diagnostics list is below the fold at 80x24: the override the builder exists for is read on the first
    screen, whole, with the way to its detail and fix."""
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await _at_the_end(pilot)
        await pilot.press("f3")
        app.builder_pane.set_command(OVERRIDE_16)
        await pilot.pause(0.3)
        pane = app.builder_pane.region
        lines = screen_lines(app, pane)
        text = "\n".join(lines)
        assert "OVERRIDE --speculative-num-draft-tokens 16 -> 2 (draft-tokens-adjusted)" in text
        assert "esc: the list, each finding's detail and fix (ctrl+f)" in text
        editor = app.builder_pane.query_one("#builder-command").region
        assert editor.y >= pane.y and editor.bottom <= pane.bottom  # the editor stays whole on the screen


async def test_the_builder_at_160x48_shows_the_overridden_row_first_in_typed_to_effective(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await _at_the_end(pilot)
        await pilot.press("f3")
        app.builder_pane.set_command(OVERRIDE_16)
        await pilot.pause()
        table = app.builder_pane.query_one("#builder-effective")

        def table_rows() -> list[list[str]]:
            return [line.replace("│", " ").split() for line in screen_lines(app, table.region)[1:-1]]

        await wait_until(pilot, lambda: ["num_draft_tokens", "16", "2"] in table_rows(), what="typed->effective",
                         state=table_rows)
        rows = [line.replace("│", " ").split() for line in screen_lines(app, table.region)[1:-1]]
        assert ["field", "typed", "effective"] == rows[0]
        assert ["num_draft_tokens", "16", "2"] == rows[1]
        # a big screen shows the list and the detail instead of the small screens' headline
        assert app.builder_pane.query_one("#builder-headline").region.area == 0
        assert "OVERRIDE draft-tokens-adjusted:" in joined(screen_lines(app, app.builder_pane.region))


CRASH = "launch failed: bare AssertionError in server_args (partial depth flags: give all three or none)"


@pytest.mark.parametrize("size", SIZES)
async def test_the_header_keeps_the_server_state_and_cuts_only_its_detail(tmp_path, monkeypatch, size):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await _at_the_end(pilot)
        bar = app.status_bar
        bar.host_name = "replay: gpu-demo (SGLang test double)"
        bar.server_state, bar.server_detail = "crashed", CRASH
        await pilot.pause()
        await wait_until(pilot, lambda: "server: crashed (launch failed" in screen_lines(app)[0],
                         what="the crashed header", state=lambda: screen_lines(app)[0])
        header = screen_lines(app)[0].rstrip()
        assert "● connected" in header and "server: crashed (launch failed" in header
        if size == (160, 48):  # the mode without the replay clock, which the replay bar at the bottom shows
            assert "│ read-only replay │ server: crashed (launch failed: bare AssertionError" in header
            assert "replay: gpu-demo (SGLang test double)" in header
            assert "⏸ 00:00:05 / 00:00:05  x1  event 8/8" in screen_lines(app)[-2]
        else:
            assert header.endswith("server: crashed (launch failed…)") and "replay: gpu-demo (S…" in header

