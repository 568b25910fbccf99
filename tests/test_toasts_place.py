"""Toasts take rows of their own above the key footer: a notice never hides a pane's status line (the GPU pane's
kill result, the log's status, the replay bar), at 80x24 and at 160x48, GPU pane focused or not."""

from __future__ import annotations

import pytest
from support.double import host_env
from support.pilot import screen_text, wait_until
from test_gpu_pane_short import _over_total_session
from textual.widgets import Static
from textual.widgets._toast import Toast

from specdash.app.main import SpecdashApp
from specdash.app.replay import ReplayApp
from specdash.hosts.local import LocalHost
from specdash.session.reader import read_session

KILLED = "killed 2 of 2 processes of group 10206 (GPU 0: 121966 -> 61305 MiB)"
NOTICE = "killed 2 of 2 processes of group 10206 - GPU 0 memory is back: 121966 -> 61305 MiB, the rest is free now"


def _shown_rows(app, widget_ids: list[str]) -> dict[str, str]:
    """The text on screen in the first row of each widget of ``widget_ids`` that is on screen now."""
    visible = app.screen._compositor.visible_widgets
    rows = screen_text(app).splitlines()
    shown = {}
    for widget_id in widget_ids:
        widget = app.query_one(widget_id)
        if widget in visible and widget.region.height > 0:
            shown[widget_id] = rows[widget.region.y][widget.region.x:widget.region.right].strip()
    return shown


async def _assert_notice_hides_no_status_line(app, pilot, status_ids: list[str], must_show: list[str]) -> None:
    app.query_one("#gpu-status", Static).update(KILLED)

    def all_shown() -> bool:
        shown = _shown_rows(app, status_ids)
        return set(must_show) <= set(shown) and ("#gpu-status" not in must_show or KILLED[:30] in shown["#gpu-status"])

    await wait_until(pilot, all_shown, what="the status lines on screen", state=lambda: screen_text(app))
    await pilot.pause(0.2)
    before = _shown_rows(app, status_ids)
    assert set(must_show) <= set(before), (before, screen_text(app))
    assert any(KILLED[:30] in row for row in before.values()) == ("#gpu-status" in before), before
    app.notify(NOTICE, title="GPU memory released", timeout=30)
    await wait_until(pilot, lambda: app.screen.query(Toast) and "GPU memory released" in screen_text(app),
                     what="the notice on screen", state=lambda: screen_text(app))
    await pilot.pause(0.3)
    text = screen_text(app)
    assert "121966 -> 61305 MiB, the rest is free now" in " ".join(text.split()).replace("▌ ", ""), text
    after = _shown_rows(app, status_ids)
    for status_id, row in before.items():
        assert after.get(status_id) == row, (status_id, row, text)
    assert "f1" in text.splitlines()[-1], text  # the key footer stays the bottom row, not under a toast


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
@pytest.mark.parametrize("gpu_focused", [False, True])
async def test_a_notice_hides_no_status_line_in_the_console(tmp_path, size, gpu_focused):
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 10:00:00] The server is fired up and ready to roll!\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=0.3)
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_until(pilot, lambda: "no orphaned GPU memory" in screen_text(app), what="the GPU pane",
                         state=lambda: screen_text(app))
        if gpu_focused:
            await pilot.press("f5")
            await pilot.pause(0.3)
        shown = ["#gpu-summary", "#log-status"] + (["#gpu-status"] if gpu_focused or size[1] > 24 else [])
        await _assert_notice_hides_no_status_line(app, pilot, ["#gpu-status", "#gpu-summary", "#log-status"], shown)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_notice_hides_no_status_line_in_the_replay(tmp_path, monkeypatch, size):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    app = ReplayApp(read_session(_over_total_session(tmp_path / "s.yaml")), start_paused=True)
    async with app.run_test(size=size, notifications=True) as pilot:
        await wait_until(pilot, lambda: app.query_one("#replay-status", Static).region.height > 0,
                         what="the replay bar")
        await pilot.press("f5")
        await pilot.pause(0.3)
        await _assert_notice_hides_no_status_line(app, pilot, ["#gpu-status", "#replay-status", "#log-status"],
                                                  ["#gpu-status", "#replay-status", "#log-status"])


async def test_80x24_three_notices_at_once_leave_the_log_its_lines_and_help_lists_them_all(tmp_path):
    """Three notices raised together at 80x24 used to stack three toasts (up to 6 rows each) over the log's rows,
    leaving it about 2 lines; now the newest shows alone in 2 rows across the width (title folded in) and the log
    keeps 9 of its 11 lines; F1 lists all three."""
    log = tmp_path / "server.log"
    log.write_text("".join(f"log line {i}\n" for i in range(200)))
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=5)

    def log_lines_shown() -> int:
        return sum(1 for row in screen_text(app).splitlines() if row.strip("│ ").startswith("log line "))

    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: "log line 199" in screen_text(app), what="the log",
                         state=lambda: screen_text(app))
        app.notify("Kept the fastest configuration: the builder shows its command.")
        app.log_pane.notify("copied 20 line(s), secrets redacted", timeout=30)
        app.notify("Screenshot saved: /tmp/state/specdash/screenshots/specdash-2026-12-02T01-02-03.svg",
                   title="Screenshot", timeout=30)
        await wait_until(pilot, lambda: "Screenshot" in screen_text(app), what="the newest notice",
                         state=lambda: screen_text(app))
        await pilot.pause(0.3)
        text = screen_text(app)
        assert "/tmp/state/specdash/screenshots/specdash-2026-12-02T01-02-03.svg" in text, text
        toasts = list(app.screen.query(Toast))
        assert len(toasts) == 1 and toasts[0].region.height <= 2, text
        assert "Kept the fastest" not in text and "copied 20 line(s)" not in text
        assert log_lines_shown() >= 9, text  # before: 3 toasts of 2 to 3 rows each, 2 to 4 log lines
        assert "f1" in text.splitlines()[-1], text
        await pilot.press("f1")
        await wait_until(pilot, lambda: bool(app.screen.query("#help-body")), what="the help screen")
        body = " ".join(str(app.screen.query_one("#help-body").render()).split())
        for said in ("Kept the fastest configuration", "copied 20 line(s), secrets redacted",
                     "Screenshot: Screenshot saved: /tmp/state/specdash/screenshots/specdash-2026-12-02T01-02-03.svg"):
            assert said in body, body[:800]


async def test_80x24_a_notice_raised_before_the_first_frame_fits_its_two_rows(tmp_path, monkeypatch):
    """The replay's demonstration notice is raised on mount, before the screen has its size classes: it still gets
    the short screen's toast (title folded in, whole text in two rows), not a title row and a text cut mid-row."""
    from pathlib import Path

    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    demo = Path(__file__).parent.parent / "sessions" / "demo-eagle3-field-reports.yaml.gz"
    app = ReplayApp(read_session(demo), start_paused=True)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: bool(app.screen.query(Toast)) and "Demonstration" in screen_text(app),
                         what="the demonstration notice", state=lambda: screen_text(app))
        await pilot.pause(0.3)
        rows = [row for row in screen_text(app).splitlines() if row.startswith("▌")]
        shown = " ".join(" ".join(row.strip("▌ ") for row in rows).split())
        assert len(rows) == 2 and shown == ("Demonstration session: Recorded against the SGLang test double, not a "
                                            "real GPU run (the full note: specdash replay --summary FILE)."), rows


async def test_80x24_an_error_raised_with_an_info_stays_on_screen(tmp_path):
    """At 80x24 one toast shows; an error and then an information notice raised together used to leave only the
    information (the newest) on screen, the error lost to the help screen. The error stays; help lists both."""
    log = tmp_path / "server.log"
    log.write_text("log line\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=5)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_until(pilot, lambda: "log line" in screen_text(app), what="the log", state=lambda: screen_text(app))
        app.notify("Launch failed: cannot create the run directory", severity="error", timeout=30)
        app.notify("Copied the command", timeout=30)
        await pilot.pause(0.5)
        text = " ".join(screen_text(app).split())
        assert "Launch failed: cannot create the run directory" in text, text
        assert "Copied the command" not in text
        assert len(list(app.screen.query(Toast))) == 1
        app.notify("Kill failed: PID 4242 is not yours", severity="error", timeout=30)  # a newer error replaces it
        await pilot.pause(0.5)
        text = " ".join(screen_text(app).split())
        assert "Kill failed: PID 4242 is not yours" in text and "Launch failed" not in text, text
        for notification in app._notifications:  # raised a while ago, not with what comes next
            notification.raised_at -= 5
        app.notify("Launched (PGID 4343)", timeout=30)  # news: it replaces the older error
        await pilot.pause(0.5)
        text = " ".join(screen_text(app).split())
        assert "Launched (PGID 4343)" in text and "Kill failed" not in text, text
        await pilot.press("f1")
        await wait_until(pilot, lambda: bool(app.screen.query("#help-body")), what="the help screen")
        body = " ".join(str(app.screen.query_one("#help-body").render()).split())
        assert "Copied the command" in body and "Launch failed: cannot create the run directory" in body
