"""The bulk log reader (block reads, one regex pass per block) says exactly what the per-line reader says.

Both engines run on every log of the repository's test data, on generated logs of each SGLang log era
(``benchmarks/bench_log_generate.py``), and on random interleavings of regular and irregular lines split into
random blocks; ``specdash scan --json`` (or the analyzer's summary) must be identical.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import specdash.commands.scan as scan_command
from specdash.cli import main
from specdash.logs.analyzer import LogAnalyzer
from specdash.logs.bulk import BulkReader, PerLineReader, analyse_stream
from specdash.sglang.known_issues import KNOWN_ISSUES, KnownIssue, KnownIssueLogScanner
from specdash.sglang.known_issues.model import LogPattern

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
LOG_FILES = sorted(p for p in DATA.rglob("*") if p.is_file() and p.suffix in (".log", ".txt", ".gz"))


def _load_generator():
    spec = importlib.util.spec_from_file_location("bench_log_generate", ROOT / "benchmarks" / "bench_log_generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATOR = _load_generator()


def _scan(path: Path, per_line: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    monkeypatch.setattr(scan_command, "PER_LINE", per_line)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            rc = main(["scan", "--json", str(path)])
        except SystemExit as exc:
            rc = exc.code
    return rc, out.getvalue()


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    per_line = _scan(path, True, monkeypatch)
    bulk = _scan(path, False, monkeypatch)
    assert bulk == per_line
    return json.loads(bulk[1])


def test_the_repository_has_logs_to_compare() -> None:
    assert len(LOG_FILES) >= 20


@pytest.mark.parametrize("path", LOG_FILES, ids=lambda p: str(p.relative_to(DATA)))
def test_scan_json_identical_on_every_test_log(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _both(path, monkeypatch)


@pytest.mark.parametrize("era", sorted(GENERATOR.ERAS))
def test_scan_json_identical_on_each_log_era(era: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / f"{era}.log"
    with path.open("w", encoding="utf-8", newline="") as fh:
        for line in map(GENERATOR.ERAS[era], GENERATOR.generate(12_000, seed=7)):
            fh.write(line + "\n")
    summary = _both(path, monkeypatch)
    # what a user reads: the decode figures were understood in every era, the crash in the middle was seen
    assert summary["lines"] == 12_000
    assert summary["metrics"]["gen_throughput"]["samples"] == 5_000  # the kept samples (MAX_SAMPLES)
    assert summary["crashed"] is True
    if era != "no-spec":
        assert summary["metrics"]["accept_len"]["samples"] == summary["metrics"]["gen_throughput"]["samples"]


def _read(reader_class, data: bytes, cuts: list[int], needles=(), table=KNOWN_ISSUES) -> tuple[dict, list]:
    analyzer = LogAnalyzer()
    known = KnownIssueLogScanner(table=table)
    reader = reader_class(analyzer, on_line=known.feed, watch=needles)
    start = 0
    for cut in sorted(set(cuts)) + [len(data)]:
        if start <= cut <= len(data):
            reader.feed(data[start:cut])
            start = cut
    reader.close()
    analyzer.end_of_input()
    return analyzer.summary(), known.findings()


def test_regular_lines_take_the_bulk_path_and_figures_match(tmp_path: Path) -> None:
    lines = list(GENERATOR.generate(20_000, seed=3))
    data = ("\n".join(lines) + "\n").encode()
    analyzer = LogAnalyzer()
    fed: list[int] = []
    reader = BulkReader(analyzer, on_line=lambda n, text: fed.append(n))
    reader.feed(data)
    reader.close()
    # only the unusual lines (start-up, warnings, retractions, tqdm bars, the traceback) went the per-line way
    assert 0 < len(fed) < 0.03 * len(lines)
    assert analyzer.lines == len(lines)
    reference = LogAnalyzer()
    reference.feed_many(lines)
    assert analyzer.summary() == reference.summary()


NEEDLES = tuple(p.needle for e in KNOWN_ISSUES for p in e.logs)


def test_a_watched_string_in_a_regular_line_reaches_the_line_matcher() -> None:
    head = list(GENERATOR.generate(40, seed=5))
    decode = ("[2025-08-12 16:09:00 TP0] Decode batch, #running-req: 3, #token: 900, token usage: 0.01, "
              "accept len: 1.00, accept rate: 0.25, cuda graph: True, gen throughput (token/s): 90.00, #queue-req: 0")
    data = ("\n".join(head + [decode] * 3) + "\n").encode()
    # a table entry whose log line is a regular decode line (a draft that accepts nothing)
    table = (KnownIssue("zero-accept", "speculative", "draft accepts nothing", "accept len 1.00",
                        ("https://github.com/sgl-project/sglang/issues/11948",), "check the draft",
                        logs=(LogPattern("accept len: 1.00", r"accept len: 1\.00,"),)),)
    bulk = _read(BulkReader, data, [], ("accept len: 1.00",), table)
    per_line = _read(PerLineReader, data, [], (), table)
    assert bulk == per_line
    assert [f["line"] for f in bulk[1]] == [41] and bulk[1][0]["count"] == 3


# ---- random interleavings -----------------------------------------------------------------------------------
_REGULAR = [
    "[2025-08-12 16:02:{s:02d} TP0] Decode batch, #running-req: {r}, #token: 4000, token usage: 0.{u:02d}, "
    "accept len: {a}, accept rate: 0.50, cuda graph: {g}, gen throughput (token/s): {t}.00, #queue-req: {q}",
    "[2025-08-12 16:02:{s:02d} TP0] Decode batch. #running-req: {r}, #token: 4000, token usage: 0.{u:02d}, "
    "accept len: {a}, gen throughput (token/s): {t}.00, #queue-req: {q}, ",
    "[2025-08-12 16:02:{s:02d}] INFO sched.py:12: Decode batch [77], #running-req: {r}, #token: 4000, token usage: "
    "0.{u:02d}, cuda graph: {g}, gen throughput (token/s): {t}.00, #queue-req: {q}",
    "[2025-08-12 16:02:{s:02d} DP1 TP1 EP1] Prefill batch, #new-seq: 2, #new-token: {t}, #cached-token: 0, token "
    "usage: 0.{u:02d}, #running-req: {r}, #queue-req: {q}, input throughput (token/s): 9000.00, cuda graph: {g}",
    "[2025-08-12 16:02:{s:02d} TP0] Prefill batch. #new-seq: 1, #new-token: {t}, #cached-token: 3, token usage: "
    "0.{u:02d}, #running-req: {r}, #queue-req: {q}, ",
    '[2025-08-12 16:02:{s:02d}] INFO:     127.0.0.1:{t} - "POST /generate HTTP/1.1" 200 OK',
    '[2025-08-12 16:02:{s:02d}] INFO:     127.0.0.1:{t} - "POST /generate HTTP/1.1" 500 Internal Server Error',
]
_IRREGULAR = [
    "[2025-08-12 16:01:00] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', "
    "speculative_num_steps=3, speculative_eagle_topk=1, speculative_num_draft_tokens=4, decode_log_interval=40)",
    "[2025-08-12 16:01:01 TP0] Load weight begin. avail mem=78.49 GB",
    "[2025-08-12 16:01:30] The server is fired up and ready to roll!",
    "[2025-08-12 16:02:00 TP0] KV cache pool is full. Retract requests. #retracted_reqs: 2",
    "[2025-08-12 16:02:00 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    "Traceback (most recent call last):",
    '  File "/sgl/scheduler.py", line 2702, in event_loop',
    "torch.OutOfMemoryError: CUDA out of memory.",
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "",
    "Decode batch. #running-req: 1, #token: 1, token usage: 0.00, accept len: 1.00, gen throughput (token/s): 1, "
    "#queue-req: 0",
    "[2025-08-12 16:02:00 TP0] Decode batch, #running-req: 1, #token: 1, token usage: 1.2.3, gen throughput "
    "(token/s): 1.00, #queue-req: 0",
    "[2025-08-12 16:02:00 TP0] Decode batch, #running-req: 2, #full token: 9, full token usage: 0.01, accept len: "
    "2.00, gen throughput (token/s): 10.00, #queue-req: 1",
    "Capturing batches (bs=4 avail_mem=23.40 GB):  50%|█████     | 2/4 [00:01<00:01,  2.41it/s]\r",
    "\x1b[32m[2025-08-12 16:02:00 TP0] Decode batch, #running-req: 1, #token: 1, token usage: 0.00, gen "
    "throughput (token/s): 1.00, #queue-req: 0\x1b[0m",
    "[2025-08-12 16:02:00 TP0] Decode batch, #running-req: 1, #token: 1, token usage: 0.00, gen throughput "
    "(token/s): 1.00, #queue-req: 0, extra: 1",
    "pp_proxy_tensors accept len: 1.00 vectorized gather kernel index out of bounds",
    'Traceback (most recent call last):\n  File "/x.py", line 1, in f',  # two lines: a traceback left open
    "[2025-08-12 16:02:00 TP0] WARNING: Overlap scheduler is disabled because of using eagle speculative decoding.",
]

_regular = st.builds(
    lambda tmpl, s, r, u, a, g, t, q: tmpl.format(s=s, r=r, u=u, a=a, g=g, t=t, q=q),
    st.sampled_from(_REGULAR), st.integers(0, 59), st.integers(0, 64), st.integers(0, 99),
    st.sampled_from(["1.00", "1.80", "2.45", "3.99", "4.20"]), st.sampled_from(["True", "False"]),
    st.integers(1, 9000), st.integers(0, 30))
_irregular = st.one_of(st.sampled_from(_IRREGULAR), st.text(max_size=80))
_line = st.one_of(_regular, _regular, _regular, _irregular)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_line, max_size=120), cuts=st.lists(st.integers(0, 30_000), max_size=6),
       newline_at_end=st.booleans(), crlf=st.booleans())
def test_random_interleavings_give_identical_results(lines: list[str], cuts: list[int], newline_at_end: bool,
                                                     crlf: bool) -> None:
    text = ("\r\n" if crlf else "\n").join(lines) + ("\n" if newline_at_end and lines else "")
    data = text.encode("utf-8", "surrogatepass")
    assert _read(BulkReader, data, cuts, NEEDLES) == _read(PerLineReader, data, cuts)


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=2_000), cuts=st.lists(st.integers(0, 2_000), max_size=4))
def test_any_bytes_read_without_error_and_alike(data: bytes, cuts: list[int]) -> None:
    assert _read(BulkReader, data, cuts, NEEDLES + ("\ufffd",)) == _read(PerLineReader, data, cuts)
    assert _read(BulkReader, data, cuts, NEEDLES) == _read(PerLineReader, data, cuts)


def test_analyse_stream_reads_a_byte_range_in_blocks(tmp_path: Path) -> None:
    """The entry point for a caller with blocks (a byte range of a file): same analysis as the whole file."""
    lines = list(GENERATOR.generate(3_000, seed=11))
    data = ("\n".join(lines)).encode()  # no newline after the last line
    blocks = [data[i:i + 4096] for i in range(0, len(data), 4096)]
    analyzer = analyse_stream(LogAnalyzer(), blocks)
    assert analyzer.lines == len(lines)
    reference = LogAnalyzer()
    reference.feed_many(lines)
    assert analyzer.summary() == reference.summary()


_ACCESS = '[2025-08-12 16:02:01] INFO:     127.0.0.1:1 - "POST /generate HTTP/1.1" 200 OK'


@pytest.mark.parametrize("lines, first_message", [
    (["[2025-08-12 16:01:30] The server is fired up and ready to roll!",
      "[2025-08-12 16:02:00 TP0] Scheduler hit an exception: Traceback (most recent call last):", _ACCESS,
      '  File "/sgl/scheduler.py", line 2702, in event_loop', "RuntimeError: boom"],
     "crash in the scheduler: 'Scheduler hit an exception' with no traceback frames after it"),
    (["Traceback (most recent call last):", '  File "/x.py", line 1, in f', _ACCESS, "RuntimeError: boom"],
     "crash: traceback without its exception line"),
])
def test_a_regular_line_inside_a_traceback_ends_it_as_the_parser_says(lines: list[str], first_message: str) -> None:
    data = ("\n".join(lines) + "\n").encode()
    bulk = _read(BulkReader, data, [])
    assert bulk == _read(PerLineReader, data, [])
    crashes = [f for f in bulk[0]["findings"] if f["kind"] == "crash"]
    assert crashes[0]["message"].startswith(first_message)
    assert len(crashes) == 2


# ---- long runs: refresh points, evicted samples, restarts and block edges inside runs of regular lines ---------
def _long_log(seed: int, lines: int) -> list[str]:
    """A serving log of ``lines`` lines past 5 000 decode samples: idle gaps, prefill-dominated windows and
    throughput drops (untrusted samples), batches without CUDA graphs, a queue at low KV usage (the request-cap
    finding, raised then refreshed), accept lengths above the configured maximum, retractions, and a restart with
    another configuration in the middle (the samples start afresh)."""
    rng = __import__("random").Random(seed)
    clock = 0

    def stamp() -> str:
        return f"2025-08-12 {16 + clock // 3600:02d}:{clock // 60 % 60:02d}:{clock % 60:02d}"

    def start(steps: int) -> list[str]:
        return [f"[{stamp()}] server_args=ServerArgs(model_path='m', speculative_algorithm='EAGLE3', "
                f"speculative_num_steps={steps}, speculative_eagle_topk=1, speculative_num_draft_tokens={steps + 1}, "
                "decode_log_interval=40)",
                f"[{stamp()} TP0] Load weight begin. avail mem=78.49 GB",
                f"[{stamp()}] The server is fired up and ready to roll!"]

    out = start(3)
    restart = rng.randrange(lines * 78 // 100, lines * 85 // 100)  # after more than 5 000 samples (evictions)
    while len(out) < lines:
        if len(out) >= restart:
            out += start(2)
            restart = lines * 2
        step = rng.random()
        clock += 100 if step < 0.003 else (1 if step < 0.5 else 0)  # now and then idle
        roll = rng.random()
        queue = rng.choice((0, 3, 7, 12))
        usage = rng.choice(("0.05", "0.12", "0.31", "0.62"))
        if roll < 0.7:
            gen = rng.choice(("2400.00", "2100.50", "3.20")) if rng.random() < 0.05 else f"{rng.randint(1500, 2600)}.25"
            accept = rng.choice(("2.31", "2.87", "3.40", "4.80")) if rng.random() < 0.02 else f"{rng.uniform(1.2, 3.9):.2f}"
            graph = "False" if rng.random() < 0.08 else "True"
            out.append(f"[{stamp()} TP0] Decode batch, #running-req: {rng.randint(0, 40)}, #token: 30000, token usage: "
                       f"{usage}, accept len: {accept}, accept rate: 0.61, cuda graph: {graph}, gen throughput "
                       f"(token/s): {gen}, #queue-req: {queue}")
        elif roll < 0.85:
            new = rng.choice((120, 4000, 90000))
            out.append(f"[{stamp()} TP0] Prefill batch, #new-seq: 2, #new-token: {new}, #cached-token: 13, token "
                       f"usage: {usage}, #running-req: {rng.randint(1, 40)}, #queue-req: {queue}, input throughput "
                       "(token/s): 3595.29, cuda graph: False")
        elif roll < 0.97:
            out.append(f'[{stamp()}] INFO:     127.0.0.1:{rng.randint(1000, 60000)} - "POST /generate HTTP/1.1" 200 OK')
        else:
            out.append(f"[{stamp()} TP0] KV cache pool is full. Retract requests. #retracted_reqs: 1")
    return out


def _events(reader_class, data: bytes, cuts: list[int]) -> tuple[list, list]:
    """Every finding event (new or updated, with what it said) and the summary after each block, read in the
    blocks ``cuts`` make."""
    events: list = []
    analyzer = LogAnalyzer(on_finding=lambda f: events.append(("new", f.as_dict())),
                           on_finding_update=lambda f: events.append(("update", f.as_dict())))
    reader = reader_class(analyzer)
    states = []
    start = 0
    for cut in sorted(set(cuts)) + [len(data)]:
        reader.feed(data[start:cut])
        start = cut
        states.append(analyzer.summary())  # a reader in the middle (the console's panels read findings as it goes)
    reader.close()
    analyzer.end_of_input()
    states.append(analyzer.summary())
    metrics = analyzer.metrics
    assert metrics.untrusted_kept == sum(not s.trusted for s in metrics.samples)
    return events, states


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), cuts=st.lists(st.integers(0, 2_000_000), max_size=8))
def test_long_runs_give_the_same_findings_at_every_step(seed: int, cuts: list[int]) -> None:
    lines = _long_log(seed, 10_000)
    data = ("\n".join(lines) + "\n").encode()
    bulk = _events(BulkReader, data, [c % len(data) for c in cuts])
    assert bulk == _events(PerLineReader, data, [c % len(data) for c in cuts])
    events, states = bulk
    kinds = {e[1]["kind"] for e in events}
    # the log exercises what it is meant to: refreshed derived findings, the cap, graphs, the restart
    assert {"untrusted_samples", "request_cap", "no_cuda_graph", "retractions"} <= kinds
    assert any(e[0] == "update" and e[1]["kind"] == "untrusted_samples" for e in events)
    # the restart started afresh with its own configuration (2 draft steps: at most 3 accepted)
    assert states[-1]["metrics"]["accept_len"]["samples"] < 5000
    assert any(f.get("data", {}).get("max_accept_len") == 3 for f in states[-1]["findings"])
