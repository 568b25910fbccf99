"""Coarse start-up phase and exit reason from the tail of an SGLang server log.

A small fallback for the header ("starting (capturing CUDA graphs 3/10)", "crashed: torch.OutOfMemoryError ...");
the log-intelligence package reads the full log in more detail. Line shapes: sglang-facts.md §7.2 and §7.4
(v0.4.x to 2026 main).
"""

from __future__ import annotations

import re

READY_LINE = "The server is fired up and ready to roll!"

_PROGRESS = re.compile(r"(\d+)/(\d+) \[")
# (substring, phase) — the last line in the tail that matches decides
_PHASES: tuple[tuple[str, str], ...] = (
    ("server_args=ServerArgs(", "starting workers"),
    ("Load weight begin.", "loading weights"),
    ("Load weight end.", "loading weights"),
    ("KV Cache is allocated.", "allocating KV cache"),
    ("Memory pool end.", "allocating KV cache"),
    ("Capture cuda graph begin.", "capturing CUDA graphs"),
    ("Capture draft cuda graph begin.", "capturing draft CUDA graphs"),
    ("Capture draft extend cuda graph begin.", "capturing draft CUDA graphs"),
    ("CUDA graph begin.", "capturing CUDA graphs"),
    ("Capturing batches", "capturing CUDA graphs"),
    ("max_total_num_tokens=", "starting HTTP server"),
    ("Uvicorn running on", "warming up"),
    (READY_LINE, "ready"),
)

_EXCEPTION = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception|Interrupt|Exit)\b(?::.*)?$")


def startup_phase(log_tail: str) -> str | None:
    """The start-up phase the log has reached (``loading weights``, ``allocating KV cache``, ``capturing CUDA
    graphs 3/10``, ``warming up``, ``ready``...), or None when no start-up line is in ``log_tail``.

    tqdm progress updates separated by carriage returns count as separate lines.
    """
    phase: str | None = None
    progress: str | None = None
    for line in log_tail.replace("\r", "\n").splitlines():
        matched = None
        for needle, name in _PHASES:
            if needle in line:
                matched = name
        is_progress = "it/s]" in line or "Capturing batches" in line
        if matched is None and is_progress:
            matched = "capturing CUDA graphs"  # 0.4.x: bare tqdm line without description
        if matched is None:
            continue
        if is_progress:
            found = _PROGRESS.search(line)
            progress = f"{found.group(1)}/{found.group(2)}" if found else progress
            if phase is None or not phase.startswith("capturing"):
                phase = matched
        else:
            phase, progress = matched, None
    if phase and phase.startswith("capturing") and progress:
        return f"{phase} {progress}"
    return phase


def exit_reason_from_log(log_tail: str) -> str | None:
    """The most telling failure line in ``log_tail``: the last exception line of a traceback (e.g.
    ``torch.OutOfMemoryError: CUDA out of memory. ...``), an argparse ``error:`` line, or SGLang's
    ``Received sigquit from a child process`` notice; cut to 200 characters. None when none is found."""
    best = None
    sigquit = None
    for raw in log_tail.replace("\r", "\n").splitlines():
        line = raw.strip()
        body = re.sub(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[^\]]*\]\s*", "", line)
        if _EXCEPTION.match(body) or re.match(r"^\S+\.py: error: ", body) or body.startswith("ERROR:"):
            best = body
        elif "Received sigquit from a child process" in body:
            sigquit = body
    reason = best or sigquit
    if reason and len(reason) > 200:
        reason = reason[:197] + "..."
    return reason
