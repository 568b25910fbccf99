"""Registers the double's "GPU memory" in the fake nvidia-smi's JSON state (tests/fakes/README.md).

The state file is named by ``FAKE_NVIDIA_SMI_STATE``; without it nothing is registered. Every change is a
read-modify-write under an ``fcntl.flock`` on ``<state>.lock``, written to a temp file and ``os.replace``-d.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile

DEFAULT_GPU = {
    "name": "NVIDIA H100 80GB HBM3",
    "memory_total_mib": 81559,
    "base_used_mib": 4,
    "utilization_pct": 0,
    "quirk": None,
}


def state_path() -> str | None:
    """The state file path from ``FAKE_NVIDIA_SMI_STATE`` (None when unset)."""
    return os.environ.get("FAKE_NVIDIA_SMI_STATE") or None


def _update(path: str, change) -> None:
    with open(path + ".lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            try:
                with open(path, encoding="utf-8") as fh:
                    state = json.load(fh)
            except (OSError, ValueError):
                state = {"driver": True, "gpus": [], "processes": []}
            state.setdefault("processes", [])
            state.setdefault("gpus", [])
            change(state)
            fd, tmp = tempfile.mkstemp(prefix=".nvsmi-", dir=os.path.dirname(os.path.abspath(path)))
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(state, fh, indent=1)
            os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def set_process_memory(pid: int, gpu_index: int, used_mib: int) -> None:
    """Register (or update) ``pid`` as holding ``used_mib`` MiB on GPU ``gpu_index``. Adds a default GPU entry
    when the state lists no GPU with that index. The process name is left out: the fake shows its argv[0]."""
    path = state_path()
    if not path:
        return

    def change(state: dict) -> None:
        if not any(g.get("index") == gpu_index for g in state["gpus"]):
            gpu = dict(DEFAULT_GPU, index=gpu_index, uuid=f"GPU-00000000-0000-0000-0000-{gpu_index:012d}")
            state["gpus"].append(gpu)
        for proc in state["processes"]:
            if proc.get("pid") == pid:
                proc.update(gpu_index=gpu_index, used_mib=int(used_mib))
                return
        state["processes"].append(
            {"pid": pid, "gpu_index": gpu_index, "used_mib": int(used_mib), "keep_when_dead": False}
        )

    _update(path, change)


def remove_processes(pids: list[int]) -> None:
    """Drop the entries of ``pids`` (a clean exit releases the memory)."""
    path = state_path()
    if not path or not pids:
        return
    wanted = set(pids)

    def change(state: dict) -> None:
        state["processes"] = [p for p in state["processes"] if p.get("pid") not in wanted]

    _update(path, change)
