"""`specdash replay --summary FILE` as a user runs it, and the one-line errors of `specdash replay`."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

STORY = Path(__file__).parent / "data" / "session" / "story.yaml"


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specdash", "replay", *args], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})


def test_summary_prints_timeline_of_findings_configs_and_results():
    result = run_cli("--summary", str(STORY))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "DEMONSTRATION" in out and "gpu-box" in out and "SGLang 0.5.6" in out
    timeline = out[out.index("timeline:"):].splitlines()[1:]
    firsts = [line for line in timeline if line.startswith("  00:")]
    kinds = [line.split()[1] for line in firsts]
    assert kinds == ["connection", "connection", "config", "config", "finding", "config", "config", "finding",
                     "finding", "kill", "bench", "sweep", "marker"]
    assert "00:00:03  finding     [error] server crashed: bare AssertionError" in out
    assert "num_draft_tokens=2" in out and "16 -> 2" in out
    assert "1,843.2 output tokens/s" in out and "accept length 2.71 (meta_info)" in out
    assert "recommendation: d5" in out and "speedup x1.62" in out
    assert "71200 -> 0 MiB" in out
    assert "hf_" not in out and "sk-live" not in out  # the file holds no secrets to print


def test_summary_of_damaged_file_says_what_was_skipped(tmp_path):
    text = STORY.read_text()
    damaged = tmp_path / "damaged.yaml"
    damaged.write_text(text[: len(text) - 30])
    result = run_cli("--summary", str(damaged))
    assert result.returncode == 0
    assert "problems (2):" in result.stdout
    assert "truncated" in result.stdout and "did not close" in result.stdout
    assert "[error] server crashed" in result.stdout


@pytest.mark.parametrize("args, code, text", [
    (["--summary", "/no/such/file.yaml"], 2, "no such file"),
    (["--summary", "--speed", "0", str(STORY)], 2, "--speed must be greater than 0"),
])
def test_usage_errors_are_one_line_exit_2(args, code, text):
    result = run_cli(*args)
    assert result.returncode == code
    assert result.stderr.count("\n") == 1 and text in result.stderr and "Traceback" not in result.stderr


def test_not_a_session_is_one_line_exit_1(tmp_path):
    bad = tmp_path / "notes.txt"
    bad.write_text("just some notes\nnothing else\n")
    result = run_cli("--summary", str(bad))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "not a specdash session" in result.stderr


def _replay_ui_wired() -> bool:
    if importlib.util.find_spec("specdash.app.main") is None:
        return False
    from specdash.app import main

    return hasattr(main, "run_replay")


@pytest.mark.skipif(_replay_ui_wired(), reason="run_replay exists: the UI path is tested with the app")
def test_replay_without_ui_wiring_says_so():
    result = run_cli(str(STORY))
    assert result.returncode == 1
    assert "replay UI is not wired" in result.stderr and result.stderr.count("\n") == 1
