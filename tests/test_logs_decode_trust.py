"""Decode statistics: a verdict only from steady-state samples, and every count in the text agrees with the JSON."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.commands.scan import render_text
from specdash.logs import metrics as metrics_module
from specdash.logs.analyzer import LogAnalyzer

ARGS = ("[2026-03-02 10:00:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', "
        "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4, decode_log_interval=40)")
READY = "[2026-03-02 10:00:01] The server is fired up and ready to roll!"


def decode(t: int, accept: float = 3.2, gen: float = 300.0) -> str:
    return (f"[2026-03-02 10:{t // 60:02d}:{t % 60:02d} TP0] Decode batch. #running-req: 1, #token: 900, token usage: "
            f"0.01, accept len: {accept:.2f}, cuda graph: True, gen throughput (token/s): {gen:.2f}, #queue-req: 0, ")


def prefill(t: int, tokens: int) -> str:
    return (f"[2026-03-02 10:{t // 60:02d}:{t % 60:02d} TP0] Prefill batch. #new-seq: 1, #new-token: {tokens}, "
            "#cached-token: 0, token usage: 0.01, #running-req: 0, #queue-req: 0, ")


def summary_of(lines: list[str]) -> dict:
    analyzer = LogAnalyzer()
    analyzer.feed_many(lines)
    analyzer.end_of_input()
    return analyzer.summary()


def test_no_verdict_from_samples_the_report_excludes():
    # every window is prefill-dominated: 5000 new tokens before each 40-step decode window
    lines = [ARGS, READY]
    for i in range(4):
        lines += [prefill(10 + 10 * i, 5000), decode(11 + 10 * i)]
    summary = summary_of(lines)
    text = render_text(summary)
    assert "4 of 4 decode samples not trusted for trends" in text
    assert "No sample is steady state, so the means are over all of them and no trend or verdict is drawn" in text
    assert "accept length 3.20 (mean of 4 samples, none steady-state): not judged" in text
    assert "acceptance good" not in text and "acceptance modest" not in text and "steady-state," not in text
    assert "samples 4 (trusted 0), mean of all (none trusted)" in text
    assert summary["metrics"]["accept_len"]["mean_of"] == "all"


def test_counts_are_over_the_kept_samples_when_the_log_has_more(monkeypatch):
    monkeypatch.setattr(metrics_module, "MAX_SAMPLES", 20)
    lines = [ARGS, READY] + [decode(5 + i) for i in range(50)]
    summary = summary_of(lines)
    text = render_text(summary)
    m = summary["metrics"]["accept_len"]
    assert m["samples"] == 20 and m["trusted_samples"] == 20  # the idle first sample has left the window
    assert "0 of 20 decode samples (the last 20 of 50) not trusted for trends" in text
    acceptance = next(f for f in summary["findings"] if f["kind"] == "acceptance")
    assert "(steady-state, 20 samples)" in acceptance["message"]


_EVENT = st.one_of(st.tuples(st.just("decode"), st.integers(1, 90), st.floats(1.0, 4.0), st.floats(5.0, 400.0)),
                   st.tuples(st.just("prefill"), st.integers(1, 5), st.integers(1, 20_000), st.just(0.0)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_EVENT, min_size=1, max_size=25))
def test_fuzz_verdicts_only_from_trusted_samples_and_counts_agree(events):
    lines, t = [ARGS, READY], 5
    for kind, gap, a, b in events:
        t = min(t + gap, 3599)
        lines.append(decode(t, a, b) if kind == "decode" else prefill(t, int(a)))
    summary = summary_of(lines)
    text = render_text(summary)
    m = summary["metrics"].get("accept_len")
    for f in summary["findings"]:
        assert f["message"] in text
        if f["kind"] in ("acceptance", "low_acceptance") and not (m and m["trusted_samples"]):
            assert f["message"].endswith("not judged")
        if "steady-state" in f["message"] and "none steady-state" not in f["message"]:
            assert m and f"(steady-state, {m['trusted_samples']} samples)" in f["message"]
    untrusted = next((f for f in summary["findings"] if f["kind"] == "untrusted_samples"), None)
    if untrusted is not None and m is not None:
        excluded, total = (int(n) for n in re.match(r"(\d+) of (\d+) decode samples", untrusted["message"]).groups())
        assert total == m["samples"] and excluded == m["samples"] - m["trusted_samples"]
