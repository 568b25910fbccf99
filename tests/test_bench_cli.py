"""``specdash bench`` as a user runs it: a real process against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import socket
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bench_server import BenchServerProcess  # noqa: E402

from specdash.cli import main  # noqa: E402

CONFIG = {"ttft_s": 0.02, "chunk_delay_s": 0.02, "tokens_per_chunk": 2}


def bench(*args: str, state: Path) -> subprocess.CompletedProcess:
    """``specdash bench ARGS`` in a real process (what a user runs)."""
    env = {**os.environ, "SPECDASH_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "specdash", "bench", *args], capture_output=True, text=True,
                          timeout=60, env=env, stdin=subprocess.DEVNULL)


def bench_in_process(*args: str, state: Path, capsys, monkeypatch) -> subprocess.CompletedProcess:
    """The same through ``specdash.cli.main`` in this process (faster; same parser, same output)."""
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(state))
    code = main(["bench", *args])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, out.out, out.err)


@pytest.fixture(scope="module")
def server():
    with BenchServerProcess(CONFIG) as srv:
        yield srv


def test_json_output_has_the_documented_shape_and_the_result_is_stored(server, tmp_path, capsys, monkeypatch):
    out = bench_in_process("--url", server.url, "--workload", "batch1-latency", "-n", "3", "-c", "1", "--api", "generate",
                "--output-len", "9", "--json", state=tmp_path, capsys=capsys, monkeypatch=monkeypatch)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert set(data) == {"output_tokens_per_s", "requests_per_s", "ttft_ms", "itl_ms", "tpot_ms", "accept_length",
                         "accept_length_source", "errors", "requests"}
    assert set(data["ttft_ms"]) == set(data["itl_ms"]) == set(data["tpot_ms"]) == {"p50", "p90", "p99"}
    assert data["errors"] == 0 and len(data["requests"]) == 3
    assert data["accept_length"] == pytest.approx(9 / 4) and data["accept_length_source"] == "meta_info"
    pooled = []
    for req in data["requests"]:  # 9 tokens: 1, then chunks of 2 -> 8 ITL samples, each chunk's gap over its 2
        cum = req["chunk_cumulative_tokens"]
        assert cum == [1, 3, 5, 7, 9]
        offsets = req["chunk_offsets_ms"]
        assert req["itl_ms"] == pytest.approx([(offsets[j] - offsets[j - 1]) / 2 for j in range(1, 5) for _ in (0, 1)])
        pooled.extend(req["itl_ms"])
    assert data["itl_ms"]["p50"] == pytest.approx(statistics.median(pooled), rel=1e-9)
    saved = list((tmp_path / "bench").glob("run-*-batch1-latency.json"))
    assert len(saved) == 1 and f"saved {saved[0]}" in out.stderr
    stored = json.loads(saved[0].read_text())
    assert stored["settings"]["seed"] == 1 and stored["workload"]["prompts"]
    assert stored["requests"][0]["chunk_offsets_ms"]


def test_human_summary_from_a_prompt_file(server, tmp_path, capsys, monkeypatch):
    prompts = tmp_path / "p.txt"
    prompts.write_text("one\ntwo\n")
    # an OpenAI base URL (…/v1) works too; -c 0 = unlimited concurrency
    out = bench_in_process("--url", server.url + "/v1", "--workload", str(prompts), "-n", "2", "-c", "0", "--output-len", "5",
                           "--no-save", state=tmp_path, capsys=capsys, monkeypatch=monkeypatch)
    assert out.returncode == 0, out.stderr
    assert "output tokens/s" in out.stdout and "TTFT ms" in out.stdout and "2 ok, 0 failed" in out.stdout
    assert "concurrency unlimited" in out.stdout
    # chat API on a server without /metrics that already served requests: no per-run accept length, said why
    assert "accept length   -  [server's avg_spec_accept_length" in out.stdout
    assert not (tmp_path / "bench").exists()


def test_dead_server_is_one_line_and_exit_1(tmp_path):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    out = bench("--url", url, "-n", "1", state=tmp_path)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"specdash bench: cannot connect to {url}")
    assert out.stdout == ""


def test_unknown_workload_is_a_usage_error(tmp_path, capsys, monkeypatch):
    out = bench_in_process("--url", "http://127.0.0.1:9", "--workload", "nope", state=tmp_path, capsys=capsys,
                           monkeypatch=monkeypatch)
    assert out.returncode == 2 and "presets:" in out.stderr and len(out.stderr.strip().splitlines()) == 1
