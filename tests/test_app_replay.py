"""The replay UI: keys (p, [, ], }, {, +, -, g), read-only (K and l refused), damaged files replay what is readable
and say what was skipped, and a recorded finding the analysis no longer derives is called out.

Sessions are written by the real Recorder (fake clock for the times); the log lines are the shipped demo log, and
the recorded findings are what the real log analyzer derives from them, as the live app would have recorded.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.pilot import screen_text, wait_until

from specdash.app.replay import ReplayApp, parse_seek_time
from specdash.gpu.model import GpuInfo, GpuProcess, GpuSnapshot
from specdash.logs.analyzer import LogAnalyzer
from specdash.session.events import LogEvent, gpu_event_fields
from specdash.session.reader import read_session
from specdash.session.recorder import Recorder

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = (REPO / "sessions" / "demo-server.log").read_text().splitlines()
SIZE = (160, 48)


def snapshot(used_mib: int, pids: list[int]) -> GpuSnapshot:
    gpus = tuple(GpuInfo(index=i, name="NVIDIA H100 80GB HBM3", uuid=f"GPU-{i}", memory_used_mib=used_mib if i == 0
                         else 4, memory_total_mib=81559, utilization_pct=0) for i in range(2))
    procs = tuple(GpuProcess(pid=pid, gpu_index=0, gpu_uuid="GPU-0", used_mib=used_mib // max(len(pids), 1),
                             name="sglang::scheduler_TP0") for pid in pids)
    return GpuSnapshot(time_s=0.0, source="nvidia-smi", gpus=gpus, processes=procs)


def write_session(path: Path, *, findings_override: dict | None = None) -> list[str]:
    """A 12-line-per-second session of the demo log with its findings, GPU samples and a kill; returns the
    finding codes the analyzer derived, in order. ``findings_override`` renames recorded codes (key
    ``"__first__"``: the first finding)."""
    now = [0.0]
    rec = Recorder(path, {"host": "gpu1.example.com", "note": "test session"}, clock=lambda: now[0], timer=False)
    rec.record("connection", state="connected", detail="")
    rec.record("command", action="launched", command="python3 -m sglang.launch_server --model-path /m", pgid=4242)
    codes: list[str] = []
    analyzer = LogAnalyzer(on_finding=lambda f: codes.append(f.kind))
    offset = 0
    for start in range(0, len(DEMO_LOG), 12):
        now[0] += 1.0
        batch = DEMO_LOG[start:start + 12]
        before = len(codes)
        analyzer.feed_many(batch)
        lines = []
        for text in batch:
            lines.append([offset, text])
            offset += len(text.encode()) + 1
        rec.record("log", lines=lines, source="/var/log/sglang/server.log")
        for index in range(before, len(codes)):
            now[0] += 0.01
            code = (findings_override or {}).get("__first__" if index == 0 else codes[index], codes[index])
            rec.record("finding", code=code, severity="warning", message=f"recorded {code}")
        if start % 24 == 0:
            rec.record("gpu", **gpu_event_fields(snapshot(70000, [5001, 5002]), {
                5001: ("orphan", "alice", "parent gone"), 5002: ("orphan", "alice", "parent gone")}))
    now[0] += 1.0
    rec.record("kill", targets=[{"pid": 5001}, {"pid": 5002}], outcome="released", before_mib=70000, after_mib=0,
               signals=["SIGTERM group 4242"], detail="killed 2 of 2 processes")
    now[0] += 1.0
    rec.record("gpu", **gpu_event_fields(snapshot(4, []), {}))
    rec.close()
    return codes


def test_parse_seek_time():
    assert parse_seek_time("01:30") == 90
    assert parse_seek_time("1:02:03") == 3723
    assert parse_seek_time("45s") == 45
    with pytest.raises(ValueError):
        parse_seek_time("soon")


async def test_keys_pause_step_and_jump_to_findings(tmp_path):
    path = tmp_path / "s.yaml"
    codes = write_session(path)
    assert codes, "the demo log yields findings"
    session = read_session(path)
    app = ReplayApp(session, start_paused=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.player.paused and app.player.status().index == 0
        view = app.log_pane.view
        # a path of the recording machine is marked as such, not shown as if it were here
        assert app.log_pane.border_title == "recorded log: /var/log/sglang/server.log"

        await pilot.press("right_square_bracket")  # ] : connection
        await pilot.press("right_square_bracket")  # ] : command
        await pilot.press("right_square_bracket")  # ] : first log batch
        await wait_until(pilot, lambda: view.line_count == 12, what="first batch")
        assert app.builder_pane.command.startswith("python3 -m sglang.launch_server")
        assert app.player.status().index == 3

        await pilot.press("left_square_bracket")  # [ : back one event -> log empty again
        await wait_until(pilot, lambda: view.line_count == 0, what="rewind")
        assert app.player.status().index == 2

        await pilot.press("right_curly_bracket")  # } : next finding
        first_finding = next(e for e in session.events if e.kind == "finding")
        await wait_until(pilot, lambda: app.player.position_s == pytest.approx(first_finding.t), what="finding")
        await wait_until(pilot, lambda: codes[0] in {f.kind for f in app.log_pane.analyzer.findings},
                         what="finding derived")
        assert "finding" in str(app.query_one("#replay-status").render())

        await pilot.press("plus", "plus")
        assert app.player.speed == 4
        await pilot.press("minus")
        assert app.player.speed == 2

        await pilot.press("p")  # resume
        assert not app.player.paused
        await pilot.press("p")
        assert app.player.paused

        await pilot.press("g")
        await pilot.press(*"0:00", "enter")  # seek back to the start: panes cleared
        await wait_until(pilot, lambda: view.line_count == 0 and app.gpu_pane.view is None, what="seek to 0")

        app.player.seek(app.player.duration_s)
        await wait_until(pilot, lambda: view.line_count == len(DEMO_LOG), what="end")
        await wait_until(pilot, lambda: app.gpu_pane.processes == (), what="the last GPU sample",
                         state=lambda: app.gpu_pane.processes)
        assert app.gpu_pane.processes == ()  # the last sample: memory released after the kill
        assert "released" in str(app.gpu_pane.query_one("#gpu-status").render())


@pytest.mark.parametrize("target", ["0:00", "0:10"])
async def test_a_seek_clears_the_log_filter(tmp_path, target):
    from textual.widgets import Input

    path = tmp_path / "s.yaml.gz"
    write_session(path)
    session = read_session(path)
    app = ReplayApp(session, start_paused=True)
    async with app.run_test(size=SIZE) as pilot:
        app.player.seek(5.0)
        view = app.log_pane.view
        await wait_until(pilot, lambda: view.line_count > 0, what="lines")
        app.log_pane.view.focus()
        await pilot.press("slash", *"zzz-no-such-line")
        status = app.log_pane.query_one("#log-status")
        await wait_until(pilot, lambda: "filter: 0 lines" in str(status.render()), what="the filter applied")
        await pilot.press("enter")
        await pilot.press("g", *target, "enter")
        box = app.log_pane.query_one("#log-filter", Input)
        await wait_until(pilot, lambda: "filter:" not in str(status.render()), what="the filter gone after the seek")
        assert box.value == "" and not box.display
        await wait_until(pilot, lambda: view.row_count == view.line_count, what="every line shown")


async def test_recorded_capture_progress_moves_the_start_up_bar(tmp_path, monkeypatch):
    from specdash.app.log.startup_bar import StartupBar

    monkeypatch.setattr(StartupBar, "clock", staticmethod(lambda: 1000.0))  # a frozen ETA countdown
    path = tmp_path / "capture.yaml"
    now = [0.0]
    rec = Recorder(path, {"host": "gpu1"}, clock=lambda: now[0], timer=False)
    rec.record("log", lines=[[0, "[2025-08-12 16:02:26 TP0] Capture cuda graph begin. This can take up to several "
                                  "minutes. avail mem=14.77 GB"]], source="/srv/server.log")
    for i, t in ((3, 1.0), (7, 2.0)):
        now[0] = t
        rec.record("partial", text=f"Capturing batches (bs=40 avail_mem=14.50 GB):  {i}0%|###       | {i}/10 "
                                   f"[00:{2 * i:02d}<00:{2 * (10 - i):02d},  0.50it/s]", source="/srv/server.log")
    rec.close()
    session = read_session(path)
    assert [e.kind for e in session.events][:3] == ["log", "partial", "partial"]
    app = ReplayApp(session, start_paused=True)
    async with app.run_test(size=SIZE) as pilot:
        eta = app.query_one("#startup-eta")
        for _ in range(2):  # the log line, then the first progress state
            await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: "capture: 30%" in str(eta.render()), what="30 % from the recording")
        assert "ETA 14 s" in str(eta.render()) and app.log_pane.view.line_count == 1
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: "capture: 70%" in str(eta.render()), what="70 %")


async def test_replay_is_read_only_kill_and_launch_are_refused(tmp_path):
    path = tmp_path / "s.yaml.gz"
    write_session(path)
    session = read_session(path)
    app = ReplayApp(session, start_paused=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.player.seek(session.of_kind("gpu")[0].t)  # the first GPU sample: two orphans on screen
        await wait_until(pilot, lambda: len(app.gpu_pane.processes) == 2, what="orphans")
        assert {p.process_class for p in app.gpu_pane.processes} == {"orphan"}
        app.gpu_pane.focus()
        await pilot.press("K")
        await pilot.press("l")
        await wait_until(pilot, lambda: sum("Read-only session:" in n.message for n in app._notifications) >= 2,
                         what="both read-only notices", state=lambda: [n.message for n in app._notifications])
        messages = [n.message for n in app._notifications]
        assert any("Read-only session: killing is disabled" in m for m in messages)
        assert any("Read-only session: launching a server is disabled" in m for m in messages)
        assert len(app.gpu_pane.processes) == 2 and app.run_handle is None
        await pilot.press("f4")  # the Benchmarks pane: its footer offers no benchmark, sweep or run to cancel
        await wait_until(pilot, lambda: "Import results file" in screen_text(app), what="the bench pane's footer",
                         state=lambda: screen_text(app).splitlines()[-1])
        footer = screen_text(app).splitlines()[-1]
        assert "Cancel run" not in footer and "Benchmark" not in footer and "Depth sweep" not in footer, footer


async def test_damaged_file_replays_what_is_readable_and_says_what_was_skipped(tmp_path):
    """Also: a recorded finding that this version's analysis does not derive from the same lines is called out
    (here the first finding was recorded under a retired code)."""
    path = tmp_path / "s.yaml"
    codes = write_session(path, findings_override={"__first__": "retired_check"})
    text = path.read_text()
    docs = text.split("--- # size")
    # bad YAML in the middle (a log batch), and the last write cut short
    middle = next(i for i in range(6, len(docs)) if '"kind": "log"' in docs[i])
    docs[middle] = docs[middle].replace('"kind": "log"', '"kind": [unclosed', 1)
    damaged = "--- # size".join(docs)
    path.write_text(damaged[: len(damaged) - 40])
    session = read_session(path)
    assert any("bad YAML" in p for p in session.problems)
    readable_lines = sum(len(e.lines) for e in session.events if isinstance(e, LogEvent))
    assert 0 < readable_lines < len(DEMO_LOG)

    app = ReplayApp(session, start_paused=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.player.seek(app.player.duration_s)
        await wait_until(pilot, lambda: app.log_pane.view.line_count == readable_lines, what="readable lines")
        await wait_until(pilot, lambda: any(word in str(app.query_one("#replay-notes").render())
                                            for word in ("bad YAML", "end")),
                         what="the replay notes", state=lambda: str(app.query_one("#replay-notes").render()))
        notes = str(app.query_one("#replay-notes").render())
        assert "bad YAML" in notes or "end" in notes
        assert any("bad YAML" in n for n in app.notices)
        assert any(n.severity == "warning" and "problem" in n.message for n in app._notifications)
        assert any("'retired_check'" in n and "not re-derived" in n for n in app.notices)
        assert not any(f"'{codes[0]}'" in n for n in app.notices)


SHIPPED = REPO / "sessions" / "demo-eagle3-field-reports.yaml.gz"


def test_shipped_demo_session_tells_the_whole_story_and_says_it_is_a_demonstration():
    assert SHIPPED.stat().st_size < 2 * 1024 * 1024
    session = read_session(SHIPPED)
    assert session.problems == [] and session.closed
    assert session.header.demo and "test double" in session.header.note and "not a real GPU run" in session.header.note
    findings = [(e.code, e.message) for e in session.of_kind("finding")]
    assert any("unrecognized argument" in m for _, m in findings)  # the wrong flag name
    assert any("bare AssertionError" in m for _, m in findings)
    assert any(code == "override" and "num_draft_tokens overridden" in m for code, m in findings)  # 16 -> 2
    # findings are recorded as first raised (one decode sample: "not judged"); the replay's analysis of the recorded
    # log, as the console shows it, finds the draft almost never accepted on the 16 -> 2 server
    derived: list[tuple[str, str]] = []
    by_source: dict[str, list[str]] = {}
    for event in session.of_kind("log"):
        by_source.setdefault(event.source, []).extend(text for _, text in event.lines)
    for lines in by_source.values():
        analyzer = LogAnalyzer()
        analyzer.feed_many(lines)
        derived += [(f.kind, f.message) for f in analyzer.findings]
    assert any(code == "low_acceptance" and "of a possible 2" in m for code, m in derived)
    validated = [e for e in session.of_kind("command") if e.action == "validated"]
    assert any(d["code"] == "unknown-flag" for e in validated for d in e.diagnostics)
    assert any(e.effective.get("speculative_num_draft_tokens") == 2 and "--speculative-num-draft-tokens 16" in e.command
               for e in validated)
    (bench,) = session.of_kind("bench")
    assert bench.result["accept_length"] < 1.2
    (kill,) = session.of_kind("kill")
    assert kill.outcome == "released" and kill.before_mib > 0 and kill.after_mib == 0
    assert any(row[4] == "orphan" for e in session.of_kind("gpu") for row in e.processes if len(row) > 4)
    (sweep,) = session.of_kind("sweep")
    assert sweep.baseline == "baseline" and len(sweep.points) >= 3 and sweep.recommendation
    first_event = session.events[0].t
    assert session.duration_s - first_event < 300  # a few minutes at 1x
    # every accept length stays possible for the configuration that produced it
    import re

    pattern = r"accept length ([\d.]+) of a possible (\d+)"
    stated = [(float(a), int(b)) for _, m in findings + derived for a, b in re.findall(pattern, m)]
    assert len(stated) >= 4 and all(value <= possible for value, possible in stated), stated
    assert not any(code == "accept_above_max" for code, _ in findings + derived)
    assert all(p["accept_length"] is None for p in sweep.points if p["label"] == "baseline")  # no speculation


def _low_accept_session(path: Path) -> None:
    """The demo log with every accept length at 1.05 (a low-acceptance finding, which raises a notice), recorded
    with a tab switch to the builder (F3) early on, as a user looking at the builder would leave it."""
    import re

    low = [re.sub(r"accept len: [\d.]+", "accept len: 1.05", line) for line in DEMO_LOG]
    now = [0.0]
    rec = Recorder(path, {"host": "gpu1.example.com", "note": "test session"}, clock=lambda: now[0], timer=False)
    rec.record("connection", state="connected", detail="")
    now[0] += 0.5
    rec.record("action", binding="app.tab_builder")
    offset = 0
    for start in range(0, len(low), 40):
        now[0] += 1.0
        lines = []
        for text in low[start:start + 40]:
            lines.append([offset, text])
            offset += len(text.encode()) + 1
        rec.record("log", lines=lines, source="/var/log/sglang/server.log")
    rec.close()


async def test_replay_keeps_the_viewers_tab_and_seeks_do_not_stack_notices(tmp_path):
    """A seek shows no notice of the events it skips over (they are the past of the new position): seeking to the
    end and back again and again raises no "Low acceptance" toast (before: one per seek, stacking); playing the
    same events at their pace (steps forward here) raises it, once."""
    from textual.widgets import TabbedContent

    def low_toasts():
        return [n for n in app._notifications if "Low acceptance" in n.message]

    path = tmp_path / "low.yaml"
    _low_accept_session(path)
    app = ReplayApp(read_session(path), start_paused=True)
    async with app.run_test(size=SIZE) as pilot:
        tabs = app.query_one(TabbedContent)
        await pilot.press("f4")  # the viewer's own choice holds through the replay and seeks
        for target in ("9:00", "0:00", "0:02", "9:00"):
            await pilot.press("g")
            await pilot.press(*target, "enter")
            await pilot.pause(0.1)
            if target == "9:00":
                await wait_until(pilot, lambda: app.log_pane.view.line_count == len(DEMO_LOG), what="whole log")
                await wait_until(pilot, lambda: any(f.kind == "low_acceptance" for f in app.log_pane.analyzer.findings),
                                 what="the low-acceptance finding re-derived")
                await pilot.pause(0.2)
                assert low_toasts() == [], target
        assert tabs.active == "bench"  # the recorded F3 did not switch the viewer's pane
        await pilot.press("g")
        await pilot.press(*"0:00", "enter")
        await pilot.pause(0.1)
        for _ in range(app.player.status().total):
            await pilot.press("]")  # each event handed out as playback reaches it
        await wait_until(pilot, lambda: len(low_toasts()) == 1, 10.0, what="the notice when playback passes the finding",
                         state=lambda: [n.message for n in app._notifications])
        await pilot.pause(0.2)
        assert len(low_toasts()) == 1


async def test_a_recorded_tab_switch_is_named_in_the_replay_bar(tmp_path):
    from textual.widgets import TabbedContent

    path = tmp_path / "low.yaml"
    _low_accept_session(path)
    app = ReplayApp(read_session(path), start_paused=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right_square_bracket", "right_square_bracket")  # connection, then the recorded F3
        expected = "key: app.tab_builder (F3 shows it — the recorded user looked at the builder pane)"
        await wait_until(pilot, lambda: expected in str(app.query_one("#replay-status").render()),
                         what="the recorded key in the replay bar",
                         state=lambda: str(app.query_one("#replay-status").render()))
        assert app.query_one(TabbedContent).active == "log"  # named, not switched to


async def test_replay_help_is_plain_text_lists_quit_and_f_keys_and_follows_the_keymap(tmp_path):
    path = tmp_path / "s.yaml"
    write_session(path)
    app = ReplayApp(read_session(path), start_paused=True, keymap={"app.tab_builder": "f6", "replay.seek": "ctrl+g"})
    async with app.run_test(size=(100, 80)) as pilot:
        await pilot.pause(0.2)
        await pilot.press("f1")
        await wait_until(pilot, lambda: bool(app.screen.query("#help-body")), what="the help screen",
                         state=lambda: type(app.screen).__name__)
        body = str(app.screen.query_one("#help-body").render())
        assert "[b]" not in body and "[/b]" not in body and "[/]" not in body
        rows = {line.split()[0]: " ".join(line.split()[1:]) for line in body.splitlines() if line.startswith("  ")}
        assert rows["q"] == "Quit" and rows["f1"] == "/ ? Help" and rows["f2"] == "Log" and rows["f5"] == "GPUs"
        assert rows["f6"] == "Builder" and "f3" not in rows  # the remapped key, not the default
        assert rows["ctrl+g"] == "Seek" and "g" not in rows
        assert rows["p"] == "Pause/resume" and rows["["] == "Step back" and rows["-"] == "Slower"
        await pilot.press("escape")
        tabs = ["F2 Log", "F6 Launch builder", "F4 Benchmarks"]
        await wait_until(pilot, lambda: [str(t.label) for t in app.query("ContentTab")][:3] == tabs,
                         what="the tab labels", state=lambda: [str(t.label) for t in app.query("ContentTab")])


async def test_replayed_orphan_row_shows_its_recorded_parent(tmp_path):
    """An orphan re-parented to PID 1, recorded with its PPID and PGID: the replayed process table shows them
    (a `-` there contradicted the row's own "re-parented to PID 1")."""
    from textual.widgets import DataTable

    path = tmp_path / "s.yaml"
    now = [0.0]
    rec = Recorder(path, {"host": "gpu1", "note": "test"}, clock=lambda: now[0], timer=False)
    reason = "orphan of a crashed server: no live SGLang launcher owns it; re-parented to PID 1"
    now[0] = 1.0
    rec.record("gpu", **gpu_event_fields(snapshot(60000, [6315]), {6315: ("orphan", "alice", reason, 1, 6309)}))
    rec.close()
    app = ReplayApp(read_session(path), start_paused=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right_square_bracket")
        gpus = app.gpu_pane
        await wait_until(pilot, lambda: bool(gpus.processes), what="the recorded sample")
        [proc] = gpus.processes
        assert (proc.ppid, proc.pgid, proc.process_class) == (1, 6309, "orphan")
        table = gpus.query_one(DataTable)
        header = [str(c.label) for c in table.columns.values()]
        row = [str(cell) for cell in table.get_row_at(0)]
        assert row[header.index("PPID")] == "1", list(zip(header, row, strict=False))


async def test_finding_keys_in_a_session_without_findings_say_so(tmp_path):
    """``}`` in a session that recorded no finding said "No more findings ahead.", as if there had been some."""
    story = (REPO / "tests" / "data" / "session" / "story.yaml").read_text()
    docs = story.split("--- ")
    path = tmp_path / "quiet.yaml"
    path.write_text("--- ".join(d for d in docs if '"kind": "finding"' not in d))
    app = ReplayApp(read_session(path), 1.0, start_paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for key in ("right_curly_bracket", "left_curly_bracket"):
            await pilot.press(key)
            await wait_until(pilot, lambda: any("No findings were recorded in this session." in str(n.message)
                                                for n in app._notifications), what="the notice")
            app.clear_notifications()
        assert not any("No more findings" in n.text for n in app.notice_log.notices)
    app = ReplayApp(read_session(REPO / "tests" / "data" / "session" / "story.yaml"), 1.0, start_paused=True)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("left_curly_bracket")  # at the start of a session that has findings
        await wait_until(pilot, lambda: any("No more findings before this point." in str(n.message)
                                            for n in app._notifications), what="the notice")
