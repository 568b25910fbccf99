"""Opening a big log: the tail is on screen before the history above it is analysed, the history is analysed
behind it (findings fill in, lines are numbered as the file numbers them), scrolling up reads the earlier lines
back from the file, and the line index stays bounded whatever the file's size.

The log is the demo log shipped in sessions/ (real SGLang 0.5.x line formats) followed by thousands of decode lines
in SGLang's format, so the history holds the start-up and its findings and the tail only decode batches. The
background analysis is held by a gate the test opens (no timing)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from support.guard import guard
from support.pilot import wait_until

import specdash.app.main as app_main
from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost
from specdash.hosts.tail import lines_before, read_range, read_tail_here, recent_start_offset
from specdash.logs.analyzer import LogAnalyzer
from specdash.logs.line_index import LineIndex

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = (REPO / "sessions" / "demo-server.log").read_text().splitlines()


def decode_line(i: int) -> str:
    stamp = f"2025-08-12 16:{10 + i // 3600 % 40:02d}:{i % 60:02d}"
    return (f"[{stamp}] Decode batch. #running-req: 4, #token: {1000 + i}, token usage: 0.01, "
            f"accept len: 2.{i % 90 + 10:02d}, cuda graph: True, gen throughput (token/s): {200 + i % 50}.00, "
            f"#queue-req: 0, ")


def big_log(tmp_path: Path, decode_lines: int = 8000, quirks: bool = False) -> tuple[Path, list[str]]:
    lines = DEMO_LOG + [decode_line(i) for i in range(decode_lines)]
    if quirks:
        add_quirks(lines)
    path = tmp_path / "server.log"
    path.write_text("\n".join(lines) + "\n")
    return path, lines


def add_quirks(lines: list[str]) -> None:
    # a known SGLang issue inside a regular decode line of the history (the bulk reader watches for it), a CRLF
    # ending and a prefill line read the long way
    lines[len(DEMO_LOG) + 1000] += " vectorized gather kernel index out of bounds"
    lines[len(DEMO_LOG) + 1001] += "\r"
    lines.insert(len(DEMO_LOG) + 1500, "[2025-08-12 16:10:05] Prefill batch. #new-seq: 1, #new-token: 99999, "
                 "#cached-token: 0, token usage: 0.01, #running-req: 4, #queue-req: 0, extra: 1")


class GatedApp(SpecdashApp):
    """The console whose history analysis waits until the test opens the gate."""

    CSS_PATH = str(Path(app_main.__file__).with_name("app.tcss"))

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.gate = asyncio.Event()

    async def analyse_range(self, path, start, end, pane) -> None:
        await self.gate.wait()
        await super().analyse_range(path, start, end, pane)


def status_text(app) -> str:
    return str(app.log_pane.query_one("#log-status").render())


async def test_tail_is_shown_before_the_history_is_analysed_then_findings_fill_in(tmp_path):
    log, lines = big_log(tmp_path, quirks=True)
    assert log.stat().st_size > 3 * SpecdashApp.TAIL_FIRST_BYTES  # most of it is history
    app = GatedApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.log_pane
        view = pane.view
        await wait_until(pilot, lambda: view.row_count and view.text_at_row(view.row_count - 1) == lines[-1],
                         what="the last line on screen")
        # the tail only: not the start of the file, nothing analysed yet, the progress said
        assert view.row_count < len(lines) // 2
        assert all("fired up and ready" not in view.text_at_row(r) for r in range(view.row_count))
        assert pane.history is not None and not pane.history.finished
        assert pane.analyzer.lines == 0 and pane.analyzer.findings == []
        await wait_until(pilot, lambda: "history: 0 % analysed" in status_text(app), what="progress in the status")

        app.gate.set()
        await wait_until(pilot, lambda: pane.history.finished, what="history analysed")
        await pilot.pause(0.3)
        # every line analysed once, in file order: the same findings as reading the file from its start
        whole = LogAnalyzer()
        whole.feed_many(lines)
        assert pane.analyzer.lines == len(lines)
        assert [(f.kind, f.line) for f in pane.analyzer.findings] == [(f.kind, f.line) for f in whole.findings]
        # the history went through the bulk reader: the same findings, metrics, start-up and summary as the whole
        # file read line by line, the known issue in a decode line found, every 256th line indexed
        assert pane.history.reader is not None and pane.history.reader.lines > len(lines) // 2
        assert pane.analyzer.summary() == whole.summary()
        assert [f.as_dict() for f in pane.analyzer.findings] == [f.as_dict() for f in whole.findings]
        known = [(f["line"], f["message"]) for f in pane.known_issues.findings()]
        assert known and known[0][0] == len(DEMO_LOG) + 1001
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line.encode()) + 1)
        index = pane.history.index
        assert index.lines == pane.history.history_lines
        for number in (1, 257, 1000, index.lines):
            at, offset = index.locate(number)
            assert number - at < index.step and offset == offsets[at - 1]
        assert "history:" not in status_text(app)
        # the lines shown are numbered as the file numbers them
        assert view.first_number == len(lines) - view.line_count + 1
        assert view.jump_to_number(len(lines))
        assert view.cursor_number == len(lines) and view.text_at_row(view.cursor_row()) == lines[-1]


async def test_scrolling_to_the_top_reads_the_earlier_lines_back_from_the_file(tmp_path):
    log, lines = big_log(tmp_path)
    app = GatedApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)  # the gate stays shut: history unread
    async with app.run_test(size=(160, 48)) as pilot:
        view = app.log_pane.view
        await wait_until(pilot, lambda: view.row_count and view.text_at_row(view.row_count - 1) == lines[-1],
                         what="the last line on screen")
        shown = view.line_count
        first_shown = view.text_at_row(0)
        first_index = lines.index(first_shown)
        view.focus()
        await pilot.press("home")
        await wait_until(pilot, lambda: view.line_count > shown, what="earlier lines read back")
        added = view.line_count - shown
        # the rows above are the file's lines just before, in order, and what was on screen stays on screen
        assert [view.text_at_row(r) for r in range(added + 1)] == lines[first_index - added:first_index + 1]
        assert int(view.scroll_y) == added
        # up to the file's first line
        for _ in range(100):
            if view.text_at_row(0) == lines[0]:
                break
            before = view.line_count
            view.scroll_to(y=0, animate=False, immediate=True)
            await pilot.press("home")
            await wait_until(pilot, lambda n=before: view.line_count > n or view.text_at_row(0) == lines[0],
                             what="more earlier lines")
        assert [view.text_at_row(r) for r in range(view.row_count)] == lines
        assert not view.earlier_exists


async def test_read_range_gives_each_line_with_its_byte_offset(tmp_path):
    log, lines = big_log(tmp_path, decode_lines=3000)
    data = log.read_bytes()
    host = LocalHost()
    start = data.index(b"\n", len(data) // 3) + 1
    got, offsets = [], []
    async for batch in read_range(host, str(log), start, len(data)):
        got.extend(batch.lines)
        offsets.extend(batch.offsets)
    assert got == data[start:].rstrip(b"\n").split(b"\n")
    assert all(data[o:].startswith(line + b"\n") for o, line in zip(offsets, got, strict=True))
    # a last line without its newline comes as it is
    cut = tmp_path / "cut.log"
    cut.write_bytes(b"one\ntwo\nthree-no-newline")
    batches = [b async for b in read_range(host, str(cut), 4, cut.stat().st_size)]
    assert [line for b in batches for line in b.lines] == [b"two", b"three-no-newline"]
    before = await lines_before(host, str(log), start, window_bytes=1000)
    assert before.lines and before.lines[-1] + b"\n" == data[before.offsets[-1]:start]
    assert data[:before.offsets[0]].endswith(b"\n")  # whole lines only
    assert (await lines_before(host, str(log), 0)).lines == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=300), min_size=1, max_size=60),
       st.integers(min_value=1, max_value=8), st.integers(min_value=2, max_value=16))
def test_line_index_is_bounded_and_points_at_the_right_lines(batches, step, max_entries):
    index = LineIndex(step=step, max_entries=max_entries)
    offsets_of_line = []  # offset of line n at [n - 1]: 7 bytes per line
    for size in batches:
        batch = [7 * (len(offsets_of_line) + i) for i in range(size)]
        offsets_of_line.extend(batch)
        index.add(batch)
        assert len(index.entries) <= max_entries
    total = len(offsets_of_line)
    assert index.lines == total
    for line in {1, total, (total + 1) // 2, max(1, total - index.step)}:
        number, offset = index.locate(line)
        assert number <= line < number + index.step
        assert offset == offsets_of_line[number - 1]
    assert index.locate(0) is None and index.locate(total + 1) is None


async def test_over_ssh_the_tail_comes_first_and_the_history_is_read_through_the_host(sshd, tmp_path):
    log, lines = big_log(tmp_path)
    app = GatedApp(sshd.make_host(), log_path=str(log), gpu_interval_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.log_pane
        view = pane.view
        await wait_until(pilot, lambda: view.row_count and view.text_at_row(view.row_count - 1) == lines[-1],
                         timeout_s=20, what="the last line on screen",  # (says what it saw before pytest-timeout)
                         state=lambda: f"connection {app.host.status.describe()!r}, last rows "
                                       f"{[view.text_at_row(r) for r in range(max(0, view.row_count - 3), view.row_count)]}")
        assert pane.history is not None and not pane.history.finished and view.line_count < len(lines) // 2
        app.gate.set()
        await wait_until(pilot, lambda: pane.history.finished, what="history analysed")
        assert pane.analyzer.lines == len(lines)
        assert view.first_number == len(lines) - view.line_count + 1


async def test_a_history_that_cannot_be_read_is_said_and_the_lines_shown_are_still_analysed(tmp_path):
    from specdash.hosts.base import HostError

    class FailingApp(GatedApp):
        async def analyse_range(self, path, start, end, pane) -> None:
            raise HostError("connection lost")

    log, lines = big_log(tmp_path)
    app = FailingApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.log_pane
        view = pane.view
        await wait_until(pilot, lambda: pane.history is not None and pane.history.finished, what="history given up")
        shown = [view.text_at_row(r) for r in range(view.row_count)]
        assert any("history analysis stopped (connection lost)" in text for text in shown)
        assert shown[-1] == lines[-1] or shown[-2] == lines[-1]
        assert pane.analyzer.lines == view.received  # the lines shown, analysed
        assert "history:" not in status_text(app)


async def test_a_finding_in_the_history_is_shown_on_its_line_read_back_through_the_index(tmp_path):
    from specdash.app.log.findings_panel import FindingsPanel

    log, lines = big_log(tmp_path)
    app = GatedApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)
    app.gate.set()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.log_pane
        view = pane.view
        await wait_until(pilot, lambda: pane.history is not None and pane.history.finished, what="history analysed")
        ready = next(f for f in pane.analyzer.findings if f.kind == "ready")
        assert ready.line < view.first_number  # in the history, not in the window
        pane.post_message(FindingsPanel.JumpTo(ready.line))
        await wait_until(pilot, lambda: view.cursor_number == ready.line, what="the finding's line")
        assert view.text_at_row(view.cursor_row()) == lines[ready.line - 1]
        assert "fired up and ready" in lines[ready.line - 1]
        # the window now runs from the indexed line before it to the end of the file, each line in its place
        first = view.first_number
        assert [view.text_at_row(r) for r in range(view.row_count)] == lines[first - 1:]


async def test_a_live_log_faster_than_the_history_stops_the_history_and_memory_stays_bounded(tmp_path, monkeypatch):
    import specdash.app.log.pane as pane_module

    monkeypatch.setattr(pane_module, "HISTORY_PENDING_MAX", 2000)  # more than the tail, less than tail + 3000
    log, lines = big_log(tmp_path)
    app = GatedApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.log_pane
        view = pane.view
        await wait_until(pilot, lambda: view.row_count and view.text_at_row(view.row_count - 1) == lines[-1],
                         what="the last line on screen")
        more = [decode_line(100_000 + i) for i in range(3000)]
        with log.open("a") as out:  # the server writes on while the history waits
            out.write("\n".join(more) + "\n")
        await wait_until(pilot, lambda: pane.history.abandoned, what="history given up")
        app.gate.set()  # the worker reads no history now: it analyses the lines waiting, then the live ones
        await wait_until(pilot, lambda: pane.history.finished and view.received >= view.line_count - 5
                         and pane.analyzer.lines == view.received, what="the lines shown analysed")
        texts = [view.text_at_row(r) for r in range(view.row_count)]
        assert any("history analysis stopped at 0 %" in text for text in texts)
        assert texts[-1] == more[-1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=400),
       st.lists(st.integers(min_value=0, max_value=400), max_size=6), st.booleans(),
       st.integers(min_value=1, max_value=8), st.integers(min_value=2, max_value=16))
def test_line_index_from_blocks_of_bytes_equals_the_index_from_line_offsets(lines, cuts, cut_last, step, max_entries):
    data = b"".join(line + b"\n" for line in lines)
    if cut_last and lines and lines[-1]:
        data = data[:-1]  # a last line without newline
    offsets = []
    position = 0
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    by_offsets, by_blocks = LineIndex(step, max_entries), LineIndex(step, max_entries)
    bounds = sorted({0, len(lines), *(c for c in cuts if c <= len(lines))})
    for first, last in zip(bounds, bounds[1:], strict=False):  # blocks of whole lines, as the history reads them
        by_offsets.add(offsets[first:last])
        start = offsets[first]
        by_blocks.add_block(data[start:offsets[last] if last < len(lines) else len(data)], start)
    assert (by_blocks.entries, by_blocks.step, by_blocks.lines) == (by_offsets.entries, by_offsets.step,
                                                                    by_offsets.lines)


class FirstFrameApp(GatedApp):
    """Notes what the log view holds when the first frame has been drawn."""

    at_first_frame: tuple[int, str] | None = None

    def first_frame_shown(self) -> None:
        view = self.log_pane.view
        self.at_first_frame = (view.line_count, view.text_at_row(view.row_count - 1) if view.row_count else "")
        super().first_frame_shown()


async def test_on_this_machine_the_last_lines_are_on_the_first_frame_and_the_follower_goes_on_after_them(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("\n".join(DEMO_LOG) + "\nstill being writ")  # the last line is not finished yet
    app = FirstFrameApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.at_first_frame is not None, what="the first frame")
        assert app.at_first_frame == (len(DEMO_LOG), DEMO_LOG[-1])  # every whole line, analysed
        pane, view = app.log_pane, app.log_pane.view
        assert pane.history is None and pane.analyzer.lines == len(DEMO_LOG)
        with log.open("a") as out:  # the line is finished, one more comes: each shown once, after the others
            out.write("ten\n[2025-08-12 16:05:50] one more line\n")
        await wait_until(pilot, lambda: view.line_count == len(DEMO_LOG) + 2, what="the new lines")
        await pilot.pause(0.5)  # (the follower polls every 0.2 s: nothing else comes)
        assert [view.text_at_row(r) for r in range(view.row_count)] == \
            DEMO_LOG + ["still being written", "[2025-08-12 16:05:50] one more line"]
        assert pane.analyzer.lines == len(DEMO_LOG) + 2


async def test_on_this_machine_a_big_logs_tail_is_on_the_first_frame_and_its_history_analysed_behind(tmp_path):
    log, lines = big_log(tmp_path)
    app = FirstFrameApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.at_first_frame is not None, what="the first frame")
        shown, last = app.at_first_frame
        assert last == lines[-1] and 0 < shown < len(lines) // 2
        pane, view = app.log_pane, app.log_pane.view
        assert pane.history is not None and not pane.history.finished and pane.analyzer.lines == 0
        app.gate.set()
        await wait_until(pilot, lambda: pane.history.finished, what="history analysed")
        whole = LogAnalyzer()
        whole.feed_many(lines)
        assert pane.analyzer.summary() == whole.summary()
        assert view.first_number == len(lines) - view.line_count + 1
        assert [view.text_at_row(r) for r in range(view.row_count)] == lines[-view.line_count:]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r\n", b"\xff", b"line of text "]), max_size=40),
       st.integers(min_value=1, max_value=64))
def test_the_tail_read_here_starts_where_the_followers_tail_starts_and_holds_its_whole_lines(tmp_path_factory, parts,
                                                                                            window):
    path = tmp_path_factory.mktemp("tail") / "server.log"
    data = b"".join(parts)
    path.write_bytes(data)
    got = read_tail_here(str(path), window)
    start = asyncio.run(recent_start_offset(LocalHost(), str(path), window))
    if start >= len(data) or b"\n" not in data[start:]:  # the window holds no line start, or no whole line
        assert got is None
        return
    assert got is not None
    first, tail = got
    assert first == start
    end = data.rindex(b"\n") + 1
    assert tail.end_offset == end
    assert tail.lines == data[start:end - 1].split(b"\n")
    assert all(data[o:].startswith(line + b"\n") for o, line in zip(tail.offsets, tail.lines, strict=True))


def test_the_tail_read_here_is_nothing_for_what_is_not_a_regular_file(tmp_path):
    import os

    assert read_tail_here(str(tmp_path / "missing.log")) is None
    assert read_tail_here(str(tmp_path)) is None  # a directory
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    assert read_tail_here(str(fifo)) is None  # (and it does not block waiting for a writer)


class CommandHost(LocalHost):
    """This machine, read the way a remote host is: through the host command (not in place)."""

    is_local = False


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\r\n", b"\xff", b"x" * 5000, b"line of text "]), max_size=300),
       st.integers(min_value=0, max_value=2000), st.integers(min_value=0, max_value=400_000))
def test_a_range_read_in_place_gives_the_blocks_the_host_command_gives(tmp_path_factory, parts, start, length):
    import specdash.hosts.tail as tail

    path = tmp_path_factory.mktemp("range") / "server.log"
    path.write_bytes(b"".join(parts))

    async def blocks(host):
        return [item async for item in tail.read_range_bytes(host, str(path), start, start + length)]

    async def both():
        return await blocks(LocalHost()), await blocks(CommandHost())

    here, there = asyncio.run(both())
    assert here == there


async def test_a_range_read_in_place_in_small_chunks_gives_the_blocks_the_host_command_gives(tmp_path, monkeypatch):
    import specdash.hosts.tail as tail

    log, lines = big_log(tmp_path, decode_lines=3000)
    size = log.stat().st_size
    there = [item async for item in tail.read_range_bytes(CommandHost(), str(log), 100, size - 7)]
    monkeypatch.setattr(tail, "RANGE_FRAME_CHARS", 4 * 1000)  # many chunks, lines across their edges
    here = [item async for item in tail.read_range_bytes(LocalHost(), str(log), 100, size - 7)]
    assert b"".join(block for _, block in here) == b"".join(block for _, block in there) == log.read_bytes()[100:-7]
    assert all(block.endswith(b"\n") for _, block in here[:-1]) and len(here) > 100
    assert [offset for offset, _ in here] == [100 + sum(len(b) for _, b in here[:i]) for i in range(len(here))]
    assert await alist(tail.read_range_bytes(LocalHost(), str(tmp_path / "missing.log"), 0, 100)) == []


async def alist(items) -> list:
    return [item async for item in items]


async def test_while_the_history_is_analysed_the_panels_move_with_each_whole_percent_not_with_the_clock(tmp_path):
    from specdash.app.log.findings_panel import FindingsPanel

    log, lines = big_log(tmp_path)
    app = GatedApp(LocalHost(), log_path=str(log), gpu_interval_s=3600)  # the test feeds the history itself
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.log_pane
        await wait_until(pilot, lambda: "history: 0 % analysed" in status_text(app), what="progress in the status")
        history = pane.history
        data = log.read_bytes()[:history.total_bytes]
        below_one = data.rindex(b"\n", 0, history.total_bytes // 100) + 1  # whole lines, under 1 % of the history
        pane.feed_history_bytes(data[:below_one], 0, below_one)
        assert pane.analyzer.findings  # the start-up's first findings are analysed ...
        await pilot.pause(0.8)  # ... and three timer ticks later not drawn: the history is still at 0 %
        panel = app.query_one(FindingsPanel)
        assert panel.option_count == 0 and "history: 0 % analysed" in status_text(app)
        two = data.rindex(b"\n", 0, history.total_bytes // 50) + 1
        pane.feed_history_bytes(data[below_one:two], below_one, two)  # past 1 %: drawn at the next tick
        await wait_until(pilot, lambda: panel.option_count == len(pane.findings), what="the findings so far")
        assert "history: 1 % analysed" in status_text(app)


#: modules of the panes and dialogs the console builds after its first frame (specdash.app.deferred_tabs)
AFTER_FIRST_FRAME = ("specdash.app.builder", "specdash.app.bench", "specdash.app.replay", "httpx", "textual_plotext")


def test_the_first_frame_imports_no_pane_that_is_built_after_it(tmp_path):
    # The tabs' labels name their keys (config.yaml may remap them): finding the app's own keys must not import
    # the builder, the bench pane (httpx, plotext) or the replay app, which the console builds after the first
    # frame. Run in a fresh interpreter: this test process has imported them all already.
    log = tmp_path / "server.log"
    log.write_text("\n".join(DEMO_LOG) + "\n")
    code = (
        "import sys\n"
        "from specdash.app.main import SpecdashApp\n"
        "from specdash.hosts.local import LocalHost\n"
        "async def main():\n"
        f"    app = SpecdashApp(LocalHost(), log_path={str(log)!r}, gpu_interval_s=3600)\n"
        "    def at_first_frame():\n"
        f"        print(' '.join(sorted(m for m in sys.modules if m.startswith({AFTER_FIRST_FRAME!r}))) or 'none')\n"
        "        app.exit()\n"
        "    app.first_frame_shown = at_first_frame\n"
        "    async with app.run_test(size=(160, 48)) as pilot:\n"
        "        while app.is_running:\n"
        "            await pilot.pause(0.05)\n"
        "import asyncio\n"
        "asyncio.run(main())\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=guard(120),
                            env={**os.environ, "SPECDASH_STATE_DIR": str(tmp_path / "state")})
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "none"
