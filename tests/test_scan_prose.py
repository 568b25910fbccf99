"""``specdash scan`` of prose (an issue body without log lines): it says there are no SGLang log lines instead of
reporting findings read from sentences; a log line in the same text is still read."""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from specdash.cli import main

PROSE = """When I enable EAGLE3 speculative decoding the throughput drops a lot compared to no speculation.
I tried num steps 3 and 5, the accept length is about 1.2 which seems low. Memory usage is fine,
the server starts after cuda graph capture and then requests time out after 600 seconds.
Is this a known issue? The error says out of memory sometimes. Any help appreciated, thanks!
"""


def scan(text: str, *extra: str) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "issue.txt"
        path.write_text(text, encoding="utf-8")
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = main(["scan", *extra, str(path)])
    return rc, out.getvalue()


def test_prose_is_not_read_as_a_log():
    rc, out = scan(PROSE)
    assert rc == 0
    assert out == ("4 lines; no SGLang log lines in it (no timestamped server lines, tracebacks, decode/prefill or "
                   "start-up lines): prose or other text is not read as a log, so there is nothing to report\n")
    rc, out = scan(PROSE, "--json")
    doc = json.loads(out)
    assert doc["no_log_lines"] is True and doc["findings"] == [] and doc["crashed"] is False


def test_a_log_line_in_the_same_text_is_still_read():
    oom = "[2025-10-22 10:00:01] Scheduler hit an exception: torch.OutOfMemoryError: CUDA out of memory.\n"
    rc, out = scan(PROSE + oom)
    assert "no SGLang log lines" not in out
    assert "[E] line 5 2025-10-22 10:00:01: crash in the scheduler" in out
    assert "line 4:" not in out  # the sentence that mentions memory is still no finding


def test_a_message_line_pasted_without_its_prefix_still_counts():
    line = "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1\n"
    rc, out = scan(line)
    assert "no SGLang log lines" not in out and "line 1" in out


WORDS = st.sampled_from(["the", "server", "crashed", "out", "of", "memory", "error", "CUDA", "NCCL", "timeout",
                         "hangs", "killed", "OOM", "failed", "speculative", "decoding", "accept", "length", "is",
                         "low", "I", "tried", "EAGLE3", "graph", "capture", "stuck", "ready", "fired", "up",
                         "illegal", "access", "Segmentation", "fault", "core", "dumped", "3", "0.5"])
SENTENCE = st.lists(WORDS, min_size=3, max_size=16).map(lambda ws: " ".join(ws) + ".")


@settings(max_examples=60, deadline=None)
@given(st.lists(SENTENCE, min_size=1, max_size=6))
def test_sentences_give_no_findings_and_no_traceback(sentences):
    rc, out = scan("\n".join(sentences) + "\n", "--json")
    doc = json.loads(out)
    assert doc["findings"] == [] and rc == 0
