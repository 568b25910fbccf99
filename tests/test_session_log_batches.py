"""Log lines recorded a batch at a time (session format 2: one joined ``text`` and one ``offsets`` list per log
document): the redaction of a batch is exactly the per-line redaction, a secret in any line of a batch never
reaches the file, format 1 files still read the same, and hostile format 2 documents are skipped with a short
reason, in bounded memory, never with a traceback."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tracemalloc

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.session.events import FORMAT_VERSION, MAX_LOG_BATCH_LINES, LogEvent, event_from_dict
from specdash.session.reader import read_session
from specdash.session.recorder import Recorder
from specdash.text.redaction import REDACTED, redact_lines, redact_text

DECODE = ("[2025-08-12 16:02:{s:02d} TP{tp}] Decode batch, #running-req: {r}, #token: {tok}, token usage: 0.{u:02d}, "
          "accept len: {a}.{b:02d}, accept rate: 0.{u:02d}, cuda graph: True, gen throughput (token/s): {g}.{b:02d}, "
          "#queue-req: {q}")
PREFILL = ("[2025-08-12 16:02:{s:02d} TP{tp}] Prefill batch, #new-seq: {r}, #new-token: {tok}, #cached-token: {q}, "
           "token usage: 0.{u:02d}, #running-req: {r}, #queue-req: {q}")
ACCESS = '[2025-08-12 16:02:{s:02d}] INFO:     127.0.0.1:{tok} - "POST /v1/chat/completions HTTP/1.1" 200 OK'
RETRACT = ("[2025-08-12 16:02:{s:02d} TP{tp}] KV cache pool is full. Retract requests. #retracted_reqs: {r}, "
           "#new_token_ratio: 0.{u:02d}00 -> 1.0000")

small = st.integers(min_value=0, max_value=99)
regular_line = st.builds(
    lambda tmpl, s, tp, r, tok, u, a, b, g, q: tmpl.format(s=s % 60, tp=tp % 8, r=r, tok=tok, u=u, a=a % 9, b=b,
                                                            g=g, q=q),
    st.sampled_from([DECODE, PREFILL, ACCESS, RETRACT]), small, small, small,
    st.integers(min_value=0, max_value=10**6), small, small, small, st.integers(min_value=0, max_value=99999), small)

alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
upper_digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _word(alphabet: str, n: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=n, max_size=n + 10)


#: Secrets of the token shapes the rules know, each with the text that must never reach the file.
secret = st.one_of(
    _word(alnum, 34).map(lambda w: ("hf_" + w, "hf_" + w)),
    _word(alnum, 24).map(lambda w: ("sk-proj-" + w, w)),
    _word(alnum, 36).map(lambda w: ("ghp_" + w, "ghp_" + w)),
    _word(upper_digits, 16).map(lambda w: ("AKIA" + w[:16], "AKIA" + w[:16])),
    _word(alnum, 20).map(lambda w: ("Authorization: Bearer " + w, w)),
    _word(alnum, 12).map(lambda w: ("--api-key " + w, w)),
    _word(alnum, 12).map(lambda w: ("HF_TOKEN=" + w, w)),
    _word(alnum, 12).map(lambda w: ("https://user:" + w + "@example.com/x", w)),
)


@st.composite
def batch_with_secret(draw):
    """A batch of regular SGLang lines with one secret put at the end, the start or the middle of one line (or as
    a line of its own); returns (lines, index of that line, the secret's text)."""
    lines = draw(st.lists(regular_line, min_size=1, max_size=40))
    (shown, hidden) = draw(secret)
    index = draw(st.integers(min_value=0, max_value=len(lines) - 1))
    where = draw(st.sampled_from(["end", "start", "own"]))
    if where == "end":
        lines[index] = f"{lines[index]} {shown}"
    elif where == "start":
        lines[index] = f"{shown} {lines[index]}"
    else:
        lines[index] = shown
    return lines, index, hidden


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(regular_line, st.text(max_size=60), batch_with_secret().map(lambda b: b[0][b[1]])),
                max_size=30))
def test_a_batch_is_redacted_exactly_as_each_of_its_lines(lines):
    assert redact_lines(lines) == [redact_text(line) for line in lines]


@settings(max_examples=200, deadline=None)
@given(batch_with_secret())
def test_a_secret_in_any_line_of_a_batch_is_redacted(case):
    lines, index, hidden = case
    redact_lines(lines)  # the regular shapes are now known clean: the secret's line must be checked all the same
    out = redact_lines(lines)
    assert hidden not in out[index] and REDACTED in out[index]
    assert [line for i, line in enumerate(out) if i != index] == [line for i, line in enumerate(lines) if i != index]


def test_a_secret_appended_to_a_decode_line_is_redacted_in_the_file(tmp_path):
    decode = DECODE.format(s=1, tp=0, r=12, tok=43210, u=11, a=2, b=31, g=1234, q=0)
    path = tmp_path / "s.yaml.gz"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record_log([decode] * 50, list(range(0, 50 * 200, 200)), "/l")  # the decode shape is known clean
        rec.record_log([decode, decode + " api_key=s3cr3tvalue9", decode.replace("#token: 43210", "#token: 1")
                        + " hf_abcdefghijklmnopqrstuvwxyz012345"], [10_000, 10_200, 10_500], "/l")
    raw = gzip.decompress(path.read_bytes()).decode()
    assert "s3cr3tvalue9" not in raw and "hf_abcdefghijklmnopqrstuvwxyz012345" not in raw
    lines = [line for e in read_session(path).events for line in e.lines]
    assert lines[-3:] == [[10_000, decode], [10_200, decode + f" api_key={REDACTED}"],
                          [10_500, decode.replace("#token: 43210", "#token: 1") + f" {REDACTED}"]]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(batch_with_secret(), min_size=1, max_size=4), st.sampled_from(["s.yaml", "s.yaml.gz"]))
def test_no_secret_of_any_batch_reaches_the_file(tmp_path_factory, batches, name):
    path = tmp_path_factory.mktemp("rec") / name
    offset = 0
    sent: list[list] = []
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        for lines, _, _ in batches:
            offsets = list(range(offset, offset + len(lines)))
            offset += len(lines)
            rec.record_log(lines, offsets, "/var/log/server.log")
            sent.extend([o, redact_text(line)] for o, line in zip(offsets, lines, strict=True))
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if name.endswith(".gz") else raw).decode()
    for _, _, hidden in batches:
        assert hidden not in text
    assert [line for e in read_session(path).events for line in e.lines] == sent


def test_format_2_file_holds_joined_batches_and_reads_back_line_by_line(tmp_path):
    path = tmp_path / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record_log(["a", "", "c \x1b[31m", "émoji 🚀", "del\x7f", "nel\x85", "lone \ud83d"], [0, 2, 3, 12, 30, 40, 50],
                       "/l", t=1.0)
        rec.record("log", t=5.0, lines=[[50, "two\nlines"], [60, "x"]], source="/l")  # a text with a line break
        rec.record("log", t=9.0, lines=[[70, "y"], ["not an offset", "z"]], source="/l")
    docs = [json.loads("{" + d.split("\n", 1)[1].rstrip("\n").replace('\n"', ',"') + "}")
            for d in path.read_text().split("--- # size ")[1:]]
    assert docs[0]["format"] == FORMAT_VERSION == 2
    assert docs[1]["text"] == "a\n\nc \x1b[31m\némoji 🚀\ndel\x7f\nnel\x85\nlone \ud83d"
    assert docs[1]["offsets"] == [0, 2, 3, 12, 30, 40, 50]
    assert "text" not in docs[2] and docs[2]["lines"] == [[50, "two\nlines"], [60, "x"]]  # format 1 for this one
    assert docs[3]["lines"] == [[70, "y"], ["not an offset", "z"]]
    events = read_session(path).events
    assert [e.lines for e in events] == [
        [[0, "a"], [2, ""], [3, "c \x1b[31m"], [12, "émoji 🚀"], [30, "del\x7f"], [40, "nel\x85"], [50, "lone \ud83d"]],
        [[50, "two\nlines"], [60, "x"]], [[70, "y"], ["not an offset", "z"]]]


FORMAT_1 = (
    '--- # size 0\n"kind": "header"\n"t": 0.0\n"format": 1\n"specdash_version": "0.4.0"\n"host": "h"\n'
    '--- # size 0\n"kind": "log"\n"t": 1.5\n"lines": [\n  [0, "[2025-08-12 16:02:40 TP0] Decode batch, #token: 180"],\n'
    '  [58, "second"]]\n"source": "/var/log/server.log"\n'
    '--- # size 0\n"kind": "end"\n"t": 2.0\n'
)


def _sized(text: str) -> str:
    """Fill in the ``# size`` of each document (the characters after its separator line)."""
    parts = text.split("--- # size 0\n")[1:]
    return "".join(f"--- # size {len(body)}\n{body}" for body in parts)


def test_a_format_1_file_reads_as_before_and_its_summary_prints(tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text(_sized(FORMAT_1))
    log = read_session(path)
    assert log.header is not None and log.header.format == 1 and log.closed and not log.problems
    assert [e.lines for e in log.events] == [[[0, "[2025-08-12 16:02:40 TP0] Decode batch, #token: 180"],
                                              [58, "second"]]]
    new = tmp_path / "new.yaml.gz"
    with Recorder(new, {"host": "h"}, timer=False) as rec:
        rec.record_log(["[2025-08-12 16:02:40 TP0] Decode batch, #token: 180", "second"], [0, 58],
                       "/var/log/server.log", t=1.5)
    assert [e.lines for e in read_session(new).events] == [e.lines for e in log.events]
    outs = [subprocess.run([sys.executable, "-m", "specdash", "replay", "--summary", str(p)], capture_output=True,
                           text=True, timeout=120) for p in (path, new)]
    assert [out.returncode for out in outs] == [0, 0] and not outs[0].stderr and not outs[1].stderr
    # the same story from both formats (the lines naming the file and the recording specdash aside)
    assert outs[0].stdout.splitlines()[2:] == outs[1].stdout.splitlines()[2:]
    assert "duration 00:00:01, 1 events" in outs[1].stdout


@pytest.mark.parametrize(("fields", "reason"), [
    ({"text": "a\nb", "offsets": [0]}, "1 offsets for 2 lines"),
    ({"text": "a", "offsets": [0, 1, 2]}, "3 offsets for 1 lines"),
    ({"text": "a", "offsets": []}, "0 offsets for 1 lines"),
    ({"text": ["a"], "offsets": [0]}, "'text' must be a str"),
    ({"text": "a", "offsets": 0}, "'offsets' a list"),
    ({"text": "a", "offsets": [True]}, "must be an int"),
    ({"text": "a\nb", "offsets": [0, "1"]}, "must be an int"),
    ({"text": "a", "offsets": [[0]]}, "must be an int"),
    ({"text": "a"}, "'offsets' a list"),
    ({"offsets": [0]}, "'text' must be a str"),
    ({"text": "a", "offsets": [0], "lines": [[0, "a"]]}, "both"),
])
def test_a_bad_format_2_log_document_is_refused_with_its_reason(fields, reason):
    with pytest.raises(ValueError, match=reason.replace("(", r"\(")):
        event_from_dict({"kind": "log", "t": 1.0, **fields})


def test_a_log_document_cannot_make_more_lines_than_the_limit():
    with pytest.raises(ValueError, match="limit"):
        event_from_dict({"kind": "log", "t": 1.0, "text": "\n" * MAX_LOG_BATCH_LINES,
                         "offsets": [0] * (MAX_LOG_BATCH_LINES + 1)})
    event = event_from_dict({"kind": "log", "t": 1.0, "text": "a\nb", "offsets": [0, 2], "source": "/l"})
    assert isinstance(event, LogEvent) and event.lines == [[0, "a"], [2, "b"]] and event.source == "/l"


def _hostile_file(path, log_doc: str) -> None:
    header = '"kind": "header"\n"t": 0.0\n"format": 2\n"host": "h"\n'
    marker = '"kind": "marker"\n"t": 3.0\n"text": "after"\n'
    path.write_text("".join(f"--- # size {len(b)}\n{b}" for b in (header, log_doc, marker)))


def _peak_bytes(path) -> tuple[int, object]:
    tracemalloc.start()
    try:
        log = read_session(path)
        return tracemalloc.get_traced_memory()[1], log
    finally:
        tracemalloc.stop()


def test_a_flood_of_line_breaks_with_few_offsets_is_skipped_in_bounded_memory(tmp_path):
    flood = "ab\\n" * 2_000_000  # 2 000 001 lines in JSON: 8 MB
    _hostile_file(tmp_path / "flood.yaml", f'"kind": "log"\n"t": 1.0\n"text": "{flood}"\n"offsets": [0, 1]\n')
    _hostile_file(tmp_path / "same_size.yaml", f'"kind": "marker"\n"t": 1.0\n"text": "{flood}"\n')
    peak, log = _peak_bytes(tmp_path / "flood.yaml")
    baseline, _ = _peak_bytes(tmp_path / "same_size.yaml")  # reading any document of that size
    assert [e.kind for e in log.events] == ["marker"]
    assert any("document 2" in p and "2 offsets for 2000001 lines" in p for p in log.problems), log.problems
    assert peak < baseline + 16 * 2**20  # splitting the text would make 2 million strings: over 100 MB more


offsets_value = st.recursive(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5)),
                             lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner,
                                                                                       max_size=3), max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(offsets_value, st.text(max_size=40)), offsets=st.one_of(offsets_value,
       st.lists(st.integers(min_value=-10, max_value=10**12), max_size=6)), extra=st.dictionaries(
       st.sampled_from(["lines", "source", "x"]), offsets_value, max_size=2))
def test_junk_in_a_format_2_log_document_never_raises_past_the_reader(tmp_path_factory, text, offsets, extra):
    path = tmp_path_factory.mktemp("junk") / "s.yaml"
    doc = {"kind": "log", "t": 1.0, "text": text, "offsets": offsets, **extra}
    _hostile_file(path, "".join(f"{json.dumps(k)}: {json.dumps(v)}\n" for k, v in doc.items()))
    log = read_session(path)  # never raises: a bad document is one problem line
    assert log.events[-1].kind == "marker"
    logs = [e for e in log.events if e.kind == "log"]
    if logs:
        assert all(isinstance(line, list) and len(line) == 2 and isinstance(line[1], str) for line in logs[0].lines)
    else:
        assert any(p.startswith("document 2 ") for p in log.problems)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)),
                        max_size=20), min_size=1, max_size=8))
def test_any_yaml_reader_reads_a_format_2_batch_as_specdash_does(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("yaml") / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record_log(lines, list(range(len(lines))), "/l", t=1.0)
    (doc,) = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d["kind"] == "log"]
    (event,) = read_session(path).events
    assert doc["text"].split("\n") == [text for _, text in event.lines] == [redact_text(x) for x in lines]
