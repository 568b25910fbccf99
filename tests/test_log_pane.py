"""The log pane driven through Textual's Pilot: highlighting, filter, hit/warning/error jumps, follow mode with the
new-lines badge, finding -> line, markers, reset, bounded window, and the messages the app listens to."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.pilot import screen_text, wait_until
from textual.app import App, ComposeResult
from textual.widgets import Footer, Input, Static

from specdash.app.log import LogPane
from specdash.app.log import view as view_module
from specdash.app.log.findings_panel import FindingsPanel
from specdash.logs.parser import LineKind
from specdash.logs.startup import StartupHistory

DATA = Path(__file__).parent / "data" / "logs"
SIZE = (160, 48)


def fixture_lines() -> list[str]:
    return [line for line in (DATA.parent / "sglang-log-formats.txt").read_text(encoding="utf-8").splitlines()
            if not line.startswith("#")]


def decode_line(i: int) -> str:
    return (f"[2025-10-22 10:{i // 60 % 60:02d}:{i % 60:02d} TP0] Decode batch. #running-req: 1, #token: {100 + i}, "
            f"token usage: 0.00, accept len: 2.0{i % 10}, accept rate: 0.5{i % 10}, cuda graph: True, "
            f"gen throughput (token/s): 170.00, #queue-req: 0, ")


class PaneApp(App):
    def __init__(self, history_path: Path) -> None:
        super().__init__()
        self.history_path = history_path
        self.states: list[tuple[str, str]] = []
        self.added = []

    def compose(self) -> ComposeResult:
        yield LogPane("server.log", history=StartupHistory(self.history_path), host="test")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(LogPane).view.focus()

    def on_log_pane_server_state_changed(self, event: LogPane.ServerStateChanged) -> None:
        self.states.append((event.state, event.detail))

    def on_log_pane_finding_added(self, event: LogPane.FindingAdded) -> None:
        self.added.append(event.finding)


@pytest.fixture
def app(tmp_path) -> PaneApp:
    return PaneApp(tmp_path / "history.json")


def status_text(app: App) -> str:
    return str(app.query_one("#log-status", Static).render())


async def test_lines_are_classified_and_the_app_hears_state_and_findings(app):
    lines = fixture_lines()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(lines[:40])
        await pilot.pause()
        pane.feed(lines[40:])
        view = pane.view
        await wait_until(pilot, lambda: view.row_count == len(lines), what="every line",
                         state=lambda: view.row_count)
        assert view.row_count == len(lines)
        # the state and finding messages reach the app after the rows: wait for the fixture's last state
        await wait_until(pilot, lambda: app.states and app.states[-1][0] == "crashed"
                         and len(app.added) == len(pane.analyzer.findings), what="the app hearing every state",
                         state=lambda: ([s for s, _ in app.states], len(app.added), len(pane.analyzer.findings)))
        rows = {view.text_at_row(r): view.kind_at_row(r) for r in range(view.row_count)}
        assert rows["speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1"] is LineKind.override
        assert rows["AssertionError"] is LineKind.error
        assert rows["[2025-04-02 09:14:55] The server is fired up and ready to roll!"] is LineKind.ready
        # starting (phases) -> ready -> ... -> crashed at the end of the fixture's failure group
        kinds = [s for s, _ in app.states]
        assert kinds[0] == "starting" and "ready" in kinds and kinds[-1] == "crashed"
        assert len(app.added) == len(pane.analyzer.findings)
        panel = app.query_one(FindingsPanel)
        # the panels redraw at most every 0.25 s (with the view's frame, or on their timer when lines stop)
        await wait_until(pilot, lambda: panel.option_count == len(pane.analyzer.findings), what="findings panel")
        # the list is not in line order (a crash comes first): its title says which order it is in
        assert panel.border_title == f"findings ({panel.option_count}, most severe first)"
        assert [f.severity for f in panel.shown][0] == "error"
        # the metrics strip shows the latest decode figures
        assert app.query_one("#log-metrics").display
        assert "decode samples" in str(app.query_one("#metric-check", Static).render())


async def test_live_filter_plain_and_regex_with_hit_navigation(app):
    lines = fixture_lines()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(lines)
        await pilot.press("slash")
        box = app.query_one("#log-filter", Input)
        assert box.has_focus
        await pilot.press(*"LEN")  # typed: the filter is live and case-insensitive
        await pilot.pause()
        assert pane.view.row_count == len([line for line in lines if "len" in line.lower()])
        box.value = "accept len"
        await pilot.pause()
        expected = [line for line in lines if "accept len" in line]
        assert pane.view.row_count == len(expected) == 15
        await wait_until(pilot, lambda: "filter: 15 lines" in status_text(app), timeout_s=5, what="filter status")
        await pilot.press("enter")
        assert pane.view.has_focus
        await pilot.press("n")
        first = pane.view.cursor_number
        await pilot.press("n")
        second = pane.view.cursor_number
        assert first is not None and second is not None and second > first
        await pilot.press("N")
        assert pane.view.cursor_number == first
        assert not pane.view.follow  # navigating stops following

        # a leading ! makes it a regex; an invalid regex keeps the previous filter and marks the box
        await pilot.press("slash")
        box.value = "!accept len: 1\\.0\\d"
        await pilot.pause()
        assert pane.view.row_count == 2
        box.value = "!accept len: ("
        await pilot.pause()
        assert box.has_class("-invalid") and pane.view.row_count == 2
        box.value = ""
        await pilot.pause()
        assert pane.view.row_count == len(lines) and pane.view.filter_hits is None
        await pilot.press("escape")
        assert pane.view.has_focus


async def test_warning_and_error_jumps_forward_and_back(app):
    lines = fixture_lines()
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(lines)
        await pilot.pause()
        view = pane.view
        view.focus()
        await pilot.press("home")  # the user goes to the top: following stops
        await pilot.pause()
        assert not view.follow and view.scroll_y == 0
        await pilot.press("w")
        first_warning = view.cursor_number
        assert first_warning is not None and lines[first_warning - 1].startswith("Overlap scheduler is disabled")
        await pilot.press("w")
        assert lines[view.cursor_number - 1].startswith("Mixed chunked prefill is disabled")
        await pilot.press("W")
        assert view.cursor_number == first_warning
        await pilot.press("e")
        assert lines[view.cursor_number - 1].startswith("launch_server.py: error: argument --speculative-algorithm")
        await pilot.press("E")  # nothing before the first error: the cursor stays
        assert lines[view.cursor_number - 1].startswith("launch_server.py: error: argument")
        for _ in range(3):
            await pilot.press("e")
        assert lines[view.cursor_number - 1] == "AssertionError"  # traceback frames are skipped, their error is not
        await wait_until(pilot, lambda: f"line {view.cursor_number}" in status_text(app), timeout_s=5,
                         what="cursor line in the status")


async def test_follow_mode_new_lines_badge_and_resume(app):
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        view = pane.view
        pane.feed([decode_line(i) for i in range(300)])
        await wait_until(pilot, lambda: view.max_scroll_y > 0 and view.scroll_y == view.max_scroll_y,
                         timeout_s=5, what="the view to follow the new lines")
        assert view.follow
        await wait_until(pilot, lambda: "following" in status_text(app), timeout_s=5, what="following status")
        await pilot.press("pageup")
        await pilot.pause()
        assert not view.follow
        top = view.scroll_y
        pane.feed([decode_line(i) for i in range(300, 350)])
        await pilot.pause()
        assert view.scroll_y == top  # the view stays where the user is reading
        assert view.new_lines == 50
        await wait_until(pilot, lambda: "50 new lines" in status_text(app), timeout_s=5, what="new-lines badge")
        await pilot.press("f")
        await wait_until(pilot, lambda: view.scroll_y == view.max_scroll_y, timeout_s=5, what="follow to resume")
        assert view.follow and view.new_lines == 0
        pane.feed([decode_line(i) for i in range(350, 360)])
        await wait_until(pilot, lambda: view.scroll_y == view.max_scroll_y and view.row_count == 360, timeout_s=5,
                         what="the view to follow again")


async def test_enter_on_a_finding_jumps_to_its_line(app):
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(fixture_lines())
        panel = app.query_one(FindingsPanel)
        await wait_until(pilot, lambda: any(f.kind == "override" and f.fix for f in panel.shown),
                         what="the findings panel's first redraw")
        panel.query_one("#findings-list").focus()
        target = next(i for i, f in enumerate(panel.shown) if f.kind == "override" and f.fix)
        panel.highlight(target)
        await pilot.pause()
        finding = panel.shown[target]
        assert finding.fix and finding.fix in str(panel.query_one("#finding-detail", Static).render())
        await pilot.press("enter")
        await pilot.pause()
        assert pane.view.cursor_number == finding.line
        assert pane.view.text_at_row(pane.view._row_of_abs(pane.view.cursor)).startswith(
            ("Overlap", "Mixed", "speculative_num_draft_tokens", "Max running", "[2026"))


async def test_capture_bar_follows_the_progress_line_still_being_written(app, monkeypatch):
    from specdash.app.log.startup_bar import StartupBar

    monkeypatch.setattr(StartupBar, "clock", staticmethod(lambda: 1000.0))  # a frozen ETA countdown
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(["[2025-08-12 16:02:26 TP0] Capture cuda graph begin. This can take up to several minutes."])
        eta = app.query_one("#startup-eta", Static)
        bar = "Capturing batches (bs=40 avail_mem=14.50 GB):  {}%|###       | {}/10 [00:{:02d}<00:{:02d},  0.50it/s]"
        pane.partial(bar.format(20, 2, 4, 16) + "\r" + bar.format(30, 3, 6, 14))
        await wait_until(pilot, lambda: "capture: 30%" in str(eta.render()), what="the capture bar at 30 %")
        assert "ETA 14 s" in str(eta.render()) and pane.view.row_count == 1  # not a line (yet)
        phases = str(app.query_one("#startup-phases", Static).render())
        assert "CUDA graph (target) ▶ 6 s" in phases  # tqdm's elapsed time, between log lines
        pane.partial(bar.format(30, 3, 6, 14) + "\r" + bar.format(80, 8, 16, 4))
        await wait_until(pilot, lambda: "capture: 80%" in str(eta.render()), what="the capture bar at 80 %")


async def test_marker_and_reset(app):
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(fixture_lines()[:10])
        pane.marker("── log truncated: restarting from offset 0 ──")
        await pilot.pause()
        view = pane.view
        assert view.kind_at_row(view.row_count - 1) is LineKind.marker
        # markers survive a filter
        view.set_filter("nothing matches this")
        assert view.row_count == 1 and view.text_at_row(0).startswith("── log truncated")
        view.set_filter("")
        pane.reset("other.log")
        await wait_until(pilot, lambda: view.row_count == 0 and pane.border_title == "other.log"
                         and app.query_one(FindingsPanel).option_count == 0, what="the reset",
                         state=lambda: (view.row_count, pane.border_title, app.query_one(FindingsPanel).option_count))
        assert view.row_count == 0 and pane.border_title == "other.log"
        assert pane.analyzer.findings == [] and app.query_one(FindingsPanel).option_count == 0
        pane.feed(["[2025-04-02 09:14:55] The server is fired up and ready to roll!"])
        await pilot.pause()
        assert view.row_count == 1 and pane.analyzer.parser.lines_seen == 1


async def test_bounded_window_drops_oldest_lines_with_a_marker(app, monkeypatch):
    monkeypatch.setattr(view_module, "MAX_LINES", 100)
    monkeypatch.setattr(view_module, "DROP_CHUNK", 20)
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        for start in range(0, 500, 50):
            pane.feed([decode_line(i) for i in range(start, start + 50)])
        await pilot.pause()
        view = pane.view
        assert view.line_count <= 100 and view.received == 500
        assert view.kind_at_row(0) is LineKind.marker and "earlier lines dropped" in view.text_at_row(0)
        assert view.dropped + view.line_count - 1 == 500
        assert view.text_at_row(view.row_count - 1) == decode_line(499)
        # the status line is refreshed on the panels' timer (PANEL_REFRESH_S), not per batch
        await wait_until(pilot, lambda: f"{view.dropped:,} dropped" in status_text(app), timeout_s=5,
                         what="the dropped count in the status line")
        assert not view.jump_to_number(1)  # dropped: no longer in the window
        assert view.jump_to_number(480) and view.cursor_number == 480


def test_log_pane_snapshot(snap_compare, tmp_path, monkeypatch):
    from specdash.app.log.startup_bar import StartupBar

    monkeypatch.setattr(StartupBar, "clock", staticmethod(lambda: 1000.0))  # a frozen ETA countdown
    groups = (DATA.parent / "sglang-log-formats.txt").read_text(encoding="utf-8").split("# ==== Group ")
    first = [line for line in groups[1].splitlines()[1:] if not line.startswith("#")]
    second = [line.replace("2025-08-12", "2025-04-02") for line in groups[2].splitlines()[1:]
              if not line.startswith("#")]
    upto = next(i for i, line in enumerate(second) if "Capture cuda graph bs" in line)
    # a server that served, then restarts and is capturing CUDA graphs (30 %)
    lines = first + second[: upto + 1] + [
        "Capturing batches (bs=32 avail_mem=14.50 GB):  30%|███       | 3/10 [00:02<00:04,  1.52it/s]"]

    async def run_before(pilot):
        pane = pilot.app.query_one(LogPane)
        pane.feed(lines)
        await pilot.pause(0.4)
        panel = pilot.app.query_one(FindingsPanel)
        await wait_until(pilot, lambda: panel.option_count == len(pane.analyzer.findings), what="findings panel")
        await pilot.press("W")  # the last warning: cursor on the adjustment override
        await pilot.pause()

    assert snap_compare(PaneApp(tmp_path / "h.json"), terminal_size=SIZE, run_before=run_before)


def _capturing_lines() -> list[str]:
    """A 2025 single-GPU start, capturing CUDA graphs (30 %): real line formats (tests/data)."""
    groups = (DATA.parent / "sglang-log-formats.txt").read_text(encoding="utf-8").split("# ==== Group ")
    second = [line for line in groups[2].splitlines()[1:] if not line.startswith("#")]
    upto = next(i for i, line in enumerate(second) if "Capture cuda graph bs" in line)
    return second[: upto + 1] + [
        "Capturing batches (bs=32 avail_mem=14.50 GB):  30%|███       | 3/10 [00:02<00:04,  1.52it/s]"]


def _startup_bar_text(app) -> str:
    from specdash.app.log.startup_bar import StartupBar

    bar = app.query_one(StartupBar)
    if not bar.display:
        return ""
    return " ".join(str(w.render()) for w in bar.query(Static) if w.display and w.parent.display)


@pytest.mark.parametrize("how", ["crash in the log", "processes gone"])
async def test_startup_bar_stops_after_a_crash(app, how):
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(_capturing_lines())
        await wait_until(pilot, lambda: pane.analyzer.startup.active, what="capturing")
        await wait_until(pilot, lambda: "30%" in _startup_bar_text(app), what="capture progress shown")
        assert "ETA" in _startup_bar_text(app)
        if how == "crash in the log":
            pane.feed([
                "[2025-08-12 16:03:01] Scheduler hit an exception: Traceback (most recent call last):",
                '  File "/sgl-workspace/sglang/python/sglang/srt/model_executor/cuda_graph_runner.py", line 392, in '
                "capture",
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity "
                "of 79.19 GiB of which 1.06 GiB is free."])
        else:  # killed: no line says so; the lifecycle poller finds the process group gone
            pane.server_gone()
        await wait_until(pilot, lambda: "ETA" not in _startup_bar_text(app), timeout_s=10,
                         what="the start-up bar without capture progress and ETA")
        text = _startup_bar_text(app)
        assert "%" not in text and "starting" not in text
        # the next start shows its own phases again
        pane.feed(_capturing_lines()[:5])
        await wait_until(pilot, lambda: _startup_bar_text(app).startswith("starting:"), what="the restart shown")
        assert "ETA" not in _startup_bar_text(app)


SMALL = (80, 24)


async def test_at_80_columns_findings_start_hidden_and_F_toggles_them(app):
    async with app.run_test(size=SMALL) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(fixture_lines())
        panel = app.query_one(FindingsPanel)
        status = pane.query_one("#log-status", Static)
        await wait_until(pilot, lambda: "findings (F shows)" in str(status.render()) or
                         "finding (F shows)" in str(status.render()), what="findings counted in the status line")
        # the log gets the pane's whole width
        await wait_until(pilot, lambda: pane.view.region.width >= 76 and not panel.region.width, what="full width")
        pane.view.focus()
        await pilot.press("F")
        await wait_until(pilot, lambda: panel.region.width == 60, what="findings panel shown")
        assert "F shows" not in str(status.render())
        await pilot.press("F")
        await wait_until(pilot, lambda: panel.region.width == 0, what="findings panel hidden again")


async def test_at_160_columns_findings_are_shown_and_F_hides_them(app):
    async with app.run_test(size=SIZE) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(fixture_lines())
        panel = app.query_one(FindingsPanel)
        await wait_until(pilot, lambda: panel.region.width == 60, what="findings panel shown")
        pane.view.focus()
        await pilot.press("F")
        await wait_until(pilot, lambda: panel.region.width == 0 and pane.view.region.width > 150, what="hidden")


def test_log_pane_snapshot_80x24(snap_compare, tmp_path, monkeypatch):
    from specdash.app.log.startup_bar import StartupBar

    monkeypatch.setattr(StartupBar, "clock", staticmethod(lambda: 1000.0))

    async def run_before(pilot):
        pane = pilot.app.query_one(LogPane)
        pane.feed(fixture_lines())
        await wait_until(pilot, lambda: "(F shows)" in str(pane.query_one("#log-status", Static).render()),
                         what="findings counted")
        await pilot.pause(0.3)

    assert snap_compare(PaneApp(tmp_path / "h.json"), terminal_size=SMALL, run_before=run_before)


async def test_Z_wraps_long_lines_and_jumps_still_land_on_their_line(app):
    """At 80 columns a traceback's last line is cut; ``Z`` wraps every line at the pane's width (the end of the
    line is on screen, the status says so), ``E`` still lands on the error line, and ``Z`` again unwraps."""
    long_tail = "RuntimeError: " + " ".join(f"word{i}" for i in range(40)) + " THE-END"
    lines = [decode_line(i) for i in range(5)] + ["Traceback (most recent call last):",
                                                   '  File "/sgl/python/sglang/srt/server_args.py", line 1, in <m>',
                                                   long_tail] + [decode_line(i) for i in range(5, 40)]
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(LogPane)
        pane.feed(lines)
        view = pane.view
        await wait_until(pilot, lambda: view.line_count == len(lines), what="lines")

        def screen_rows() -> list[str]:
            return [view.render_line(y).text.rstrip() for y in range(view.size.height)]

        await pilot.press("Z")
        await wait_until(pilot, lambda: view.wrap and "wrapped (Z)" in status_text(app), what="wrapping",
                         state=lambda: status_text(app))
        await pilot.pause()
        assert view.virtual_size.width <= view.size.width  # nothing to scroll sideways
        await pilot.press("E")  # previous error (from the bottom): the RuntimeError line, all of it on screen
        await pilot.pause()
        await wait_until(pilot, lambda: any(row.startswith("RuntimeError: word0") for row in screen_rows()),
                         what="the error line on screen", state=screen_rows)
        rows = screen_rows()
        start = next(i for i, row in enumerate(rows) if row.startswith("RuntimeError: word0"))
        joined = "".join(rows[start:start + 5])
        assert "THE-END" in joined and joined.startswith(long_tail[:60])
        assert view.cursor is not None and view.text_at_row(view.cursor_row()) == long_tail
        await pilot.press("Z")
        await wait_until(pilot, lambda: not view.wrap and "wrapped" not in status_text(app), what="unwrapping",
                         state=lambda: status_text(app))
        await pilot.pause()
        rows = screen_rows()
        assert any(row.startswith("RuntimeError: word0") for row in rows)
        assert not any("THE-END" in row for row in rows)  # one row per line again: the end is off to the right


async def test_following_keeps_the_last_line_on_screen_when_a_long_line_brings_the_sideways_scrollbar():
    """A line wider than the view makes Textual add a horizontal scrollbar, which takes the bottom row without a
    resize event: while following, the last line must still be on screen above it (it used to end one row short,
    the newest line hidden under the scrollbar until the next line arrived)."""
    from specdash.logs.parser import LogParser

    class ViewApp(App):
        def compose(self) -> ComposeResult:
            yield view_module.LogView()

    app = ViewApp()
    async with app.run_test(size=(60, 12)) as pilot:
        view = app.query_one(view_module.LogView)
        parser = LogParser()
        view.append(parser.feed_many([f"line {i}" for i in range(30)]))
        await pilot.pause()
        view.append(parser.feed_many(["the newest line " + "x" * 200]))
        await wait_until(pilot, lambda: view.show_horizontal_scrollbar, what="the sideways scrollbar")
        await pilot.pause()
        assert view.follow
        assert view.scroll_y == view.max_scroll_y
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "the newest line" in screen


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_long_log_path_loses_its_start_in_the_title_never_the_re_attached_marker(app, size):
    title = "/tmp/try/state/specdash/runs/20261202-035321-52885/server.log · re-attached, PGID 31050"
    async with app.run_test(size=size) as pilot:
        app.query_one(LogPane).reset(title)
        await wait_until(pilot, lambda: "server.log · re-attached, PGID 31050" in screen_text(app),
                         what="the title's end on screen", state=lambda: screen_text(app).splitlines()[0])
        top = screen_text(app).splitlines()[0]
        assert top.count("…") == (1 if size[0] < len(title) + 6 else 0), top
        await pilot.resize_terminal(size[0] - 20, size[1])
        await wait_until(pilot, lambda: "server.log · re-attached, PGID 31050" in screen_text(app),
                         what="the title's end after a resize", state=lambda: screen_text(app).splitlines()[0])


@pytest.mark.parametrize("title, width, shown", [
    ("/a/b/server.log · re-attached, PGID 7", 80, "/a/b/server.log · re-attached, PGID 7"),
    ("/tmp/runs/20261202-035321-52885/server.log · re-attached, PGID 31050", 50,
     "…035321-52885/server.log · re-attached, PGID 31050"),
    ("/tmp/runs/20261202-035321-52885/server.log", 20, "…21-52885/server.log"),
    ("/tmp/runs/20261202-035321-52885/server.log · re-attached, PGID 31050", 20, "…ttached, PGID 31050"),
    ("/tmp/runs/server.log", 8, "/tmp/runs/server.log"),
])
def test_fit_title(title, width, shown):
    from specdash.app.log.pane import fit_title

    assert fit_title(title, width) == shown
    assert len(shown) <= width or width < 12
