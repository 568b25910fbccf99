"""Launch a server command on a host, detached in its own session and process group, logging to a run dir."""

from __future__ import annotations

import json
import logging
import secrets
import shlex
import time

from specdash.hosts.base import Host, HostError, quote
from specdash.server.run_handle import RunHandle

_log = logging.getLogger(__name__)

#: SGLang's default HTTP port (server_args.py ``port: int = 30000``).
DEFAULT_PORT = 30000


def port_of_command(command: str) -> int:
    """The HTTP port of an SGLang command line: ``--port N`` / ``--port=N``, else 30000 (SGLang's default).

    Unparsable shell text (unbalanced quotes) gives the default.
    """
    try:
        words = shlex.split(command)
    except ValueError:
        return DEFAULT_PORT
    for i, word in enumerate(words):
        value = None
        if word == "--port" and i + 1 < len(words):
            value = words[i + 1]
        elif word.startswith("--port="):
            value = word.split("=", 1)[1]
        if value is not None and value.isdigit():
            return int(value)
    return DEFAULT_PORT


def _launch_script(command: str, run_dir: str | None, base_name: str, run_id: str, port: int,
                   started_at_s: float) -> str:
    """POSIX sh text that makes the run dir, starts the wrapper with setsid/nohup and prints its facts."""
    if run_dir:
        pick_dir = f"d={quote(run_dir)}"
    else:
        pick_dir = (
            'runs="${SPECDASH_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/specdash}/runs"; '
            f'b="$runs/{base_name}"; d="$b"; n=2; '
            'while [ -e "$d" ]; do d="$b-$n"; n=$((n+1)); done'
        )
    # the wrapper records its PID, runs the command, and records the exit status if the command ends by itself
    wrapper = 'echo $$ > "$SPECDASH_RUN_DIR/leader.pid"; eval "$1"; echo $? > "$SPECDASH_RUN_DIR/exit_status"'
    info = {"run_id": run_id, "command": command, "port": port, "started_at_s": started_at_s}
    return (
        f"{pick_dir}; "
        'mkdir -p "$d" || exit 97; d=$(cd "$d" && pwd); '
        f'printf "%s\\n" {quote(command)} > "$d/command.txt"; '
        f'printf "%s\\n" {quote(json.dumps(info))} > "$d/run.json"; '
        f'SPECDASH_RUN_ID={quote(run_id)} SPECDASH_RUN_DIR="$d" '
        f'setsid nohup sh -c {quote(wrapper)} specdash-run {quote(command)} '
        '> "$d/server.log" 2>&1 < /dev/null & '
        'i=0; while [ ! -s "$d/leader.pid" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; '
        'pid=$(cat "$d/leader.pid" 2>/dev/null); '
        'pg=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d " "); '
        'printf "run_dir=%s\\nleader_pid=%s\\npgid=%s\\n" "$d" "$pid" "$pg"'
    )


async def launch(host: Host, command: str, *, run_dir: str | None = None) -> RunHandle:
    """Start ``command`` (a POSIX shell command line) on ``host`` detached from specdash.

    The command runs under ``setsid nohup`` in a new session and process group whose leader is a small ``sh``
    wrapper; stdout and stderr go to ``<run_dir>/server.log``; stdin is /dev/null. ``run_dir`` defaults to
    ``<state dir>/runs/<YYYYmmdd-HHMMSS>-<port>`` on the host (``-2``, ``-3``... appended if taken), where the
    state dir follows :func:`specdash.paths.state_dir`'s rule evaluated in the host's environment:
    ``$SPECDASH_STATE_DIR``, else ``${XDG_STATE_HOME:-~/.local/state}/specdash``. The server keeps running
    when specdash exits or the SSH connection drops.

    Returns a :class:`RunHandle` once the leader PID is known (it does not wait for the server to be ready: poll
    :func:`specdash.server.server_status`). Raises HostError when the run dir cannot be made or the wrapper
    did not start.
    """
    port = port_of_command(command)
    base_name = time.strftime("%Y%m%d-%H%M%S") + f"-{port}"
    run_id = f"{base_name}-{secrets.token_hex(4)}"
    started_at_s = time.time()
    _log.info("launch on %s (run %s): %s", host.name, run_id, command)
    result = await host.run(_launch_script(command, run_dir, base_name, run_id, port, started_at_s), timeout_s=30)
    facts = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
    if result.exit_status == 97:
        raise HostError(f"cannot create the run directory on {host.name}: {result.stderr.strip()}")
    leader = facts.get("leader_pid", "")
    if not leader.isdigit():
        detail = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else "no leader PID"
        raise HostError(f"launch on {host.name} failed: {detail}")
    pgid = facts.get("pgid", "")
    directory = facts["run_dir"]
    _log.info("launched on %s: leader PID %s, process group %s, run dir %s", host.name, leader, pgid or leader,
              directory)
    return RunHandle(
        host_name=host.name,
        command=command,
        run_id=run_id,
        run_dir=directory,
        log_path=directory.rstrip("/") + "/server.log",
        leader_pid=int(leader),
        # setsid made the leader its own group; if it already exited ps printed nothing
        pgid=int(pgid) if pgid.isdigit() else int(leader),
        port=port,
        started_at_s=started_at_s,
    )
