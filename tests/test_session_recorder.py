"""The recorder: what it writes reads back, thinning and batching, gzip, flushing, and crash safety
(a real child process recording is SIGKILLed mid-stream; everything complete stays readable)."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from specdash.gpu.model import GpuInfo, GpuProcess, GpuSnapshot
from specdash.session.events import (
    BenchEvent,
    GpuEvent,
    LogEvent,
    gpu_event_fields,
    gpu_snapshot_from_event,
    process_classes,
)
from specdash.session.reader import read_session
from specdash.session.recorder import MAX_LINE_CHARS, Recorder

DATA = Path(__file__).parent / "data" / "session"
DECODE_LINES = (DATA / "decode.log").read_text().splitlines()


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("name", ["s.yaml", "s.yaml.gz"])
def test_events_read_back_as_recorded(tmp_path, name):
    path = tmp_path / name
    clock = ManualClock()
    with Recorder(path, {"host": "gpu-box", "sglang_version": "0.5.6"}, clock=clock, timer=False) as rec:
        clock.now += 1.5
        rec.record("connection", state="connected", detail="gpu-box:22")
        clock.now += 1.0
        rec.record("log", lines=[[i * 100, line] for i, line in enumerate(DECODE_LINES)], source="/r/server.log")
        rec.record("bench", label="d4", result={"output_tokens_per_s": 1843.2, "ttft_ms": {"p50": 41.0}})
    log = read_session(path)
    assert log.problems == []
    assert log.closed
    assert log.header.host == "gpu-box" and log.header.sglang_version == "0.5.6"
    assert log.header.started_at[:4].isdigit() and "T" in log.header.started_at
    assert [e.kind for e in log.events] == ["connection", "log", "bench"]
    assert [e.t for e in log.events] == [1.5, 2.5, 2.5]
    assert isinstance(log.events[1], LogEvent)
    assert log.events[1].lines == [[i * 100, line] for i, line in enumerate(DECODE_LINES)]
    assert isinstance(log.events[2], BenchEvent) and log.events[2].result["ttft_ms"] == {"p50": 41.0}
    if name.endswith(".gz"):
        assert b"\n\"kind\": \"header\"\n" in gzip.decompress(path.read_bytes())[:40]


def test_file_is_a_yaml_stream_any_yaml_reader_reads(tmp_path):
    path = tmp_path / "s.yaml"
    odd = ["tab\there", "nul\x00byte", "ansi \x1b[31mred\x1b[0m", "del\x7f", "nel\x85x", "ls\u2028ps\u2029",
           "emoji 🚀 ünïcödé", "cr\rtqdm 50%|█████     |", 'quote " and \\ backslash', "--- not a separator", "..."]
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record("log", t=1.0, lines=[[i, text] for i, text in enumerate(odd)])
        rec.record("metric", t=2.0, values={"accept_len": 2.5, "accept_rate": None})
    docs = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
    assert [d["kind"] for d in docs] == ["header", "log", "metric", "end"]
    assert docs[1]["text"].split("\n") == odd and docs[1]["offsets"] == list(range(len(odd)))  # format 2
    assert [text for _, text in read_session(path).events[0].lines] == odd


def test_samples_are_thinned_to_one_per_second_and_log_batches_merged(tmp_path):
    path = tmp_path / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        kept = [rec.record("gpu", t=t, gpus=[[0, "H100", "GPU-1", 10, 80, 5]]) for t in (0.0, 0.3, 0.9, 1.0, 1.5, 2.2)]
        rec.record("metric", t=0.0, values={"accept_len": 2.0})
        assert rec.record("metric", t=0.5, values={"accept_len": 2.1}) is False
        rec.record("log", t=3.0, lines=[[0, "a"]], source="/x")
        rec.record("log", t=3.1, lines=[[2, "b"]], source="/x")
        rec.record("log", t=3.5, lines=[[4, "c"]], source="/x")
    assert kept == [True, False, False, True, False, True]
    log = read_session(path)
    assert [e.t for e in log.of_kind("gpu")] == [0.0, 1.0, 2.2]
    assert [e.values["accept_len"] for e in log.of_kind("metric")] == [2.0]
    logs = log.of_kind("log")
    assert [(e.t, e.lines) for e in logs] == [(3.0, [[0, "a"], [2, "b"]]), (3.5, [[4, "c"]])]


def test_huge_line_is_cut(tmp_path):
    path = tmp_path / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record("log", t=1.0, lines=[[0, "x" * 200_000]])
    text = read_session(path).events[0].lines[0][1]
    assert text.startswith("x" * MAX_LINE_CHARS) and "characters cut by the recorder" in text
    assert len(text) < MAX_LINE_CHARS + 100


def test_gpu_snapshot_round_trip(tmp_path):
    snap = GpuSnapshot(time_s=5.0, source="nvidia-smi",
                       gpus=(GpuInfo(0, "NVIDIA H100 80GB HBM3", "GPU-aa", 71234, 81559, 97),
                             GpuInfo(1, "NVIDIA H100 80GB HBM3", "GPU-bb", None, 81559, None)),
                       processes=(GpuProcess(4301, 0, "GPU-aa", 71200, "sglang::scheduler_TP0"),
                                  GpuProcess(4400, None, "GPU-zz", None, "python3")))
    path = tmp_path / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record("gpu", t=1.0, **gpu_event_fields(snap, {4301: ("orphan", "alice", "parent gone")}))
    event = read_session(path).events[0]
    assert isinstance(event, GpuEvent)
    back = gpu_snapshot_from_event(event, time_s=5.0)
    assert back.gpus == snap.gpus
    assert [(p.pid, p.gpu_index, p.used_mib, p.name) for p in back.processes] == [
        (4301, 0, 71200, "sglang::scheduler_TP0"), (4400, None, None, "python3")]
    assert process_classes(event) == {4301: ("orphan", "alice", "parent gone")}


def test_timer_flushes_within_a_second_without_more_records(tmp_path):
    path = tmp_path / "s.yaml"
    rec = Recorder(path, {"host": "h"}, flush_interval_s=0.2)
    try:
        rec.record("marker", text="hello")
        deadline = time.monotonic() + 3
        while "hello" not in path.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert "hello" in path.read_text()
        assert not read_session(path).closed
    finally:
        rec.close()
    assert read_session(path).closed


def test_existing_file_is_not_overwritten(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("precious\n")
    with pytest.raises(FileExistsError):
        Recorder(path, {"host": "h"}, timer=False)
    assert path.read_text() == "precious\n"


def test_unknown_kind_is_a_programming_error(tmp_path):
    with Recorder(tmp_path / "s.yaml", {"host": "h"}, timer=False) as rec:
        with pytest.raises(ValueError):
            rec.record("hologram", x=1)
        assert rec.record("marker", text="ok")
    assert rec.record("marker", text="after close") is False


CHILD = textwrap.dedent("""
    import sys, time
    from specdash.session.recorder import Recorder
    rec = Recorder(sys.argv[1], {"host": "child"}, flush_interval_s=0.05)
    i = 0
    offset = 0
    while True:
        batch = []
        for _ in range(50):
            text = f"line {i} " + "decode batch accept len 2.31 " * 4
            batch.append([offset, text])
            offset += len(text) + 1
            i += 1
        rec.record("log", lines=batch, source="/x")
        if i % 1000 == 0:
            rec.record("gpu", gpus=[[0, "H100", "GPU-1", i, 81559, 50]])
        time.sleep(0.001)
""")


@pytest.mark.parametrize("name", ["crash.yaml", "crash.yaml.gz"])
def test_sigkill_mid_stream_keeps_every_complete_document(tmp_path, name):
    path = tmp_path / name
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(path)], start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if path.exists() and path.stat().st_size > (60_000 if name.endswith(".gz") else 400_000):
                break
            time.sleep(0.02)
        else:
            pytest.fail("the recording child wrote too little")
    finally:
        os.kill(child.pid, signal.SIGKILL)  # our own child, by PID
        child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL
    log = read_session(path)
    assert log.header is not None and log.header.host == "child"
    assert not log.closed
    assert any("did not close" in p for p in log.problems)
    lines = [line for e in log.of_kind("log") for line in e.lines]
    assert len(lines) > 1000
    # Every line that was read is whole and in order, with no gap: a prefix of what the child wrote.
    offset = 0
    for i, (line_offset, text) in enumerate(lines):
        assert text == f"line {i} " + "decode batch accept len 2.31 " * 4
        assert line_offset == offset
        offset += len(text) + 1


@pytest.mark.parametrize("name", ["cut.yaml", "cut.yaml.gz"])
def test_a_file_cut_at_any_byte_reads_a_prefix(tmp_path, name):
    path = tmp_path / name
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        for i in range(40):
            rec.record("log", t=i, lines=[[i, f"line {i}"]])
            rec.flush()
    data = path.read_bytes()
    full = [e.lines for e in read_session(path).events]
    cut_path = tmp_path / ("cut-" + name)
    previous = 0
    for cut in list(range(len(data) // 3, len(data), max(1, len(data) // 150))) + [len(data) - 1]:
        cut_path.write_bytes(data[:cut])
        log = read_session(cut_path)
        got = [e.lines for e in log.events]
        assert got == full[:len(got)], cut
        assert len(got) >= previous, cut  # more bytes never read less
        previous = len(got)
        assert log.problems, cut  # a cut file is never reported as whole
    assert previous == len(full)  # cut in the end document: every event is still there


def test_start_recording_follows_record_options(tmp_path, monkeypatch):
    from specdash.session.recorder import start_recording

    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    assert start_recording(None, enabled=False, host="gpu-box") is None  # --no-record
    rec = start_recording(None, host="alice@gpu box:22", sglang_version="0.5.6")
    rec.close()
    assert rec.path.parent == tmp_path / "state" / "sessions"
    assert rec.path.name.endswith("-alice_gpu_box_22.yaml.gz")
    assert oct(rec.path.stat().st_mode & 0o777) == "0o600"
    assert read_session(rec.path).header.sglang_version == "0.5.6"
    chosen = tmp_path / "mine.yaml"
    start_recording(chosen, enabled=False, host="h").close()  # --record PATH wins over record: false
    assert read_session(chosen).header.host == "h"


def test_dataclasses_and_enums_are_stored_as_plain_data_and_redacted(tmp_path):
    import dataclasses as dc

    from specdash.hosts.base import ConnState

    @dc.dataclass
    class Diagnostic:
        severity: str
        code: str
        message: str
        flags: tuple[str, ...]

    path = tmp_path / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record("connection", t=1.0, state=ConnState.RETRYING, detail=Path("/x"))
        rec.record("command", t=2.0, action="validated", command="sglang serve",
                   diagnostics=[Diagnostic("warning", "w1", "uses --api-key hunter2", ("--api-key",))],
                   effective={"speculative_accept_threshold_single": float("nan")})
    log = read_session(path)
    assert (log.events[0].state, log.events[0].detail) == ("retrying", "/x")
    assert log.events[1].diagnostics == [{"severity": "warning", "code": "w1",
                                          "message": "uses --api-key <redacted>", "flags": ["--api-key"]}]
    assert log.events[1].effective == {"speculative_accept_threshold_single": None}
    assert "hunter2" not in path.read_text()


def test_a_findings_key_is_kept_and_a_secret_under_a_key_field_is_still_redacted(tmp_path):
    """A finding's de-duplication key is an identifier (replay and ``replay --summary`` group versions by it): it
    reads back as recorded; a token-shaped value under a field named ``key`` is still redacted, and so is any value
    under ``api_key``."""
    path = tmp_path / "s.yaml"
    token = "hf_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7"
    with Recorder(path, {"host": "gpu-box"}, clock=ManualClock(), timer=False) as rec:
        rec.record("finding", code="draft-tokens-adjusted", severity="override", message="16 -> 2", line=12,
                   key="draft-tokens-adjusted")
        rec.record("bench", label="x", result={"key": token, "api_key": "plain-words"})
    log = read_session(path)
    finding, bench = log.events
    assert finding.key == "draft-tokens-adjusted"
    assert bench.result == {"key": "<redacted>", "api_key": "<redacted>"}
    assert token not in path.read_text()
