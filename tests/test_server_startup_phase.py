"""Start-up phase and exit reason read from real SGLang log shapes (fixtures copied from ../shared/fixtures)."""

from __future__ import annotations

import pathlib

import pytest

from specdash.server import exit_reason_from_log, startup_phase

DATA = pathlib.Path(__file__).parent / "data" / "server"


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


def _phase_after(lines: list[str], needle: str) -> str | None:
    index = next(i for i, line in enumerate(lines) if needle in line)
    return startup_phase("\n".join(lines[: index + 1]))


@pytest.mark.parametrize(
    ("needle", "phase"),
    [
        ("server_args=ServerArgs(", "starting workers"),
        ("Load weight begin.", "loading weights"),
        ("KV Cache is allocated.", "allocating KV cache"),
        ("Capture cuda graph begin.", "capturing CUDA graphs"),
        ("Capturing batches (bs=1", "capturing CUDA graphs 10/10"),
        ("max_total_num_tokens=354112", "starting HTTP server"),
    ],
)
def test_phase_follows_a_050_start_up(needle, phase):
    assert _phase_after(GROUPS["2"], needle) == phase


def test_phase_follows_a_04x_start_up_to_ready():
    lines = GROUPS["1"]
    assert _phase_after(lines, "100%|") == "capturing CUDA graphs 23/23"  # bare tqdm line of 0.4.x
    assert _phase_after(lines, "Uvicorn running on") == "warming up"
    assert _phase_after(lines, "fired up and ready to roll") == "ready"


def test_phase_reads_2026_capture_lines_and_carriage_return_progress():
    assert _phase_after(GROUPS["5"], "Capture draft decode CUDA graph begin") == "capturing CUDA graphs"
    tqdm = ("Capturing batches (bs=48 avail_mem=14.77 GB):   0%|          | 0/10 [00:00<?, ?it/s]"
            "\rCapturing batches (bs=40 avail_mem=14.70 GB):  10%|█         | 1/10 [00:00<00:06,  1.40it/s]"
            "\rCapturing batches (bs=32 avail_mem=14.66 GB):  20%|██        | 2/10 [00:01<00:05,  1.45it/s]")
    log = "[2025-08-12 16:02:26] Capture cuda graph begin. This can take up to several minutes. avail mem=14.77 GB\n" + tqdm
    assert startup_phase(log) == "capturing CUDA graphs 2/10"
    assert startup_phase("") is None
    assert startup_phase("some unrelated line\n") is None


def test_exit_reason_from_a_scheduler_oom():
    lines = [line for line in (DATA / "sglang-log-formats.txt").read_text().splitlines()
             if "6k CUDA OOM" in line or line.startswith(("[2025-10-22 10:30:02", "  File", "    scheduler",
                                                          "torch.OutOfMemoryError"))]
    reason = exit_reason_from_log("\n".join(lines))
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


def test_exit_reason_from_a_draft_cuda_graph_capture_failure():
    text = (DATA / "C30.txt").read_text().split("--- expected ---")[0]
    raw = "\n".join(line for line in text.splitlines() if not line.startswith("→"))  # reporter's summary lines
    assert exit_reason_from_log(raw).startswith(
        "torch.AcceleratorError: CUDA error: operation not permitted when stream is capturing")
