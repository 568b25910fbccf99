"""The recorder's direct path for log lines writes exactly what the generic path writes (so every session reader and
replay reads it unchanged), secrets in log lines are still redacted, and SGLang's regular lines skip the rules."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from specdash.session.reader import read_session
from specdash.session.recorder import Recorder, _cut_line, _log_lines, dump_document, to_plain
from specdash.text.redaction import REDACTED, _may_hold_secret, redact_value

_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")


def reference_dump(doc: dict) -> str:
    """The document format as specified (every value through json.dumps, then YAML-unsafe characters escaped)."""
    def flow(value):
        return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False, default=str))
    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value and all(isinstance(item, (list, dict)) for item in value):
            parts.append(f"{flow(key)}: [\n  " + ",\n  ".join(flow(item) for item in value) + "]\n")
        else:
            parts.append(f"{flow(key)}: {flow(value)}\n")
    body = "".join(parts)
    return f"--- # size {len(body)}\n{body}"


lines_strategy = st.lists(st.tuples(st.integers(min_value=0, max_value=2**40), st.text(max_size=80)), max_size=8)


@settings(max_examples=300, deadline=None)
@given(lines_strategy, st.text(max_size=30))
def test_log_lines_are_written_as_the_generic_path_writes_them(lines, source):
    pairs = [[offset, text] for offset, text in lines]
    assert _log_lines(pairs) == redact_value(to_plain([[o, _cut_line(t)] for o, t in pairs]))
    doc = {"kind": "log", "t": 1.5, "lines": _log_lines(pairs), "source": source}
    assert dump_document(doc) == reference_dump(doc)


def test_a_secret_in_a_log_line_is_redacted_in_the_file(tmp_path):
    path = tmp_path / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record("log", lines=[[0, "HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 python -m sglang.launch_server"],
                                 [80, "[2025-03-01 10:00:00 TP0] KV cache pool is full. Retract requests. "
                                      "#retracted_reqs: 1, #new_token_ratio: 0.9998 -> 1.0000"]], source="/l")
    text = path.read_text()
    assert "hf_abcdefghijklmnopqrstuvwxyz0123" not in text
    (log,) = [e for e in read_session(path).events if e.kind == "log"]
    assert log.lines[0][1] == f"HF_TOKEN={REDACTED} python -m sglang.launch_server"
    assert log.lines[1][1].endswith("#new_token_ratio: 0.9998 -> 1.0000")


def test_sglang_regular_lines_skip_the_redaction_rules():
    for line in ("[2025-03-01 10:00:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1, "
                 "#new_token_ratio: 0.9998 -> 1.0000",
                 "[2025-08-12 16:02:40] Decode batch. #running-req: 1, #token: 180, token usage: 0.00, accept len: "
                 "1.65, cuda graph: True, gen throughput (token/s): 56.41, #queue-req: 0, ",
                 "[2025-08-12 16:02:40] Prefill batch. #new-seq: 1, #new-token: 39, #cached-token: 0, token usage: "
                 "0.00, #running-req: 0, #queue-req: 0, "):
        assert not _may_hold_secret(line), line
    assert _may_hold_secret("token_ratio_secret=abc api_token=xyz")
