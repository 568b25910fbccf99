"""Hostile and broken session files: alias bombs, decompression bombs, too many documents, a damaged gzip block,
non-finite numbers — each read in bounded memory with a clear, bounded message, never a crash; `replay --summary`
prints no terminal escapes."""

from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

from specdash.session import reader
from specdash.session.reader import MAX_MESSAGE_CHARS, SessionError, read_session
from specdash.session.recorder import Recorder

HEADER = "--- \nkind: header\nt: 0\nhost: h\n"
END = "---\nkind: end\nt: 99\n"


def _marker(t, text="m"):
    return f"---\nkind: marker\nt: {t}\nlevel: warning\ntext: {text}\n"


def _summary(path):
    return subprocess.run([sys.executable, "-m", "specdash", "replay", "--summary", str(path)],
                          capture_output=True, text=True, timeout=120)


ALIAS_BOMB = (
    "---\nkind: marker\nt: 1\nlevel: warning\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n"
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n"
    "h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n"
    "text: *i\n"
)


def test_alias_bomb_is_a_skipped_document_with_a_short_message(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(HEADER + _marker(0.5) + ALIAS_BOMB + _marker(2) + END)
    log = read_session(path)
    assert [e.t for e in log.events] == [0.5, 2]
    (problem,) = [p for p in log.problems if "alias" in p]
    assert "more than 16 YAML aliases" in problem and "document 3" in problem
    out = _summary(path)
    assert out.returncode == 0 and len(out.stdout) < 2000 and "lol" not in out.stdout


def test_a_few_aliases_are_still_read(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text(HEADER + "---\nkind: marker\nt: 1\nlevel: &l warning\ntext: *l\n" + END)
    assert read_session(path).events[0].text == "warning"


def test_decompression_bomb_is_cut_at_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_SESSION_BYTES", 1 << 20)
    path = tmp_path / "bomb.yaml.gz"
    body = HEADER + "".join(_marker(i) for i in range(1, 50)) + "#" * (20 << 20) + "\n" + _marker(60)
    path.write_bytes(gzip.compress(body.encode(), 1))
    log = read_session(path)
    assert len(log.events) == 48  # the 49th document runs on into the "#" lines: it is cut by the limit
    assert any("more than 1 MiB once decompressed (the limit)" in p for p in log.problems)


def test_plain_file_over_the_limit_is_cut(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_SESSION_BYTES", 4096)
    path = tmp_path / "big.yaml"
    path.write_text(HEADER + "".join(_marker(i) for i in range(1, 2000)))
    log = read_session(path)
    assert 10 < len(log.events) < 200
    assert "file larger than the 4096 bytes limit: only the first 4096 bytes are read" in log.problems


def test_document_count_is_capped(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_DOCUMENTS", 100)
    path = tmp_path / "many.yaml"
    path.write_text(HEADER + "".join(_marker(i) for i in range(1, 300)) + END)
    log = read_session(path)
    assert len(log.events) == 99
    assert any("more than 100 documents (the limit)" in p for p in log.problems)


@pytest.mark.parametrize("bad", ["t: 1e309", "t: -.inf", "t: .nan", "t: 1e300", "t: 123456789012345678901234567890"])
def test_non_finite_or_huge_numbers_are_a_bad_document(tmp_path, bad):
    path = tmp_path / "num.yaml"
    path.write_text(HEADER + _marker(1) + f"---\nkind: marker\n{bad}\nlevel: warning\ntext: x\n" + _marker(3) + END)
    log = read_session(path)
    assert [e.t for e in log.events] == [1, 3]
    assert any("document 3" in p and "skipped" in p for p in log.problems)
    out = _summary(path)
    assert out.returncode == 0 and "Traceback" not in out.stderr


def test_non_finite_number_in_the_recorders_json_form(tmp_path):
    path = tmp_path / "num.yaml"
    path.write_text(HEADER + '--- # size 40\n"kind": "marker"\n"t": 1e309\n"text": "x"\n' + _marker(3) + END)
    assert [e.t for e in read_session(path).events] == [3]


def _damaged_gzip_session(path, shift: int) -> None:
    """400 markers, flushed every 4, then 40 bytes flipped ``shift`` bytes past the middle of the file (the header's
    start time is fixed, so the compressed bytes and the damage are the same on every run)."""
    with Recorder(path, {"host": "h", "started_at": "2026-01-01T00:00:00+00:00"}, timer=False) as rec:
        for i in range(400):
            rec.record("marker", t=float(i), level="warning", text=f"marker {i} " + "x" * (i % 50))
            if i % 4 == 3:
                rec.flush()
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 + shift
    for k in range(40):
        data[middle + k] ^= 0xFF
    path.write_bytes(bytes(data))


def test_damaged_gzip_says_what_was_lost_and_never_calls_it_a_cut_recording(tmp_path):
    """Damage either breaks the deflate data (reading resumes at the next flush point: only that block is lost) or
    inflates into wrong bytes that only the trailer's checksum catches (what follows the damage may be wrong, and
    is said to be). Both kinds occur among these offsets; neither is called a recording cut while writing, and
    "the rest of the file is skipped" is never said of a file whose last event was read."""
    kinds = set()
    for shift in range(0, 600, 20):
        path = tmp_path / f"s{shift}.yaml.gz"
        _damaged_gzip_session(path, shift)
        log = read_session(path)
        times = [e.t for e in log.events]
        assert times[0] == 0 and len(times) > 200, shift  # everything before the damage
        assert not any("cut while writing" in p for p in log.problems), (shift, log.problems)
        if times[-1] == 399:
            assert not any("the rest of the file is skipped" in p for p in log.problems), (shift, log.problems)
        assert all(len(p) <= MAX_MESSAGE_CHARS + 40 for p in log.problems)
        if any("gzip data damaged" in p and "reading resumed" in p for p in log.problems):
            kinds.add("resumed")
            assert times[-1] == 399 and 300 < len(times) < 400, shift  # only the damaged block is lost
        elif any(p.startswith("gzip checksum does not match") and "what follows the damage may be wrong" in p
                 for p in log.problems):
            kinds.add("checksum")
        else:
            raise AssertionError((shift, log.problems))
    assert kinds == {"resumed", "checksum"}


def test_cut_gzip_keeps_what_was_flushed(tmp_path):
    path = tmp_path / "s.yaml.gz"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        for i in range(100):
            rec.record("marker", t=float(i), level="warning", text=f"m{i}")
            rec.flush()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 2 // 3])
    log = read_session(path)
    assert 50 < len(log.events) < 100


def test_error_messages_are_bounded_and_clean(tmp_path):
    path = tmp_path / "junk.yaml"
    path.write_text("---\n" + "kind: [" + "\x1b]0;pwned\x07" + "y" * 100_000 + "\n")
    with pytest.raises(SessionError) as info:
        read_session(path)
    assert len(str(info.value)) < MAX_MESSAGE_CHARS + len(str(path)) + 40
    assert "\x1b" not in str(info.value)


def test_summary_prints_no_terminal_escapes(tmp_path):
    path = tmp_path / "esc.yaml"
    evil = "\\e]0;owned\\a\\e[2J\\u009b31m\\u202eevil"
    path.write_text(HEADER.replace("host: h", f'host: "h{evil}"') + "---\nkind: marker\nt: 1\nlevel: error\n"
                    f'text: "boom{evil}"\n' + "---\nkind: command\nt: 2\naction: launched\n"
                    f'command: "python3 -m sglang.launch_server{evil}"\n' + END)
    out = _summary(path)
    assert out.returncode == 0, out.stderr
    assert "boom" in out.stdout and "evil" in out.stdout
    for bad in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert bad not in out.stdout


def test_yaml_parsing_has_a_budget(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_YAML_CHARS", 2000)
    path = tmp_path / "hand.yaml"
    path.write_text(HEADER + "".join(_marker(i) for i in range(1, 200)) + END)
    log = read_session(path)
    assert 20 < len(log.events) < 100
    assert any("not in the recorder's format skipped" in p and "limit for YAML parsing" in p for p in log.problems)


def test_huge_document_is_skipped_unparsed(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_NODES", 1000)
    path = tmp_path / "huge.yaml"
    lines = ",\n".join(f'  [{i}, "line {i}"]' for i in range(100_000))
    path.write_text(HEADER + _marker(1) + f'--- \n"kind": "log"\n"t": 2\n"lines": [\n{lines}]\n' + _marker(3) + END)
    log = read_session(path)
    assert [e.t for e in log.events] == [1, 3]
    assert any("more than 1,000 values (limit): skipped unparsed" in p for p in log.problems)
