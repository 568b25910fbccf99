"""specdash's own saved result files (``<state>/bench/run-YYYYMMDD-HHMMSS-WORKLOAD.json``, the path the console
prints after a benchmark) by path: ``bench compare A B`` and ``bench import PATH`` (no duplicate when the store
already holds it); ``bench list`` states the request rate and the GPU a specdash run knows."""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.bench.gpu_name import run_gpu_name
from specdash.bench.results import RunResult
from specdash.bench.store import read_result_file, save_run
from specdash.cli import main
from specdash.gpu.model import GpuInfo

DATA = Path(__file__).parent / "data" / "bench"
H100 = "NVIDIA H100 80GB HBM3"


def specdash(*args: str, state: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "SPECDASH_STATE_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "specdash", *args], capture_output=True, text=True, timeout=60,
                          env=env, stdin=subprocess.DEVNULL)


def runs() -> list[dict]:
    data = json.loads((DATA / "sweep_result.json").read_text())
    return [run for point in data["points"] for run in point["runs"]]


@pytest.fixture
def other_machine(tmp_path) -> tuple[Path, Path]:
    """Two runs saved by specdash in another state folder (another try, another machine), as the console saves."""
    folder = tmp_path / "other-state" / "bench"
    a, b = runs()[-2:]
    first = save_run(RunResult.from_dict(a), folder, now=dt.datetime(2026, 12, 1, 21, 1, 58))
    second = save_run(RunResult.from_dict(b), folder, now=dt.datetime(2026, 12, 1, 21, 5, 40))
    return first, second


def test_compare_two_saved_run_files_by_path(tmp_path, other_machine):
    a, b = other_machine
    result = specdash("bench", "compare", str(a), str(b), state=tmp_path / "state")
    # before: "specdash bench: error: A is neither a benchmark result, a stored id nor a launch command"
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"A: {a}\nB: {b}\n")
    assert "output_tokens_per_s          226.80       227.99" in result.stdout


def test_import_a_saved_run_file_stores_it_once(tmp_path, other_machine):
    a, _ = other_machine
    state = tmp_path / "state"
    first = specdash("bench", "import", str(a), state=state)
    # before: "no benchmark output found (looked for SGLang bench_serving ...)", exit 1
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == f"{a}: a benchmark result saved by specdash"
    assert "output tokens/s 226.8" in lines
    assert lines[-1] == "stored as run-20261201-210158-batch1-latency (see 'specdash bench list')"
    again = specdash("bench", "import", str(a), state=state)
    assert again.returncode == 0
    assert again.stdout.splitlines()[-1] == ("already stored as run-20261201-210158-batch1-latency (see 'specdash "
                                             "bench list'): not stored again")
    stored = state / "bench" / "run-20261201-210158-batch1-latency.json"
    renamed = tmp_path / "from-colleague.json"
    renamed.write_bytes(a.read_bytes())
    for path in (stored, renamed):  # the store's own file, or the same result under another name
        assert "already stored as run-20261201-210158-batch1-latency" in specdash("bench", "import", str(path),
                                                                                  state=state).stdout
    assert sorted(p.name for p in (state / "bench").iterdir()) == ["run-20261201-210158-batch1-latency.json"]
    listed = specdash("bench", "list", state=state).stdout
    assert listed.count("run-20261201-210158-batch1-latency") == 1
    # the same name holding another run (two machines' clocks): kept beside it, not over it
    other = tmp_path / "elsewhere" / "run-20261201-210158-batch1-latency.json"
    other.parent.mkdir()
    other.write_bytes(other_machine[1].read_bytes())
    assert specdash("bench", "import", str(other), state=state).stdout.splitlines()[-1] == \
        "stored as run-20261201-210158-batch1-latency-2 (see 'specdash bench list')"
    data = json.loads(specdash("bench", "import", "--json", str(other), state=state).stdout)
    assert data["already_stored"] == "run-20261201-210158-batch1-latency-2" and data["saved"] == []
    assert data["result"]["output_tokens_per_s"] == pytest.approx(227.99, abs=0.01)


def test_a_damaged_run_file_is_one_line(tmp_path, other_machine):
    a, b = other_machine
    data = json.loads(a.read_text())
    data["output_tokens_per_s"] = "fast"
    a.write_text(json.dumps(data))
    for args in (("bench", "import", str(a)), ("bench", "compare", str(a), str(b))):
        result = specdash(*args, state=tmp_path / "state")
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert result.stderr == (f"specdash bench: error: {a} looks like a specdash benchmark result but cannot be "
                                 "read (TypeError)\n")


def test_list_states_the_request_rate_and_gpu_a_specdash_run_knows(tmp_path):
    state = tmp_path / "state"
    with_gpu, without = (RunResult.from_dict(r) for r in runs()[-2:])
    assert with_gpu.settings["request_rate"] is None  # the runner sent every request at once
    without.effective_config.pop("gpu_name")
    without.settings["concurrency"] = 4  # another group
    save_run(with_gpu, state / "bench")
    save_run(without, state / "bench")
    groups = [line for line in specdash("bench", "list", state=state).stdout.splitlines()
              if line.startswith("group: ")]
    # before: "not stated: request rate, GPU" for a run specdash measured
    assert ("group: model default, workload batch1-latency, api generate, concurrency 1, request rate inf (all at "
            f"once), output length 13, GPU {H100}, measured by specdash bench") in groups
    assert ("group: model default, workload batch1-latency, api generate, concurrency 4, request rate inf (all at "
            "once), output length 13, measured by specdash bench; not stated: GPU") in groups


def gpu(index: int, name: str) -> GpuInfo:
    return GpuInfo(index, name, f"GPU-{index}", 0, 81559, 0)


def test_the_gpu_name_is_stated_only_when_sure():
    assert run_gpu_name([gpu(0, H100), gpu(1, H100)]) == H100
    mixed = [gpu(0, H100), gpu(1, "NVIDIA A100-SXM4-80GB")]
    assert run_gpu_name(mixed) is None  # which one the server uses is not seen
    assert run_gpu_name(mixed, {1}) == "NVIDIA A100-SXM4-80GB"
    assert run_gpu_name(mixed, {0, 1}) is None  # spread over both kinds
    assert run_gpu_name([]) is None and run_gpu_name([gpu(0, " ")]) is None
    assert run_gpu_name([gpu(0, H100), gpu(1, "")]) is None  # a name not read: not sure


VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                                   max_size=3), max_leaves=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(changes=st.dictionaries(st.sampled_from(sorted(runs()[0])), VALUES, min_size=1, max_size=4),
       nested=st.dictionaries(st.sampled_from(["p50", "mean", "count", "error", "partial", "concurrency"]), VALUES,
                              max_size=2))
def test_fuzz_a_hand_edited_run_file_never_gives_a_traceback(tmp_path, monkeypatch, changes, nested):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    data = runs()[0] | changes
    for key in ("ttft_ms", "settings"):
        if isinstance(data.get(key), dict):
            data[key] = data[key] | nested
    path = tmp_path / "run-20261201-210158-x.json"
    path.write_text(json.dumps(data, default=str))
    try:
        read_result_file(path)
    except ValueError as exc:
        assert "cannot be read" in str(exc)
    for args in (["bench", "import", "--no-save", str(path)], ["bench", "compare", str(path), str(path)],
                 ["bench", "import", "--json", "--no-save", str(path)]):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main(args) in (0, 1, 2)


def test_an_imported_record_file_by_path(tmp_path):
    from support.bench_outputs import sglang_bench_serving

    pasted = tmp_path / "bench.txt"
    pasted.write_text(sglang_bench_serving(duration=10.0, max_concurrency=8))
    assert specdash("bench", "import", str(pasted), state=tmp_path / "a").returncode == 0
    (record,) = (tmp_path / "a" / "bench").glob("imported-*.json")
    state = tmp_path / "b"
    first = specdash("bench", "import", str(record), state=state)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0] == f"{record}: a benchmark record specdash imported"
    assert f"(sglang bench_serving, line 2 of {pasted}): " in first.stdout
    assert first.stdout.splitlines()[-1] == f"stored as {record.stem} (see 'specdash bench list')"
    again = json.loads(specdash("bench", "import", "--json", str(record), state=state).stdout)
    assert again["already_stored"] == record.stem and again["saved"] == []
    compared = specdash("bench", "compare", str(record), str(pasted), state=state)
    assert compared.returncode == 0 and compared.stdout.startswith(f"A: {record} (sglang bench_serving)\n")


@pytest.mark.parametrize("note", [
    "fresh server: running avg_spec_accept_length over this run plus 2 warm-up request(s) of the same workload",
    "running avg_spec_accept_length over this run plus 2 warm-up request(s) of the same workload (the server had "
    "served no speculative request before them)",
])
def test_import_names_a_fresh_servers_average_once(tmp_path, note):
    """A run whose accept length is a fresh server's running average, saved with an older note (``fresh server:
    …``) or the current one: ``bench import`` says "fresh server" once (before: ``[fresh server's average: fresh
    server: running …]``)."""
    run = RunResult.from_dict(runs()[-1])
    run.accept_length, run.accept_length_source, run.accept_length_note = 2.84, "server_info_fresh", note
    path = save_run(run, tmp_path / "other-state" / "bench", now=dt.datetime(2026, 12, 1, 21, 1, 58))
    out = specdash("bench", "import", "--no-save", str(path), state=tmp_path / "state")
    assert out.returncode == 0, out.stderr
    (line,) = [line for line in out.stdout.splitlines() if line.startswith("accept length")]
    assert line.startswith("accept length   2.84  [fresh server's average: running avg_spec_accept_length over "
                           "this run plus 2 warm-up request(s) of the same workload"), line
    assert line.count("fresh server") == 1, line
