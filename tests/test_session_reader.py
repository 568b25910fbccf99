"""Reading damaged session files: what is readable is kept, and the problems say where and what was skipped."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from specdash.session.events import FindingEvent, UnknownEvent
from specdash.session.reader import SessionError, read_session
from specdash.session.recorder import Recorder

STORY = Path(__file__).parent / "data" / "session" / "story.yaml"


def record(path: Path, n: int = 10) -> None:
    with Recorder(path, {"host": "h", "sglang_version": "0.5.6"}, timer=False) as rec:
        for i in range(n):
            rec.record("log", t=float(i), lines=[[i * 10, f"line {i}"]], source="/x")


def doc_starts(text: str) -> list[int]:
    """Line numbers (1-based) of the document separators."""
    return [n for n, line in enumerate(text.splitlines(), start=1) if line.startswith("---")]


def test_shipped_story_file_reads_whole():
    log = read_session(STORY)
    assert log.problems == []
    assert log.closed
    assert log.header.demo is True and log.header.host == "gpu-box"
    findings = log.of_kind("finding")
    assert [f.severity for f in findings] == ["error", "override", "warning"]
    assert isinstance(findings[0], FindingEvent) and "AssertionError" in findings[0].message


def test_truncated_last_document_is_skipped_and_named(tmp_path):
    path = tmp_path / "s.yaml"
    record(path)
    text = path.read_text()
    # Crash while writing event 10: cut the file in the middle of the last log line (drop the end document).
    body = text[: text.rindex("--- # size", 0, text.rindex("\"kind\": \"end\""))]
    last_start = body.rindex("--- # size")
    cut = body[: last_start + (len(body) - last_start) * 2 // 3]
    path.write_text(cut)
    log = read_session(path)
    assert [e.lines[0][1] for e in log.events] == [f"line {i}" for i in range(9)]
    document_index = len(doc_starts(cut))
    separator_line = doc_starts(cut)[-1]
    assert any(p.startswith(f"document {document_index} (line {separator_line}): truncated") for p in log.problems)
    assert any("did not close" in p for p in log.problems)


def test_truncation_at_a_line_boundary_is_caught_by_the_size(tmp_path):
    path = tmp_path / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record("log", t=1.0, lines=[[0, "a"], [2, "b"], [4, "c"]])
        rec.record("log", t=2.0, lines=[[6, "d"], [8, "e"], [10, "f"]])
    text = path.read_text()
    cut = text[: text.index('"offsets": [6, 8, 10]')]  # ends with a whole line, but the document is incomplete
    path.write_text(cut)
    log = read_session(path)
    assert [e.lines for e in log.events] == [[[0, "a"], [2, "b"], [4, "c"]]]
    assert any("document 3" in p and "truncated" in p and "characters" in p for p in log.problems)


def test_bad_yaml_in_the_middle_loses_only_that_document(tmp_path):
    path = tmp_path / "s.yaml"
    record(path)
    lines = path.read_text().splitlines(keepends=True)
    starts = doc_starts("".join(lines))
    # Damage document 5 (the 4th log event): garbage that is neither JSON nor YAML.
    damaged_line = starts[4] + 2  # its "t:" line
    lines[damaged_line - 1] = "t: [1, 2\n  lines: {{{ : :\n"
    path.write_text("".join(lines))
    log = read_session(path)
    assert [e.lines[0][1] for e in log.events] == [f"line {i}" for i in range(10) if i != 3]
    problem = next(p for p in log.problems if p.startswith("document 5 "))
    assert f"(line {starts[4]})" in problem and "bad YAML" in problem and "skipped" in problem
    assert log.closed


def test_unknown_kind_is_kept_and_reported_once_with_count(tmp_path):
    path = tmp_path / "s.yaml"
    record(path, n=3)
    text = path.read_text()
    end = text.rindex("--- # size")
    extra = "---\nkind: hologram\nt: 1.5\nbeam: {power: 3}\n---\nkind: hologram\nt: 1.7\n"
    path.write_text(text[:end] + extra + text[end:])
    log = read_session(path)
    unknown = [e for e in log.events if isinstance(e, UnknownEvent)]
    assert [(e.unknown_kind, e.t, e.fields) for e in unknown] == [("hologram", 1.5, {"beam": {"power": 3}}),
                                                                ("hologram", 1.7, {})]
    reports = [p for p in log.problems if "hologram" in p]
    assert len(reports) == 1 and "2 document(s)" in reports[0] and "document 5" in reports[0]
    assert len(log.of_kind("log")) == 3


def test_hand_written_yaml_session_is_read(tmp_path):
    path = tmp_path / "hand.yaml"
    path.write_text(
        "# written by hand\n"
        "kind: header\nhost: box\ndemo: yes\n"
        "---\nkind: finding   # a comment\nt: 2\nseverity: error\nmessage: crashed\n"
        "--- {kind: marker, t: 3, text: flow style}\n"
        "---\nkind: log\nt: 4\nlines:\n  - [0, plain text]\n  - - 11\n    - 'quoted: yes'\n"
    )
    log = read_session(path)
    assert log.header.host == "box" and log.header.demo is True
    assert [e.kind for e in log.events] == ["finding", "marker", "log"]
    assert log.events[1].text == "flow style"
    assert log.events[2].lines == [[0, "plain text"], [11, "quoted: yes"]]


def test_truncated_gzip_reads_flushed_blocks(tmp_path):
    path = tmp_path / "s.yaml.gz"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        for i in range(20):
            rec.record("marker", t=float(i), text=f"m{i}")
            rec.flush()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 3 // 4])
    log = read_session(path)
    texts = [e.text for e in log.events]
    assert texts == [f"m{i}" for i in range(len(texts))] and len(texts) >= 10
    assert any("gzip stream not finished" in p for p in log.problems)


def test_plain_gzip_of_a_session_reads(tmp_path):
    path = tmp_path / "story.yaml.gz"
    path.write_bytes(gzip.compress(STORY.read_bytes()))
    assert len(read_session(path).events) == len(read_session(STORY).events)


def test_missing_header_is_reported(tmp_path):
    path = tmp_path / "s.yaml"
    shutil.copy(STORY, path)
    text = path.read_text()
    second = text.index("--- # size", 1)
    path.write_text(text[second:])
    log = read_session(path)
    assert log.header is None
    assert any("no header" in p for p in log.problems)


@pytest.mark.parametrize("content, message", [
    ("", "empty file"),
    ("root:x:0:0:root:/root:/bin/bash\n", "not a specdash session"),
    ("---\n- just\n- a list\n", "not a specdash session"),
])
def test_not_a_session_raises_one_line(tmp_path, content, message):
    path = tmp_path / "x.yaml"
    path.write_text(content)
    with pytest.raises(SessionError) as info:
        read_session(path)
    assert message in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file_raises(tmp_path):
    with pytest.raises(SessionError, match="no such file"):
        read_session(tmp_path / "nope.yaml")


def test_document_with_wrong_field_shape_is_skipped_and_named(tmp_path):
    path = tmp_path / "s.yaml"
    record(path, n=2)
    text = path.read_text()
    end = text.rindex("--- # size")
    bad = "---\nkind: log\nt: 1.5\nlines: not a list\n---\nkind: log\nt: 1.6\nlines: [[1]]\n"
    path.write_text(text[:end] + bad + text[end:])
    log = read_session(path)
    assert len(log.of_kind("log")) == 2
    assert any(p.startswith("document 4 ") and "'lines' must be a list" in p for p in log.problems)
    assert any(p.startswith("document 5 ") and "[offset, text]" in p for p in log.problems)
