"""Processes holding GPU device files open — what ``fuser /dev/nvidia*`` finds, read-only and targeted.

Inside a container (LXC, Docker without ``--pid=host``) the driver cannot name the processes that hold GPU memory:
``nvidia-smi`` lists none, or host PIDs that do not exist here. Those processes are still visible through their
open files: ``/proc/PID/fd/N`` links to ``/dev/nvidia0``, ``/dev/nvidiactl``, ``/dev/nvidia-uvm`` (CUDA) or
``/dev/dri/renderD128``. :func:`find_holders` lists the processes of the user specdash runs as whose open files
match the device patterns — one ``find`` over ``/proc/[0-9]*/fd`` through the Host (locally or over SSH; GNU
findutils), nothing opened, nothing signalled. Memory per process is unknown this way.

Setting: the environment variable :data:`DEVICE_GLOBS_ENV` (``SPECDASH_GPU_DEVICE_GLOBS``) of the specdash
process, ``:``-separated shell patterns matched against the link targets (``find -lname``); default
:data:`DEFAULT_DEVICE_GLOBS`. Tests point it at a file their own child processes hold open.
"""

from __future__ import annotations

import os
import shlex

from specdash.hosts.base import Host, HostError

DEVICE_GLOBS_ENV = "SPECDASH_GPU_DEVICE_GLOBS"
DEFAULT_DEVICE_GLOBS: tuple[str, ...] = ("/dev/nvidia*", "/dev/dri/*")
_END = "--specdash-find-end--"


def device_globs(environ: dict[str, str] | None = None) -> tuple[str, ...]:
    """The device patterns: :data:`DEVICE_GLOBS_ENV` split on ``:`` (empty parts dropped), else the default."""
    value = (environ if environ is not None else os.environ).get(DEVICE_GLOBS_ENV, "")
    globs = tuple(part for part in value.split(":") if part.strip())
    return globs or DEFAULT_DEVICE_GLOBS


def holders_command(globs: tuple[str, ...]) -> str:
    """The shell command listing ``/proc/PID/fd DEVICE`` lines for this user's processes, then an end marker
    (present only when ``find`` ran)."""
    tests = " -o ".join(f"-lname {shlex.quote(g)}" for g in globs)
    return ("command -v find >/dev/null 2>&1 || { echo 'find: not installed' >&2; exit 127; }; "
            f"find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -user \"$(id -u)\" \\( {tests} \\) "
            f"-printf '%h %l\\n' 2>/dev/null; echo {_END}")


def parse_holders(text: str) -> dict[int, tuple[str, ...]] | None:
    """``/proc/123/fd /dev/nvidia0`` lines -> ``{123: ("/dev/nvidia0", ...)}`` (sorted, unique); None when the
    end marker is missing (the scan did not finish)."""
    if _END not in text:
        return None
    found: dict[int, set[str]] = {}
    for line in text.splitlines():
        if not line.startswith("/proc/"):
            continue
        where, _, target = line.partition(" ")
        parts = where.split("/")
        if len(parts) != 4 or parts[3] != "fd" or not parts[2].isdigit() or not target:
            continue
        found.setdefault(int(parts[2]), set()).add(target.removesuffix(" (deleted)"))
    return {pid: tuple(sorted(devs)) for pid, devs in found.items()}


async def find_holders(host: Host, globs: tuple[str, ...] | None = None, timeout_s: float = 20.0
                       ) -> tuple[dict[int, tuple[str, ...]], str | None]:
    """``(holders, error)``: PID -> device files it holds open, for the processes of the user specdash runs as on
    ``host``; ``error`` is one line when the scan could not run (then ``holders`` is empty). Never raises."""
    globs = globs or device_globs()
    try:
        result = await host.run(holders_command(globs), timeout_s=timeout_s)
    except HostError as exc:
        return {}, f"cannot look for processes holding GPU device files: {exc}"
    holders = parse_holders(result.stdout)
    if holders is None:
        detail = (result.stderr.strip() or result.stdout.strip() or f"exit {result.exit_status}").splitlines()[0]
        return {}, f"cannot look for processes holding GPU device files: {detail}"
    return holders, None
