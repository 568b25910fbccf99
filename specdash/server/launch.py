"""Launch a server command on a host, detached in its own session and process group, logging to a run dir."""

from __future__ import annotations

import json
import secrets
import time

from specdash.hosts.base import Host, HostError, quote
from specdash.log import get_logger
from specdash.server.run_handle import RunHandle
from specdash.sglang.command_edit import DEFAULT_PORT, launch_port
from specdash.text.redaction import redact_text

_log = get_logger(__name__)

__all__ = ["DEFAULT_PORT", "launch"]


def _launch_script(command: str, run_dir: str | None, base_name: str, run_id: str, port: int,
                   started_at_s: float, sweep_config: str = "") -> str:
    """POSIX sh text that makes the run dir (0700, files 0600), stores the command read from stdin, starts the
    wrapper with setsid/nohup and prints its facts.

    The exact command (it may set ``HF_TOKEN=...``) is never on a command line: it arrives on the script's stdin
    and is kept in ``command.sh`` (0600), which the wrapper evals; ``ps`` on the host shows
    ``sh -c <wrapper> specdash-run``, then the server's own argv (its environment is readable only by its
    owner). ``command.txt`` and ``run.json`` hold the redacted command (:mod:`specdash.text.redaction`).
    """
    if run_dir:
        pick_dir = f"d={quote(run_dir)}"
    else:
        pick_dir = (
            'runs="${SPECDASH_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/specdash}/runs"; '
            f'b="$runs/{base_name}"; d="$b"; n=2; '
            'while [ -e "$d" ]; do d="$b-$n"; n=$((n+1)); done'
        )
    wrapper = launch_wrapper()
    shown = redact_text(command)
    info: dict[str, object] = {"run_id": run_id, "command": shown, "port": port, "started_at_s": started_at_s}
    if sweep_config:
        info["sweep_config"] = sweep_config
    return (
        f"SPECDASH_UMASK=$(umask); umask 077; {pick_dir}; "
        'mkdir -p "$d" && chmod 700 "$d" || exit 97; d=$(cd "$d" && pwd); '
        'cat > "$d/command.sh" || exit 97; '
        f'printf "%s\\n" {quote(shown)} > "$d/command.txt"; '
        f'printf "%s\\n" {quote(json.dumps(info))} > "$d/run.json"; '
        f'SPECDASH_RUN_ID={quote(run_id)} SPECDASH_RUN_DIR="$d" SPECDASH_UMASK="$SPECDASH_UMASK" '
        f'setsid nohup sh -c {quote(wrapper)} specdash-run '
        '> "$d/server.log" 2>&1 < /dev/null & '
        'i=0; while [ ! -s "$d/leader.pid" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; '
        'pid=$(cat "$d/leader.pid" 2>/dev/null); '
        'pg=$(ps -o pgid= -p "$pid" 2>/dev/null | tr -d " "); '
        'printf "run_dir=%s\\nleader_pid=%s\\npgid=%s\\n" "$d" "$pid" "$pg"'
    )


#: how the launch wrapper's script begins (the process group leader's ``sh -c`` argument)
_WRAPPER_START = 'echo $$ > "$SPECDASH_RUN_DIR/leader.pid"'
#: what the launch wrapper is, for the user (its raw shell text means nothing to them); the PGID follows
LAUNCH_SHELL_LABEL = "specdash's launch shell of the server, leader of process group"


def launch_wrapper() -> str:
    """The ``sh -c`` text that leads a launched server's process group (run with ``$SPECDASH_RUN_DIR`` and
    ``$SPECDASH_UMASK`` set): it records its PID in ``leader.pid``, runs ``command.sh`` under the user's umask
    (the run files are made under umask 077) and, when the command ends by itself, writes its exit status to
    ``exit_status``.

    The command is eval'd as the file has it: ``$(cat file)`` alone strips the final newline, and a command whose
    last line ends in a backslash (a continuation onto nothing) would then hand the program a literal ``\\``
    argument (argparse: ``error: unrecognized arguments: \\``); the ``.`` printed after the file keeps its
    newlines and is cut off again."""
    return (f'{_WRAPPER_START}; c=$(cat "$SPECDASH_RUN_DIR/command.sh"; echo .); c=${{c%.}}; '
            'umask "$SPECDASH_UMASK"; unset SPECDASH_UMASK; eval "$c"; '
            's=$?; umask 077; echo $s > "$SPECDASH_RUN_DIR/exit_status"')


def is_launch_shell(args: str) -> bool:
    """True when ``args`` (a process's command line, as ``ps -o args`` shows it, possibly cut) is the ``sh -c``
    wrapper that :func:`launch` starts as the leader of a server's process group."""
    words = args.split(None, 2)
    return len(words) == 3 and words[0].rsplit("/", 1)[-1] in ("sh", "dash", "bash") and words[1] == "-c" \
        and words[2].startswith(_WRAPPER_START[:30])


async def launch(host: Host, command: str, *, flag_release: str | None = None,
                 run_dir: str | None = None, sweep_config: str = "") -> RunHandle:
    """Start ``command`` (a POSIX shell command line) on ``host`` detached from specdash.

    The command runs under ``setsid nohup`` in a new session and process group whose leader is a small ``sh``
    wrapper; the command reaches the host on stdin, never on a command line (see :func:`_launch_script`); the run
    dir is 0700 and its files 0600; stdout and stderr go to ``<run_dir>/server.log``; stdin is /dev/null.
    ``run_dir`` defaults to ``<state dir>/runs/<YYYYmmdd-HHMMSS>-<port>`` on the host (``-2``, ``-3``... appended
    if taken), where the state dir follows :func:`specdash.paths.state_dir`'s rule evaluated in the host's environment:
    ``$SPECDASH_STATE_DIR``, else ``${XDG_STATE_HOME:-~/.local/state}/specdash``. The server keeps running
    when specdash exits or the SSH connection drops.

    The recorded port (run dir name, ``run.json``, ``RunHandle.port``: what the status probe, the SSH forward and
    the benchmarks use) is the one SGLang's argparse of flag-table ``flag_release`` (None: the newest) will give the
    command, abbreviations included (:func:`specdash.sglang.command_edit.launch_port`). ``sweep_config``: the
    name of the depth sweep configuration this launch runs (``chain-5``; "" for none), kept in ``run.json`` so a
    console that re-attaches the server can say it runs a sweep configuration.

    Returns a :class:`RunHandle` once the leader PID is known (it does not wait for the server to be ready: poll
    :func:`specdash.server.server_status`). Raises HostError when the run dir cannot be made or the wrapper
    did not start.
    """
    port = launch_port(command, flag_release)
    base_name = time.strftime("%Y%m%d-%H%M%S") + f"-{port}"
    run_id = f"{base_name}-{secrets.token_hex(4)}"
    started_at_s = time.time()
    _log.info("launch on %s (run %s): %s", host.name, run_id, redact_text(command))
    result = await host.run(_launch_script(command, run_dir, base_name, run_id, port, started_at_s, sweep_config),
                            timeout_s=30, input=command + "\n")
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
        sweep_config=sweep_config,
    )
