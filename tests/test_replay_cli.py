"""`specdash replay --summary FILE` as a user runs it, and the one-line errors of `specdash replay`."""

from __future__ import annotations

import json
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
    # the process group the console names (x/r dialogs, quit line), not called a PID; a PID alone stays a PID
    assert "00:00:02  config      launched (PGID 4242): HF_TOKEN=<redacted> python -m" in out
    assert "00:00:04  config      stopped (PID 4242): " in out
    assert "1,843.2 output tokens/s" in out and "accept length 2.71 (per request)" in out
    assert "result: d5" in out and "speedup x1.62" in out
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


def test_replay_ui_needs_a_terminal_and_a_known_theme():
    result = run_cli(str(STORY))  # stdout is a pipe here
    assert result.returncode == 2
    assert result.stderr == "specdash replay: error: needs a terminal (or use --summary)\n"
    bad = run_cli(str(STORY), "--theme", "dark")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "unknown theme 'dark'" in bad.stderr and "specdash-dark" in bad.stderr and "high-contrast" in bad.stderr


def test_summary_json_is_the_timeline_as_one_object():
    result = run_cli("--summary", "--json", str(STORY))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"schema", "session", "header", "duration_s", "events", "closed", "problems", "timeline"}
    assert data["schema"] == 1 and data["session"] == str(STORY) and data["closed"] is True
    assert data["header"]["host"] == "gpu-box" and data["header"]["sglang_version"] == "0.5.6"
    kinds = [entry["kind"] for entry in data["timeline"]]
    assert kinds == ["connection", "connection", "command", "command", "finding", "command", "command", "finding",
                     "finding", "kill", "bench", "sweep", "marker"]  # the same entries as the text timeline
    crash = data["timeline"][4]
    assert crash["t"] == 3.1 and crash["fields"]["severity"] == "error"  # 00:00:03 in the text timeline
    assert crash["lines"][0].startswith("finding     [error] server crashed: bare AssertionError")
    bench = data["timeline"][10]["fields"]["result"]
    assert bench["output_tokens_per_s"] == 1843.2 and bench["accept_length"] == 2.71
    assert "hf_" not in result.stdout and "sk-live" not in result.stdout


def test_json_without_summary_is_a_usage_error():
    result = run_cli("--json", str(STORY))
    assert result.returncode == 2 and "--json goes with --summary" in result.stderr
