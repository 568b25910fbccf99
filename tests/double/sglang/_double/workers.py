"""Worker child processes with SGLang's process titles (``sglang::scheduler_TP0``, ``sglang::detokenizer``).

The title is what ``ps -o args`` shows: with ``setproctitle`` installed the worker sets it itself; otherwise the
worker is exec'ed with the title as argv[0] and its program fed on stdin, so the whole command line is the title.
A worker exits on SIGTERM/SIGINT (unless told to ignore SIGTERM) and when its parent dies — unless it was started
as "orphan on parent death", the crash scenario's leftover that keeps holding its GPU memory.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

_PKG_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_BOOT = (
    "import sys\n"
    f"sys.path.insert(0, {_PKG_ROOT!r})\n"
    "from sglang._double.workers import run_worker\n"
    "run_worker()\n"
)


def _has_setproctitle() -> bool:
    try:
        import setproctitle  # type: ignore  # noqa: F401
    except ImportError:
        return False
    return True


def spawn_worker(title: str, *, orphan_on_parent_death: bool, ignore_sigterm: bool) -> subprocess.Popen:
    """Start a worker titled ``title``; returns its Popen (stdout/stderr inherited: they go to the same log)."""
    config = {
        "title": title,
        "parent_pid": os.getpid(),
        "orphan_on_parent_death": orphan_on_parent_death,
        "ignore_sigterm": ignore_sigterm,
    }
    env = dict(os.environ, SGLANG_DOUBLE_WORKER=json.dumps(config))
    if _has_setproctitle():
        return subprocess.Popen([sys.executable, "-c", _BOOT], env=env, stdin=subprocess.DEVNULL)
    proc = subprocess.Popen([title], executable=sys.executable, env=env, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(_BOOT.encode())
    proc.stdin.close()
    return proc


def run_worker() -> None:
    """Body of a worker process: hold still until told to go; release GPU memory on a clean exit."""
    from sglang._double import gpu_state

    config = json.loads(os.environ.pop("SGLANG_DOUBLE_WORKER"))
    if _has_setproctitle():
        import setproctitle  # type: ignore

        setproctitle.setproctitle(config["title"])
    me = os.getpid()

    def leave(*_args) -> None:
        try:
            gpu_state.remove_processes([me])
        finally:
            os._exit(0)

    signal.signal(signal.SIGTERM, signal.SIG_IGN if config["ignore_sigterm"] else leave)
    signal.signal(signal.SIGINT, leave)
    parent = config["parent_pid"]
    while True:
        time.sleep(0.05)
        if not config["orphan_on_parent_death"] and os.getppid() != parent:
            leave()
