"""Helpers for the GPU tests (no tests here): the fake nvidia-smi's state file and real child processes.

``FakeGpuState`` writes the JSON state described in tests/fakes/README.md atomically under the lock, and
``env()`` returns an environment with the fake first on PATH. ``spawn_holder`` starts a real process whose command
line starts with its title (``sglang::scheduler_TP0 -c ...``: Python exec'ed with the title as argv[0], as the
SGLang test double does without ``setproctitle``; ``ps`` shows it the way it shows SGLang's own titles) in its own
process group, so a test can register it as "holding GPU memory" and kill it by process group.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import pathlib
import subprocess
import sys
import time

from support.guard import guard

FAKES_BIN = pathlib.Path(__file__).resolve().parent.parent / "fakes" / "bin"
DATA = pathlib.Path(__file__).resolve().parent.parent / "data" / "gpu"

H100 = {"name": "NVIDIA H100 80GB HBM3", "memory_total_mib": 81559, "base_used_mib": 4, "utilization_pct": 0,
        "quirk": None}


class FakeGpuState:
    """The fake nvidia-smi's state file at ``path`` (gpus/processes as in tests/fakes/README.md)."""

    def __init__(self, path: pathlib.Path, gpus: int = 2, driver: bool = True):
        self.path = pathlib.Path(path)
        self.state = {
            "driver": driver,
            "gpus": [dict(H100, index=i, uuid=f"GPU-5f1c0a3e-0000-4000-8000-00000000000{i}") for i in range(gpus)],
            "processes": [],
        }
        self.write()

    def write(self) -> None:
        with open(f"{self.path}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.state))
            os.replace(tmp, self.path)

    def add_process(self, pid: int, gpu_index: int, used_mib: int, name: str | None = None,
                    keep_when_dead: bool = False) -> None:
        entry = {"pid": pid, "gpu_index": gpu_index, "used_mib": used_mib, "keep_when_dead": keep_when_dead}
        if name is not None:
            entry["name"] = name
        self.state["processes"].append(entry)
        self.write()

    def env(self) -> dict[str, str]:
        """os.environ with the fake first on PATH and ``python3`` resolving straight to this interpreter (a
        pyenv shim in front of it costs ~0.2 s per fake nvidia-smi call)."""
        env = dict(os.environ)
        py_dir = self.path.parent / "python-bin"
        if not py_dir.exists():
            py_dir.mkdir()
            (py_dir / "python3").symlink_to(sys.executable)
        env["PATH"] = f"{FAKES_BIN}:{py_dir}:{env.get('PATH', '/usr/bin:/bin')}"
        env["FAKE_NVIDIA_SMI_STATE"] = str(self.path)
        return env


HOLDER_CODE = (
    "import os, sys, time, subprocess\n"
    "n = int(sys.argv[1])\n"
    "kids = [subprocess.Popen(['sglang::scheduler_TP%d' % (i + 1), '-c', 'import time\\nwhile True: time.sleep(1)'], "
    "executable=sys.executable) for i in range(n)]\n"
    "print(' '.join(str(k.pid) for k in kids), flush=True)\n"
    "if sys.argv[2] == 'exit':\n"
    "    os._exit(0)\n"
    "while True: time.sleep(1)\n"
)


def spawn_holder(title: str = "sglang::scheduler_TP0", ignore_term: bool = False) -> subprocess.Popen:
    """A real process in its own session/process group with argv ``python3 -c CODE TITLE``.

    With ``ignore_term`` it ignores SIGTERM (to prove escalation to SIGKILL).
    """
    code = "import signal, time\n"
    if ignore_term:
        code += "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
    code += "print('ready', flush=True)\nwhile True: time.sleep(1)\n"
    proc = subprocess.Popen([title, "-c", code], executable=sys.executable, stdout=subprocess.PIPE,
                            start_new_session=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == b"ready"
    return proc


def spawn_orphans(count: int = 2) -> tuple[int, list[int]]:
    """Start a launcher (own process group) that starts ``count`` workers and exits: they become orphans
    (PPID 1 or the nearest subreaper) in the launcher's process group. Returns (pgid, worker PIDs)."""
    launcher = subprocess.Popen([sys.executable, "-c", HOLDER_CODE, str(count), "exit"], stdout=subprocess.PIPE,
                                start_new_session=True)
    assert launcher.stdout is not None
    pids = [int(p) for p in launcher.stdout.readline().split()]
    launcher.wait(timeout=10)
    return launcher.pid, pids


def pid_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2:data.rfind(b")") + 3] != b"Z"


def reap_group(pgid: int) -> None:
    """Test teardown: SIGKILL the process group this test started (never anything else)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, 9)


def poll_until(predicate, timeout_s: float = 5.0) -> bool:
    """Poll ``predicate`` every 20 ms until true or ``timeout_s``."""
    deadline = time.monotonic() + guard(timeout_s)
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def run_specdash(state: FakeGpuState | None, *args: str, env: dict | None = None, stdin: str | None = None):
    """``python -m specdash ARGS`` with the fake nvidia-smi of ``state`` on PATH (or ``env``); the CompletedProcess."""
    env = env or (state.env() if state else dict(os.environ))
    return subprocess.run([sys.executable, "-m", "specdash", *args], env=env, capture_output=True, text=True,
                          timeout=60, input=stdin)
