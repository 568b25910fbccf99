"""``specdash replay --summary`` shows each finding as it last stood (as the replayed findings panel does at the
end), and says when it first appeared and what it first said; the recorded first version stays in ``fields``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from support.pilot import wait_until  # noqa: E402

from specdash.app.replay import ReplayApp  # noqa: E402
from specdash.logs.analyzer import LogAnalyzer  # noqa: E402
from specdash.session.finding_versions import last_versions  # noqa: E402
from specdash.session.reader import read_session  # noqa: E402
from specdash.session.recorder import Recorder  # noqa: E402
from specdash.session.summary import summary_json, summary_lines  # noqa: E402

ARGS = ("[2026-01-05 10:00:00] server_args=ServerArgs(model_path='/m', speculative_algorithm='EAGLE3', "
        "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4)")


def decode(second: int, accept: float, running: int = 4) -> str:
    return (f"[2026-01-05 10:00:{second:02d}] Decode batch. #running-req: {running}, #token: {100 + second}, "
            f"token usage: 0.01, accept len: {accept:.2f}, cuda graph: True, gen throughput (token/s): 900.00, "
            "#queue-req: 0, ")


def write_session(path: Path) -> list[str]:
    """A session recorded as the console records one: log batches, and each finding recorded once, when the
    analysis raises it (its first version). Returns the first versions' messages."""
    first = [ARGS, decode(1, 2.9, running=1)]
    later = [decode(s, 2.6 + (s % 3) / 10) for s in range(2, 16)]
    raised = []
    analyzer = LogAnalyzer(on_finding=raised.append)
    with Recorder(path, {"host": "h", "sglang_version": "0.5.6"}, timer=False) as rec:
        analyzer.feed_many(first)
        rec.record("log", t=1.0, lines=[[i * 100, text] for i, text in enumerate(first)], source="/srv/a.log")
        for f in raised:
            rec.record("finding", t=1.1, code=f.kind, severity=f.severity, message=f.message, detail=f.explanation,
                       line=f.line, key=f.key)
        for i, text in enumerate(later):
            rec.record("log", t=2.0 + i, lines=[[1000 + i * 200, text]], source="/srv/a.log")
    return [f.message for f in raised]


def test_the_summary_shows_the_last_version_and_when_it_first_appeared(tmp_path):
    path = tmp_path / "s.yaml"
    firsts = write_session(path)
    assert "1 of 1 decode samples not trusted for trends" in firsts
    log = read_session(path)
    text = "\n".join(summary_lines(log))
    assert "1 of 15 decode samples not trusted for trends (log line 2)" in text
    assert ("(as it stood at 00:00:15, the end of its log; first raised at 00:00:01 as: 1 of 1 decode samples not "
            "trusted for trends)") in text
    assert "finding     [info] 1 of 1 decode samples" not in text
    accept = next(line for line in text.splitlines() if "accept length" in line and "finding" in line)
    assert "not judged" not in accept and "of a possible 4" in accept  # steady state by the end
    entries = [e for e in summary_json(log)["timeline"] if e["kind"] == "finding"]
    untrusted = next(e for e in entries if e["fields"]["code"] == "untrusted_samples")
    assert untrusted["fields"]["message"] == "1 of 1 decode samples not trusted for trends"  # as recorded
    assert untrusted["last"]["message"] == "1 of 15 decode samples not trusted for trends"
    assert untrusted["last"]["t"] == 15.0 and untrusted["lines"][0].endswith(
        "1 of 15 decode samples not trusted for trends (log line 2)")
    out = subprocess.run([sys.executable, "-m", "specdash", "replay", "--summary", "--json", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout)["timeline"] == summary_json(log)["timeline"]


async def test_the_summary_agrees_with_the_replayed_findings_panel_at_the_end(tmp_path):
    path = tmp_path / "s.yaml"
    write_session(path)
    log = read_session(path)
    shown = [e["lines"][0] for e in summary_json(log)["timeline"] if e["kind"] == "finding"]
    app = ReplayApp(log, start_paused=True)
    async with app.run_test(size=(160, 48)) as pilot:
        app.player.seek(app.player.duration_s)
        await wait_until(pilot, lambda: app.log_pane.view.line_count == 16, what="the end")

        def panel_lines() -> set[str]:
            return {f"finding     [{f.severity}] {f.message} (log line {f.line})" for f in app.log_pane.findings}

        await wait_until(pilot, lambda: set(shown) <= panel_lines(), what="the summary's findings in the panel",
                         state=panel_lines)
        panel = panel_lines()
    assert shown and set(shown) <= panel, (shown, panel)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=80), st.sampled_from([ARGS, decode(3, 2.5), decode(4, 9.0)])),
                max_size=12),
       st.lists(st.sampled_from(["untrusted_samples", "acceptance", "crash", "", "x"]), max_size=4))
def test_any_recorded_text_never_raises(tmp_path_factory, lines, codes):
    path = tmp_path_factory.mktemp("s") / "s.yaml"
    with Recorder(path, {"host": "h"}, timer=False) as rec:
        rec.record("log", t=1.0, lines=[[i, t] for i, t in enumerate(lines)], source="/a.log")
        for code in codes:
            rec.record("finding", t=1.5, code=code, severity="info", message="m", detail="", line=1)
        rec.record("log", t=2.0, lines=[[0, "x"]], source="/b.log")
    log = read_session(path)
    versions = last_versions(log)
    assert all(log.events[i].kind == "finding" for i in versions)
    summary_lines(log)
