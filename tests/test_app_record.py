"""Recording a live session from the app, then replaying it: the panes show the same findings, GPU rows, command
and benchmark results as they did live.

Live: the app connected over SSH to the real test sshd follows a real log file (the shipped demo log, real SGLang
0.5.x line formats) and samples the fake nvidia-smi on the remote PATH, which reports a real process we started as
holding GPU memory. The recording is the real
Recorder writing a .yaml.gz file; the replay is the real ReplayApp reading it back.
"""

from __future__ import annotations

import getpass
import json
import subprocess
import sys
from pathlib import Path

import pytest
from support.gpu import FakeGpuState
from support.pilot import wait_until

from specdash.app import recording
from specdash.app.bench.pane import BenchPane
from specdash.app.main import SpecdashApp
from specdash.app.replay import ReplayApp
from specdash.bench.sweep import SweepResult
from specdash.session.reader import read_session
from specdash.session.recorder import Recorder

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = (REPO / "sessions" / "demo-server.log").read_text().splitlines()
SWEEP = json.loads((REPO / "tests" / "data" / "bench" / "sweep_result.json").read_text())
COMMAND = ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE3 "
           "--speculative-draft /models/EAGLE3 --speculative-num-steps 1 --speculative-eagle-topk 1 "
           "--speculative-num-draft-tokens 16")


def gpu_rows(pane) -> list[tuple]:
    return sorted((p.pid, p.gpu_index, p.used_mib, p.process_class) for p in pane.processes)


@pytest.fixture
def holder():
    """A real process we start (and kill by PID at the end) that the fake driver says holds GPU memory."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    yield proc
    proc.kill()
    proc.wait()


class ListRecorder:
    """Keeps what the mixin records (the app's real recorder writes a file; here only the offsets matter)."""

    error = None

    def __init__(self) -> None:
        self.events: list[tuple[str, dict]] = []

    def now_s(self) -> float:
        return 0.0

    def record_event(self, event) -> None:
        doc = event.to_dict()
        doc.pop("t")
        self.events.append((doc.pop("kind"), doc))

    def record_log(self, texts, offsets, source) -> None:  # the recorder's path for log lines
        self.events.append(("log", {"lines": [[o, t] for o, t in zip(offsets, texts, strict=True)],
                                    "source": source}))


def test_line_offsets_are_the_followers_and_only_the_latest_are_kept(monkeypatch):
    monkeypatch.setattr(recording, "LINE_OFFSETS_KEPT", 3)
    mixin = recording.RecordingMixin()
    mixin.recorder = ListRecorder()
    mixin.set_interval = lambda *args: None
    mixin.start_recording_hooks()
    mixin.record_log_batch(["a", "b"], [0, 5], "server.log")
    mixin.record_log_batch(["c", "d"], [9, 20], "server.log")  # offsets as read: not len + 1 apart
    assert mixin.recorder.events[1] == ("log", {"lines": [[9, "c"], [20, "d"]], "source": "server.log"})
    assert [mixin._offset_of_line(n) for n in (1, 2, 3, 4, 5)] == [None, 5, 9, 20, None]
    mixin.record_log_batch(["x"], [0], "other.log")  # another file: its lines count from 1 again
    assert mixin._offset_of_line(1) == 0 and mixin._offset_of_line(2) is None


@pytest.fixture
async def recorded(tmp_path, holder, sshd):
    """Run the live app over SSH on the log + fake GPUs with a recorder; return (session path, what the panes
    showed, the log file)."""
    if True:
        state = FakeGpuState(sshd.gpu_state, gpus=2)
        state.add_process(holder.pid, 0, 70000)
        log = tmp_path / "server.log"
        log.write_text("\n".join(DEMO_LOG) + "\n")
        path = tmp_path / "session.yaml.gz"
        host = sshd.make_host()
        app = SpecdashApp(host, log_path=str(log), gpu_interval_s=0.3)
        app.recorder = Recorder(path, {"host": host.name, "note": "test"})
        live: dict = {}
        async with app.run_test(size=(160, 48)) as pilot:
            pane = app.log_pane
            await wait_until(pilot, lambda: pane.view.line_count >= len(DEMO_LOG), what="log lines")
            await wait_until(pilot, lambda: app.gpu_pane.view is not None
                             and any(p.pid == holder.pid for p in app.gpu_pane.processes), what="GPU rows")
            app.builder_pane.set_command(COMMAND)
            bench = app.query_one(BenchPane)
            sweep = SweepResult.from_dict(SWEEP)
            bench.show_sweep(sweep)
            bench.post_message(BenchPane.SweepFinished(sweep, None))
            with log.open("a") as f:  # a bar still being written (tqdm rewrites it with \r, newline at 100 %)
                f.write("Loading weights:  50%|#####     | 1/2\rLoading weights:  99%|######### | 2/2")
            await pilot.press("f3")
            await pilot.pause(1.2)  # a metric poll, a second GPU sample
            live["findings"] = sorted(f.kind for f in pane.analyzer.findings)
            live["gpu"] = gpu_rows(app.gpu_pane)
            live["command"] = app.builder_pane.command
            live["diagnostics"] = sorted(d.code for d in app.builder_pane.report.diagnostics)
            live["sweep_rows"] = [r.name for r in bench.sweep_result.rows()]
            live["recommendation"] = bench.sweep_result.recommendation().reason
            live["log_lines"] = pane.view.line_count
        return path, live, log


async def test_live_session_is_recorded_and_replays_to_the_same_panes(recorded):
    """One live recording (slow to make: a real app, host and sampler), checked twice: the file, then the replay."""
    path, live, log = recorded
    check_recording(path, live, log)
    await check_replay(path, live)


def check_recording(path, live, log) -> None:
    session = read_session(path)
    assert session.closed and session.problems == []
    assert session.header.host.startswith(f"{getpass.getuser()}@127.0.0.1:")

    lines = [line for ev in session.of_kind("log") for line in ev.lines]
    assert [text for _, text in lines] == DEMO_LOG
    data = log.read_bytes()
    for offset, text in lines:  # every offset points at the start of its line in the file
        assert data[offset:offset + len(text.encode())].decode() == text
    assert {ev.source for ev in session.of_kind("log")} == {str(log)}
    # the unfinished last line is recorded as its last state, not as a line
    assert [(ev.text, ev.source) for ev in session.of_kind("partial")] == \
        [("Loading weights:  99%|######### | 2/2", str(log))]

    findings = session.of_kind("finding")
    assert sorted(ev.code for ev in findings) == live["findings"]
    for ev in findings:
        if ev.line is not None:
            assert ev.offset == lines[ev.line - 1][0]

    gpu = session.of_kind("gpu")
    assert gpu
    last_rows = sorted((row[0], row[1], row[2], row[4]) for row in gpu[-1].processes)
    assert last_rows == live["gpu"]

    assert session.of_kind("metric"), "the decode metrics of the log were sampled"
    commands = session.of_kind("command")
    assert commands[-1].action == "validated" and commands[-1].command == COMMAND
    # what the builder showed (rules of the SGLang version it detected on the host) is what was recorded
    assert sorted(d["code"] for d in commands[-1].diagnostics) == live["diagnostics"]
    assert live["diagnostics"]
    assert session.of_kind("sweep")[0].baseline
    assert any(ev.binding == "app.tab_builder" for ev in session.of_kind("action"))
    assert any(ev.state == "connected" for ev in session.of_kind("connection"))


async def check_replay(path, live) -> None:
    app = ReplayApp(read_session(path), start_paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        app.player.seek(app.player.duration_s)
        await wait_until(pilot, lambda: app.player.at_end and app.log_pane.view.line_count == live["log_lines"],
                         what="replayed to the end")
        await wait_until(pilot, lambda: sorted(f.kind for f in app.log_pane.analyzer.findings) == live["findings"]
                         and gpu_rows(app.gpu_pane) == live["gpu"], what="the recorded findings and GPU rows",
                         state=lambda: (sorted(f.kind for f in app.log_pane.analyzer.findings),
                                        gpu_rows(app.gpu_pane)))
        assert app.builder_pane.command == live["command"]
        bench = app.query_one(BenchPane)
        assert [r.name for r in bench.sweep_result.rows()] == live["sweep_rows"]
        assert bench.sweep_result.recommendation().reason == live["recommendation"]
        assert not [n for n in app.notices if "not re-derived" in n]
        assert f"replay: {getpass.getuser()}@127.0.0.1:" in str(app.status_bar.render())
        assert "read-only replay" in str(app.status_bar.render())


def test_connect_with_a_bad_config_prints_one_line_and_exits_2(tmp_path):
    import os

    config = tmp_path / "config.yaml"
    config.write_text("theme: dark\nrecord: maybe\n")
    result = subprocess.run([sys.executable, "-m", "specdash", "connect", "local", "--no-record"],
                            env={**os.environ, "SPECDASH_CONFIG": str(config)}, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{config}:2" in lines[0] and "record" in lines[0]


def test_connect_record_and_no_record_are_exclusive(tmp_path):
    result = subprocess.run([sys.executable, "-m", "specdash", "connect", "local", "--record", str(tmp_path / "s.yaml"),
                             "--no-record"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "not allowed with" in result.stderr
    assert not (tmp_path / "s.yaml").exists()
