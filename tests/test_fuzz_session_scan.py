"""Fuzz: the session reader, `replay --summary`'s text and `specdash scan` over random bytes and over damaged
copies of real session files: one clear error (SessionError / exit status) or a result, never a traceback.
(benchmarks/fuzz_session_scan.py runs the same with many more examples and prints the counts.)"""

from __future__ import annotations

import contextlib
import gzip
import io

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.cli import main as cli_main
from specdash.session.reader import SessionError, read_session
from specdash.session.recorder import Recorder
from specdash.session.summary import summary_lines

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def _session_bytes(tmp_dir, gz: bool) -> bytes:
    path = tmp_dir / ("seed.yaml.gz" if gz else "seed.yaml")
    if not path.exists():
        with Recorder(path, {"host": "h", "note": "seed"}, timer=False) as rec:
            for i in range(30):
                rec.record("log", t=i, lines=[[i * 80, f"[2026-11-30 09:12:{i:02d} TP0] Decode batch, #running-req: 1, "
                                                         f"#token: {i}, accept len: 2.{i}"]], source="/l")
                rec.record("marker", t=i + 0.5, level="warning", text=f"m{i}")
                rec.flush()
    return path.read_bytes()


def _read_and_summarise(path) -> None:
    try:
        log = read_session(path)
    except SessionError as exc:
        assert "\n" not in str(exc)
        return
    lines = summary_lines(log)
    assert all("\x1b" not in line for line in lines)


def _scan(path) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_main(["scan", str(path)])
    assert status in (0, 1, 2)
    assert "Traceback" not in err.getvalue()


@FUZZ
@given(data=st.binary(max_size=4000), gz_magic=st.booleans())
def test_random_bytes(tmp_path_factory, data, gz_magic):
    path = tmp_path_factory.mktemp("fuzz") / "f.yaml"
    path.write_bytes((b"\x1f\x8b" if gz_magic else b"") + data)
    _read_and_summarise(path)
    _scan(path)


@FUZZ
@given(gz=st.booleans(), edits=st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=1, max_size=40)),
                                       min_size=1, max_size=6), cut=st.floats(0.05, 1))
def test_damaged_real_sessions(tmp_path_factory, gz, edits, cut):
    tmp = tmp_path_factory.mktemp("fuzz")
    data = bytearray(_session_bytes(tmp, gz))
    for where, junk in edits:
        at = int(where * (len(data) - 1))
        data[at:at + len(junk)] = junk
    path = tmp / ("f.yaml.gz" if gz else "f.yaml")
    path.write_bytes(bytes(data[: max(1, int(len(data) * cut))]))
    _read_and_summarise(path)
    _scan(path)


@FUZZ
@given(text=st.text(max_size=3000))
def test_random_yaml_text(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("fuzz") / "f.yaml"
    path.write_text("--- \nkind: header\nt: 0\n---\n" + text, errors="surrogatepass")
    _read_and_summarise(path)
    gz = path.with_suffix(".yaml.gz")
    gz.write_bytes(gzip.compress(path.read_bytes()))
    _read_and_summarise(gz)
    _scan(gz)
