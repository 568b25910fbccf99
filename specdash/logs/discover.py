"""Find the running SGLang server on a host and the file its stdout goes to (works with any Host).

A server is a process whose command line runs ``sglang.launch_server`` / ``sglang serve`` (or, failing that, a
``sglang::`` process title whose parent is not another ``sglang::`` process). Its log is what ``/proc/PID/fd/1``
points to (stdout; stderr ``fd/2`` when stdout is not a file). A terminal, pipe, socket or ``/dev/null`` cannot be
followed: the result then says so in one line and how to fix it.

Which server: the newest one run by the user specdash logs in as. Another user's server is listed among the
candidates but never followed on its own (a newer process of someone else's could otherwise redirect the console
to a log of their choosing); ask for it by PID. On the machine specdash runs on, its own process and the processes
it runs under are never candidates (``specdash validate -- python -m sglang.launch_server ...`` names the marker),
told apart by PID, not by their command line: a server started from a folder named ``specdash`` is still a server.
"""

from __future__ import annotations

import dataclasses
import os
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
    ``candidates`` (the login user's first, each group newest first)."""

    pid: int | None
    path: str | None
    explanation: str
    target: str = ""
    candidates: tuple[ServerProcess, ...] = ()
    #: how many of ``candidates`` (the first ones) run as the login user
    own_count: int = 0


@dataclasses.dataclass(frozen=True)
class ServerSummary:
    """One running server as the chooser lists it: ``process``; ``port`` (its HTTP port as SGLang's argparse
    reads the command line: ``--port``, else 30000; None when the command line is not a launch command, e.g. a
    renamed ``sglang::`` process); ``model`` (``--model-path``'s value, None when absent); ``log`` (the file its
    output goes to, None when not a file) and ``log_note`` (one line: why not, or the file)."""

    process: ServerProcess
    port: int | None
    model: str | None
    log: str | None
    log_note: str

    def describe(self) -> str:
        """``PID 4242 · port 30000 · meta-llama/Llama-3.1-8B · started 5 min ago · log /srv/x.log``."""
        started = _ago(self.process.elapsed_s)
        parts = [f"PID {self.process.pid}", f"port {self.port}" if self.port else "port unknown",
                 self.model or "model unknown", f"started {started}", f"user {self.process.user}",
                 f"log {self.log}" if self.log else self.log_note]
        return " · ".join(parts)


_SERVER_MARKERS = ("sglang.launch_server", "sglang serve", "sglang/launch_server.py", "sglang.srt.entrypoints")


_PS_COMMAND = "id -un; ps -ww -eo pid=,ppid=,etimes=,user=,args="


def parse_ps(text: str, own_pid: int | None = None) -> list[ServerProcess]:
    """Parse ``ps -ww -eo pid=,ppid=,etimes=,user=,args=`` output into the SGLang server candidates, newest first.

    ``own_pid``: specdash's own PID when ``text`` comes from this machine; that process and its ancestors (as the
    rows' PPIDs link them) are left out. Rows that are not ``PID PPID ETIMES USER ARGS`` are ignored."""
    rows: list[ServerProcess] = []
    for row in text.splitlines():
        parts = row.split(None, 4)
        if len(parts) < 5 or not parts[0].isdigit() or not parts[1].isdigit():
            continue
        pid, ppid, etimes, user, args = int(parts[0]), int(parts[1]), parts[2], parts[3], parts[4]
        rows.append(ServerProcess(pid, ppid, user, int(etimes) if etimes.isdigit() else 0, args))
    ours = _self_and_ancestors(rows, own_pid)
    procs: list[ServerProcess] = []
    titles: dict[int, ServerProcess] = {}
    for proc in rows:
        if proc.pid in ours:
            continue
        if any(m in proc.args for m in _SERVER_MARKERS):
            procs.append(proc)
        elif proc.args.startswith("sglang::"):
            titles[proc.pid] = proc
    if not procs:
        # only renamed processes: take those whose parent is not itself an sglang:: process
        procs = [p for p in titles.values() if p.ppid not in titles]
    return sorted(procs, key=lambda p: p.elapsed_s)


def _self_and_ancestors(rows: list[ServerProcess], own_pid: int | None) -> set[int]:
    if own_pid is None:
        return set()
    parent = {p.pid: p.ppid for p in rows}
    chain, pid = set(), own_pid
    while pid > 0 and pid not in chain:
        chain.add(pid)
        pid = parent.get(pid, 0)
    return chain


def same_user(ps_user: str, login: str) -> bool:
    """Whether ``ps``'s USER column names ``login``; ``ps`` cuts a long name to 7 characters and ``+``."""
    if not login:
        return False
    if ps_user.endswith("+") and len(ps_user) > 1:
        return login.startswith(ps_user[:-1])
    return ps_user == login


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

    Without ``pid`` only the login user's servers are followed (see the module note); ``candidates`` lists every
    user's. Uses ``id -un``, ``ps`` and ``readlink /proc/PID/fd/1`` (fd 2 when fd 1 is not a regular file) through
    ``host.run``. Raises :class:`~specdash.hosts.base.HostError` when the host cannot be reached."""
    result = await host.run(_PS_COMMAND, timeout_s=15)
    login, _, table = result.stdout.partition("\n")
    login = login.strip()
    candidates = parse_ps(table, own_pid=os.getpid() if host.is_local else None)
    mine = [p for p in candidates if same_user(p.user, login)]
    if pid is not None:
        chosen = next((p for p in candidates if p.pid == pid), None)
        if chosen is None:
            return DiscoveredLog(None, None, f"PID {pid} is not a running SGLang server", "", tuple(candidates))
    elif not candidates:
        return DiscoveredLog(None, None, "no SGLang server (sglang.launch_server / sglang serve) runs on this host; "
                             "pass --log PATH", "", ())
    elif not mine:
        others = ", ".join(f"PID {p.pid} ({p.user})" for p in candidates[:3])
        return DiscoveredLog(None, None, f"only other users' SGLang servers run on this host ({others}), not "
                             f"followed without being asked: pass --log PATH", "", tuple(candidates))
    else:
        chosen = mine[0]
        candidates = mine + [p for p in candidates if p not in mine]
    q = shlex.quote
    out = await host.run(f"readlink {q(f'/proc/{chosen.pid}/fd/1')}; echo '|'; "
                         f"readlink {q(f'/proc/{chosen.pid}/fd/2')}",
                         timeout_s=15)
    fd1, _, fd2 = out.stdout.partition("|")
    fd1, fd2 = fd1.strip(), fd2.strip()
    path, explanation = explain_target(chosen.pid, fd1)
    target = fd1
    if path is None and fd2.startswith("/") and not fd2.startswith("/dev/") and not fd2.endswith(" (deleted)"):
        path, target = fd2, fd2
        explanation = f"PID {chosen.pid} writes its log to stderr: {fd2}"
    if len(mine) > 1 and pid is None:
        explanation += f" ({len(mine)} of your servers found; newest chosen)"
    return DiscoveredLog(chosen.pid, path, explanation, target, tuple(candidates), len(mine))


async def running_servers(host: Host) -> list[ServerSummary]:
    """Every SGLang server running on ``host`` (``ps``, then :func:`summarize_servers`), newest first, specdash's
    own process left out on this machine. Raises HostError when the host cannot be reached."""
    result = await host.run(_PS_COMMAND, timeout_s=15)
    _, _, table = result.stdout.partition("\n")
    return await summarize_servers(host, parse_ps(table, own_pid=os.getpid() if host.is_local else None))


async def summarize_servers(host: Host, candidates: tuple[ServerProcess, ...] | list[ServerProcess]
                            ) -> list[ServerSummary]:
    """Port, model and log file of each candidate (one ``host.run`` reading ``/proc/PID/fd/1`` and ``fd/2`` of
    all). The port and model come from the command line as ``ps`` shows it, read by SGLang's argparse rules
    (:func:`specdash.sglang.command_edit.flag_value`). Raises HostError when the host cannot be reached."""
    if not candidates:
        return []
    q = shlex.quote
    script = "; ".join(f"echo \"$(readlink {q(f'/proc/{c.pid}/fd/1')})|$(readlink {q(f'/proc/{c.pid}/fd/2')})\""
                       for c in candidates)
    out = await host.run(script, timeout_s=15)
    targets = out.stdout.split("\n")
    return [summary_of(proc, targets[i] if i < len(targets) else "") for i, proc in enumerate(candidates)]


async def still_running(host: Host, procs: list[ServerProcess]) -> set[int]:
    """The PIDs of ``procs`` that still run the same command line (``ps -ww -o pid=,args= -p PID,...``): a server
    that exited, became a zombie or whose PID now belongs to another program is not in the set. Raises HostError
    when the host cannot be reached."""
    if not procs:
        return set()
    pids = ",".join(str(int(p.pid)) for p in procs)
    result = await host.run(f"ps -ww -o pid=,args= -p {pids}", timeout_s=15)
    rows: dict[int, str] = {}
    for row in result.stdout.splitlines():
        pid, _, args = row.strip().partition(" ")
        if pid.isdigit():
            rows[int(pid)] = args.strip()
    return {p.pid for p in procs if rows.get(p.pid) == p.args.strip()}


def summary_of(proc: ServerProcess, readlinks: str) -> ServerSummary:
    """The :class:`ServerSummary` of ``proc`` from ``readlinks`` (``FD1_TARGET|FD2_TARGET``, what
    :func:`summarize_servers` reads). Never raises: what cannot be read is unknown."""
    from specdash.sglang.command_edit import flag_value, launch_port

    fd1, _, fd2 = readlinks.partition("|")
    path, note = explain_target(proc.pid, fd1.strip())
    fd2 = fd2.strip()
    if path is None and fd2.startswith("/") and not fd2.startswith("/dev/") and not fd2.endswith(" (deleted)"):
        path, note = fd2, f"PID {proc.pid} writes its log to stderr: {fd2}"
    launch = any(m in proc.args for m in _SERVER_MARKERS)
    try:
        port = launch_port(proc.args) if launch else None
        model = flag_value(proc.args, "--model-path") if launch else None
    except Exception:  # noqa: BLE001 - a command line argparse cannot read: unknown, never a guess
        port, model = None, None
    return ServerSummary(proc, port, model if isinstance(model, str) else None, path, note)


def _ago(seconds: int) -> str:
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    if seconds < 86400:
        return f"{seconds // 3600} h {seconds % 3600 // 60} min ago"
    return f"{seconds // 86400} d ago"


#: :func:`log_writer` answers: a running SGLang server writes the file / none does / cannot tell
WRITER_LIVE, WRITER_NONE, WRITER_UNKNOWN = "live", "none", "unknown"


def _glob_literal(text: str) -> str:
    """``text`` as a ``find -lname`` pattern that matches only itself (``*``, ``?``, ``[`` and ``\\`` escaped)."""
    return "".join("\\" + c if c in "*?[\\" else c for c in text)


async def held_open_for_writing(host: Host, path: str) -> bool | None:
    """Does any process on ``host`` hold the file ``path`` (resolved with ``readlink -f``) open for writing? A log
    being written is held open by its writer: ``> file``, ``| tee file``, ``nohup``. True when a descriptor of it
    has write access (``/proc/PID/fdinfo/N`` flags with ``O_WRONLY`` or ``O_RDWR``; readers such as specdash's own
    ``tail`` do not count); False when none has and every process's descriptors could be read; None when that
    cannot be told (another user's processes, no ``/proc``, the command failed). Raises
    :class:`~specdash.hosts.base.HostError` when the host cannot be reached."""
    real = (await host.run(f"readlink -f {shlex.quote(path)}", timeout_s=15)).stdout.strip()
    if not real.startswith("/"):
        return None
    # only a find that knows -lname and -readable (GNU) can say "nobody": any other answers nothing (None)
    command = ("find /proc/self -maxdepth 0 -readable -lname x >/dev/null 2>&1 || exit 0; "
               f"for f in $(find /proc/[0-9]*/fd -maxdepth 1 -lname {shlex.quote(_glob_literal(real))} "
               "2>/dev/null); do sed -n \"s|^flags:[[:space:]]*|$f |p\" \"${f%/fd/*}/fdinfo/${f##*/}\" 2>/dev/null; "
               "done; echo scanned; find /proc/[0-9]*/fd -maxdepth 0 ! -readable 2>/dev/null | head -n 1 | "
               "sed 's/^/unreadable /'")
    result = await host.run(command, timeout_s=30)
    lines = result.stdout.splitlines()
    if "scanned" not in lines:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) == 2 and fields[0].startswith("/proc/"):
            try:
                if int(fields[1], 8) & (os.O_WRONLY | os.O_RDWR):
                    return True
            except ValueError:
                continue
    return None if any(line.startswith("unreadable ") for line in lines) else False


async def log_writer(host: Host, path: str) -> tuple[str, int | None]:
    """Does a running SGLang server write ``path`` (its stdout or stderr is that file)? Returns ``(answer, pid)``:
    ``("live", PID)``; ``("none", None)`` when no server runs on ``host``, or every server's output goes to another
    known file, or when no process holds ``path`` open for writing (:func:`held_open_for_writing`: an old log);
    ``("unknown", None)`` when some server's output cannot be read (another user's process, a pipe such as
    ``| tee``), none is known to write ``path`` and something may hold it open for writing. Reads ``ps``,
    ``readlink -f PATH``, ``/proc/PID/fd/1|2`` and ``/proc/*/fdinfo`` through ``host.run``. Raises
    :class:`~specdash.hosts.base.HostError` when the host cannot be reached."""
    result = await host.run(_PS_COMMAND, timeout_s=15)
    _, _, table = result.stdout.partition("\n")
    candidates = parse_ps(table, own_pid=os.getpid() if host.is_local else None)
    if not candidates:
        return WRITER_NONE, None
    real = await host.run(f"readlink -f {shlex.quote(path)}", timeout_s=15)
    wanted = {path, real.stdout.strip()} - {""}
    summaries = await summarize_servers(host, candidates)
    for summary in summaries:
        if summary.log is not None and summary.log in wanted:
            return WRITER_LIVE, summary.process.pid
    if any(summary.log is None for summary in summaries) and await held_open_for_writing(host, path) is not False:
        return WRITER_UNKNOWN, None  # a server writes to a pipe, and something (tee?) may write this file
    return WRITER_NONE, None
