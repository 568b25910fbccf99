"""Find the running SGLang server on a host and the file its stdout goes to (works with any Host).

A server is a process whose command line runs ``sglang.launch_server`` / ``sglang serve`` (or, failing that, a
``sglang::`` process title whose parent is not another ``sglang::`` process). Its log is what ``/proc/PID/fd/1``
points to (stdout; stderr ``fd/2`` when stdout is not a file). A terminal, pipe, socket or ``/dev/null`` cannot be
followed: the result then says so in one line and how to fix it.
"""

from __future__ import annotations

import dataclasses
import shlex

from specdash.hosts.base import Host


@dataclasses.dataclass(frozen=True)
class ServerProcess:
    """A candidate: ``pid``, ``ppid``, ``user``, ``elapsed_s`` (time since start), ``args`` (command line)."""

    pid: int
    ppid: int
    user: str
    elapsed_s: int
    args: str


@dataclasses.dataclass(frozen=True)
class DiscoveredLog:
    """Result of :func:`discover_server_log`: ``pid`` of the server (None when none runs), ``path`` of the file
    its output goes to (None when it is not a regular file), ``explanation`` (one line: what was found or why the
    output cannot be followed and how to fix it), ``target`` (what ``/proc/PID/fd/1`` points to) and all
    ``candidates`` (newest first)."""

    pid: int | None
    path: str | None
    explanation: str
    target: str = ""
    candidates: tuple[ServerProcess, ...] = ()


_SERVER_MARKERS = ("sglang.launch_server", "sglang serve", "sglang/launch_server.py", "sglang.srt.entrypoints")


def parse_ps(text: str) -> list[ServerProcess]:
    """Parse ``ps -ww -eo pid=,ppid=,etimes=,user=,args=`` output into the SGLang server candidates, newest first."""
    procs: list[ServerProcess] = []
    titles: dict[int, ServerProcess] = {}
    for row in text.splitlines():
        parts = row.split(None, 4)
        if len(parts) < 5 or not parts[0].isdigit():
            continue
        pid, ppid, etimes, user, args = int(parts[0]), int(parts[1]), parts[2], parts[3], parts[4]
        proc = ServerProcess(pid, ppid, user, int(etimes) if etimes.isdigit() else 0, args)
        if any(m in args for m in _SERVER_MARKERS) and "specdash" not in args:
            procs.append(proc)
        elif args.startswith("sglang::"):
            titles[pid] = proc
    if not procs:
        # only renamed processes: take those whose parent is not itself an sglang:: process
        procs = [p for p in titles.values() if p.ppid not in titles]
    return sorted(procs, key=lambda p: p.elapsed_s)


def explain_target(pid: int, target: str) -> tuple[str | None, str]:
    """(path or None, one-line explanation) for what ``/proc/PID/fd/1`` points to."""
    if not target:
        return None, (f"cannot read /proc/{pid}/fd/1 (another user's process?): run specdash as that user or pass "
                      "--log PATH")
    if target.startswith("/dev/pts/") or target.startswith("/dev/tty") or target == "/dev/console":
        return None, (f"PID {pid} writes to a terminal ({target}), which cannot be followed: restart it with "
                      "`... > server.log 2>&1` (or `2>&1 | tee server.log`) and pass --log server.log")
    if target.startswith("pipe:"):
        return None, (f"PID {pid} writes to a pipe ({target}), e.g. `| tee FILE`: pass that FILE with --log, or "
                      "restart the server with `> server.log 2>&1`")
    if target.startswith("socket:"):
        return None, (f"PID {pid} writes to a socket ({target}), e.g. systemd's journal: follow it with journalctl, "
                      "or redirect the server's output to a file and pass --log")
    if target == "/dev/null":
        return None, f"PID {pid} discards its output (/dev/null): restart it with `> server.log 2>&1`"
    if target.endswith(" (deleted)"):
        return None, f"PID {pid} writes to a deleted file ({target}): restart it with `> server.log 2>&1`"
    if target.startswith("/"):
        return target, f"PID {pid} writes to {target}"
    return None, f"PID {pid} writes to {target}, which is not a file: pass --log PATH"


async def discover_server_log(host: Host, pid: int | None = None) -> DiscoveredLog:
    """Find the SGLang server on ``host`` (the newest candidate, or ``pid`` when given) and its log file.

    Uses ``ps`` and ``readlink /proc/PID/fd/1`` (fd 2 when fd 1 is not a regular file) through ``host.run``.
    Raises :class:`~specdash.hosts.base.HostError` when the host cannot be reached."""
    result = await host.run("ps -ww -eo pid=,ppid=,etimes=,user=,args=", timeout_s=15)
    candidates = parse_ps(result.stdout)
    if pid is not None:
        chosen = next((p for p in candidates if p.pid == pid), None)
        if chosen is None:
            return DiscoveredLog(None, None, f"PID {pid} is not a running SGLang server", "", tuple(candidates))
    elif not candidates:
        return DiscoveredLog(None, None, "no SGLang server (sglang.launch_server / sglang serve) runs on this host; "
                             "pass --log PATH", "", ())
    else:
        chosen = candidates[0]
    q = shlex.quote
    out = await host.run(f"readlink {q(f'/proc/{chosen.pid}/fd/1')}; echo '|'; readlink {q(f'/proc/{chosen.pid}/fd/2')}",
                         timeout_s=15)
    fd1, _, fd2 = out.stdout.partition("|")
    fd1, fd2 = fd1.strip(), fd2.strip()
    path, explanation = explain_target(chosen.pid, fd1)
    target = fd1
    if path is None and fd2.startswith("/") and not fd2.startswith("/dev/") and not fd2.endswith(" (deleted)"):
        path, target = fd2, fd2
        explanation = f"PID {chosen.pid} writes its log to stderr: {fd2}"
    if len(candidates) > 1 and pid is None:
        explanation += f" ({len(candidates)} servers found; newest chosen)"
    return DiscoveredLog(chosen.pid, path, explanation, target, tuple(candidates))
