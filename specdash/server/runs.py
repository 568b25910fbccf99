"""Find the runs specdash launched earlier on a host (after specdash itself was restarted)."""

from __future__ import annotations

import json

from specdash.hosts.base import Host
from specdash.server.run_handle import RunHandle

_SCRIPT = (
    'runs="${SPECDASH_STATE_DIR:-${XDG_STATE_HOME:-$HOME/.local/state}/specdash}/runs"; '
    '[ -d "$runs" ] || exit 0; '
    'for d in "$runs"/*/; do d="${d%/}"; [ -f "$d/run.json" ] || continue; '
    'printf "%s\\t%s\\t%s\\n" "$d" "$(cat "$d/leader.pid" 2>/dev/null)" "$(head -n 1 "$d/run.json")"; done'
)


async def find_runs(host: Host, *, limit: int = 50) -> list[RunHandle]:
    """Runs recorded under ``<state dir>/runs`` on ``host`` (see :func:`specdash.server.launch`), newest first (at most
    ``limit``). Each is a :class:`RunHandle` rebuilt from ``run.json`` and ``leader.pid``; whether it still runs
    is for :func:`specdash.server.server_status` to say. Directories without a readable record are skipped.
    Raises HostError when the host cannot be reached."""
    result = await host.run(_SCRIPT, timeout_s=20)
    handles = []
    for line in result.stdout.splitlines():
        parts = line.split("\t", 2)
        if len(parts) != 3 or not parts[1].strip().isdigit():
            continue
        directory, leader, record = parts[0], int(parts[1]), parts[2]
        try:
            info = json.loads(record)
            handles.append(RunHandle(
                host_name=host.name, command=str(info["command"]), run_id=str(info["run_id"]),
                run_dir=directory, log_path=directory + "/server.log", leader_pid=leader, pgid=leader,
                port=int(info["port"]), started_at_s=float(info["started_at_s"]),
                sweep_config=str(info.get("sweep_config") or ""),
            ))
        except (ValueError, KeyError, TypeError):
            continue
    handles.sort(key=lambda h: (h.started_at_s, h.run_dir), reverse=True)
    return handles[:limit]
