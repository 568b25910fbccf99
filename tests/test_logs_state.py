"""Server state, start-up phase and exit reason read from a log tail (what the status poll reads), with the log
pane's reader and vocabulary, on real SGLang log shapes (v0.4.x to 2026 releases)."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from specdash.logs.state import ServerState, read_log_tail

DATA = pathlib.Path(__file__).parent / "data"


def _groups() -> dict[str, list[str]]:
    """Log lines of each '==== Group N' section of the fixture file, annotations dropped."""
    groups: dict[str, list[str]] = {}
    current = None
    for line in (DATA / "sglang-log-formats.txt").read_text().splitlines():
        if line.startswith("# ==== Group"):
            current = line.split()[3].rstrip(":")
            groups[current] = []
        elif current and not line.startswith("#"):
            groups[current].append(line)
    return groups


GROUPS = _groups()


def startup_phase(text: str) -> str | None:
    return read_log_tail(text).phase


def exit_reason_from_log(text: str) -> str | None:
    return read_log_tail(text).exit_reason


def _phase_after(lines: list[str], needle: str) -> str | None:
    index = next(i for i, line in enumerate(lines) if needle in line)
    return startup_phase("\n".join(lines[: index + 1]))


@pytest.mark.parametrize(
    ("needle", "phase"),
    [
        ("server_args=ServerArgs(", "args"),
        ("Load weight begin.", "weights"),
        ("KV Cache is allocated.", "CUDA graph (target)"),  # the KV cache is done: capture comes next
        ("Capture cuda graph begin.", "CUDA graph (target)"),
        ("Capturing batches (bs=1", "CUDA graph (target) 10/10"),
        ("max_total_num_tokens=354112", "warmup"),
    ],
)
def test_phase_follows_a_050_start_up(needle, phase):
    assert _phase_after(GROUPS["2"], needle) == phase


def test_phase_follows_a_04x_start_up_to_ready():
    lines = GROUPS["1"]
    assert _phase_after(lines, "100%|") == "CUDA graph (target) 23/23"  # bare tqdm line of 0.4.x
    assert _phase_after(lines, "Uvicorn running on") == "warmup"
    assert _phase_after(lines, "fired up and ready to roll") == "ready"
    index = next(i for i, line in enumerate(lines) if "fired up and ready to roll" in line)
    assert read_log_tail("\n".join(lines[: index + 1])).state is ServerState.READY


def test_phase_reads_2026_capture_lines_and_carriage_return_progress():
    assert _phase_after(GROUPS["5"], "Capture draft decode CUDA graph begin") == "CUDA graph (draft)"
    tqdm = ("Capturing batches (bs=48 avail_mem=14.77 GB):   0%|          | 0/10 [00:00<?, ?it/s]"
            "\rCapturing batches (bs=40 avail_mem=14.70 GB):  10%|█         | 1/10 [00:00<00:06,  1.40it/s]"
            "\rCapturing batches (bs=32 avail_mem=14.66 GB):  20%|██        | 2/10 [00:01<00:05,  1.45it/s]")
    log = "[2025-08-12 16:02:26] Capture cuda graph begin. This can take up to several minutes. avail mem=14.77 GB\n" + tqdm
    assert startup_phase(log) == "CUDA graph (target) 2/10"
    assert startup_phase("") is None
    assert startup_phase("some unrelated line\n") is None


def test_exit_reason_from_a_scheduler_oom():
    lines = [line for line in (DATA / "sglang-log-formats.txt").read_text().splitlines()
             if "6k CUDA OOM" in line or line.startswith(("[2025-10-22 10:30:02", "  File", "    scheduler",
                                                          "torch.OutOfMemoryError"))]
    reason = exit_reason_from_log("\n".join(lines))
    assert read_log_tail("\n".join(lines)).state is ServerState.CRASHED
    assert reason.startswith("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    assert len(reason) <= 200


def test_exit_reason_from_argparse_and_sigquit_only_logs():
    argparse_log = ("usage: launch_server.py [-h] --model-path MODEL_PATH ...\n"
                    "launch_server.py: error: unrecognized arguments: --speculative-model [ngram] --use-v2-block-manager\n")
    assert exit_reason_from_log(argparse_log) == (
        "launch_server.py: error: unrecognized arguments: --speculative-model [ngram] --use-v2-block-manager")
    sigquit = "[2025-10-22 10:30:02] Received sigquit from a child process. It usually means the child failed.\n"
    assert exit_reason_from_log(sigquit) == "Received sigquit from a child process. It usually means the child failed."
    assert exit_reason_from_log("[2025-08-12 16:02:19] Load weight begin. avail mem=78.68 GB\n") is None
    uvicorn = ("[2025-08-12 16:05:01] Uvicorn running on http://127.0.0.1:30000\n"
               "ERROR:    [Errno 98] error while attempting to bind on address ('127.0.0.1', 30000): address already "
               "in use\n")
    assert exit_reason_from_log(uvicorn).startswith("ERROR:    [Errno 98] error while attempting to bind")


def test_exit_reason_from_a_draft_cuda_graph_capture_failure():
    text = (DATA / "cases" / "draft-cuda-graph-capture-failure.txt").read_text().split("--- expected ---")[0]
    raw = "\n".join(line for line in text.splitlines() if not line.startswith("→"))  # reporter's summary lines
    assert exit_reason_from_log(raw).startswith(
        "torch.AcceleratorError: CUDA error: operation not permitted when stream is capturing")


@given(st.text(max_size=400))
@settings(max_examples=200, deadline=None)
def test_any_tail_never_raises(text):
    reading = read_log_tail(text)
    assert reading.state in set(ServerState) - {ServerState.STOPPED}
    assert reading.exit_reason is None or len(reading.exit_reason) <= 200


@given(st.lists(st.sampled_from(
    [line for group in GROUPS.values() for line in group] + ["\r", "Capturing batches (bs=8):  50%| | 5/10 [", ""]),
    max_size=40))
@settings(max_examples=200, deadline=None)
def test_any_mix_of_real_lines_never_raises(lines):
    read_log_tail("\n".join(lines))
