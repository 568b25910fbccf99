"""The key footer at 80 and 160 columns: every key shown is whole (nothing cut at the right edge), each pane keeps
the keys that matter there, and when keys are left out the help key says ``f1 All keys``. Read off the rendered
screen's last row, in the replay console, a live console and a ``--readonly`` one."""

from __future__ import annotations

import pytest
from support.double import host_env
from support.pilot import wait_until
from test_app_snapshots import PANES, _app
from test_small_screens_fit import screen_lines

from specdash.app.footer import FOOTER_PRIORITY, KeyFooter, fit_keys, key_width
from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

SIZES = [(80, 24), (160, 48)]
#: pane -> what its footer must show at any size (key and description as on screen)
MUST_SHOW = {
    "log": ["/ Filter", "F Findings", "Z Wrap", "p Pause/resume", "} Next finding", "g Seek"],
    "gpus": ["space Tag", "p Pause/resume", "} Next finding"],
    "builder": ["p Pause/resume", "} Next finding", "g Seek"],
    "pairing": ["p Pause/resume", "} Next finding", "g Seek"],
    "bench": ["p Pause/resume", "} Next finding", "g Seek"],
}


def footer_row(app) -> str:
    return screen_lines(app)[-1]


async def footer_ready(pilot) -> None:
    await wait_until(pilot, lambda: bool(pilot.app.screen.query_one(KeyFooter).query("FooterKey")),
                     what="the footer's keys")
    await pilot.pause(0.1)


def assert_whole(app, width: int) -> str:
    """The footer row, after checking every key widget lies inside the screen and its label is on the row whole."""
    row = footer_row(app)
    footer = app.screen.query_one(KeyFooter)
    keys = list(footer.query("FooterKey"))
    assert keys, "the footer shows no key"
    for key in keys:
        assert key.region.right <= width, (key.key_display, key.region, row)
        label = f"{key.key_display} {key.description}".strip()
        assert label in row, (label, row)
    help_labels = [k for k in keys if k.action == "help"]
    assert help_labels, f"no help key in {row!r}"
    return row


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
@pytest.mark.parametrize("pane", list(MUST_SHOW))
async def test_replay_footer_fits_and_keeps_the_panes_keys(tmp_path, monkeypatch, pane, size):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=size) as pilot:
        await PANES[pane](pilot)
        await pilot.pause()
        await wait_until(pilot, lambda: all(label in footer_row(app) for label in MUST_SHOW[pane]),
                         what=f"the {pane} pane's footer", state=lambda: footer_row(app))
        row = assert_whole(app, size[0])
        for label in MUST_SHOW[pane]:
            assert label in row, (label, row)
        if size[0] >= 160:  # room for everything: nothing left out, help says Help
            assert "f1 Help" in row and "All keys" not in row, row


async def test_live_log_footer_at_80_columns_keeps_stop_and_says_the_rest_is_in_help(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 10:00:00] The server is fired up and ready to roll!\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=0.3)
    async with app.run_test(size=(80, 24)) as pilot:
        # before: "/ Filter n Next hit w Next warn e Next error f Follow F Findings Z Wrap f1 Help l Launch x" (cut)
        for key, labels in ((None, ("/ Filter", "F Findings", "Z Wrap", "x Stop", "l Launch", "f1 All keys")),
                            ("f4", ("b Benchmark", "S Depth sweep", "x Stop")),
                            ("f5", ("K Kill tagged/focused", "space Tag", "x Stop", "r Restart", "f1 Help"))):
            if key:
                await pilot.press(key)
            await footer_ready(pilot)
            await wait_until(pilot, lambda labels=labels: all(label in footer_row(app) for label in labels),
                             what=f"the footer after {key or 'start'}", state=lambda: footer_row(app))
            row = assert_whole(app, 80)
            for label in labels:
                assert label in row, (label, row)
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        await wait_until(pilot, lambda: "All keys" not in footer_row(app), what="the 160-column footer",
                         state=lambda: footer_row(app))
        row = assert_whole(app, 160)
        assert "f1 Help" in row and "r Restart" in row and "All keys" not in row, row


async def test_readonly_footer_at_80_columns_fits_without_mutating_keys(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 10:00:00] The server is fired up and ready to roll!\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), readonly=True,
                      gpu_interval_s=0.3)
    async with app.run_test(size=(80, 24)) as pilot:
        for key in ("f2", "f3", "f4", "f5"):
            await pilot.press(key)
            await pilot.pause(0.3)
            await footer_ready(pilot)
            row = assert_whole(app, 80)
            for label in ("l Launch", "x Stop", "r Restart", "b Benchmark", "S Depth sweep", "K Kill"):
                assert label not in row, (label, row)


def test_fit_keys_drops_the_least_important_first_and_never_help():
    items = [("log.filter", 9), ("log.next_hit", 11), ("app.help", 8), ("server.launch", 9), ("server.stop", 7)]
    assert fit_keys(items, 100) == [0, 1, 2, 3, 4]
    assert fit_keys(items, 33) == [0, 2, 3, 4]  # next hit goes first (rank 40)
    assert fit_keys(items, 24) == [0, 2, 4]  # then launch (rank 15) before stop (14) and filter (12)
    assert fit_keys(items, 0) == [2]  # help stays, even alone and too wide
    assert FOOTER_PRIORITY["app.help"] == min(FOOTER_PRIORITY.values())


def test_key_width_matches_textual_footer_cells():
    assert key_width("f1", "Help", compact=True) == len("f1 Help ")  # margin-right 1
    assert key_width("f1", "Help", compact=False) == len(" f1 Help ")


async def test_log_status_line_at_80_columns_keeps_the_findings_count_whole(tmp_path, monkeypatch):
    """Before: ``following · 144 lines received · 12 lines of specdash's own polling hidden · 6`` (the findings count
    and its key cut off at 80 columns)."""
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await PANES["log"](pilot)
        pane = app.log_pane
        pane.own_lines_hidden = 12
        pane._update_status()
        await pilot.pause()
        status = pane.query_one("#log-status")
        await wait_until(pilot, lambda: "12 own polling hidden" in screen_lines(app, status.region)[0],
                         what="the status line", state=lambda: screen_lines(app, status.region)[0])
        row = screen_lines(app, status.region)[0].rstrip()
        assert row.startswith("following · ") and row.endswith("findings (F shows)"), row
        assert "12 own polling hidden" in row, row
        await pilot.resize_terminal(160, 48)
        await pilot.pause()
        wide = "lines received · 12 lines of specdash's own polling hidden"
        await wait_until(pilot, lambda: wide in screen_lines(app, status.region)[0], what="the 160-column status line",
                         state=lambda: screen_lines(app, status.region)[0])
        row = screen_lines(app, status.region)[0]
        assert "lines received · 12 lines of specdash's own polling hidden" in row, row


def test_fit_status_shortens_then_drops_the_least_important_and_keeps_the_state():
    from specdash.app.log.pane import fit_status

    parts = [(0, "[b]following[/b]", "[b]following[/b]"), (6, "144 lines received", "144 lines"),
             (8, "12 lines of specdash's own polling hidden", "12 own polling hidden"),
             (1, "[b]6 findings[/b] (F shows)", "[b]6 findings[/b] (F shows)")]
    assert fit_status(parts, 200) == ("[b]following[/b] · 144 lines received · 12 lines of specdash's own polling "
                                      "hidden · [b]6 findings[/b] (F shows)")
    assert fit_status(parts, 70) == "[b]following[/b] · 144 lines · 12 own polling hidden · [b]6 findings[/b] (F shows)"
    assert fit_status(parts, 45) == "[b]following[/b] · 144 lines · [b]6 findings[/b] (F shows)"
    assert fit_status(parts, 40) == "[b]following[/b] · [b]6 findings[/b] (F shows)"
    assert fit_status(parts, 5) == "[b]following[/b]"


async def test_the_gpu_pane_title_says_read_only_in_a_replay(tmp_path, monkeypatch):
    """The title read ``F5 GPUs & processes   ───``: its ``[read-only]`` was taken for a style tag."""
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = _app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await PANES["gpus"](pilot)
        title = screen_lines(app, app.gpu_pane.region)[0]
        assert "─ F5 GPUs & processes (read-only) ─" in title, title
