"""Server lifecycle core: launch a server command detached on a host, follow its state, stop and restart it.

Public API (all coroutines take a :class:`specdash.hosts.base.Host`; nothing here imports Textual):

- :func:`launch` → :class:`RunHandle` (run dir, log path, leader PID, PGID, port)
- :func:`stop` → :class:`StopResult` (SIGTERM the group, SIGKILL after ``grace_s``)
- :func:`restart` → :class:`RestartResult` (stop, wait for GPU memory release, relaunch)
- :func:`server_status` / :func:`wait_for_state` → :class:`ServerStatus` (:class:`ServerState`)
- :func:`probe`, :func:`probe_http`, :func:`probe_via_host` → :class:`HttpProbe`
- :func:`find_runs` → earlier runs on a host, newest first (rediscovery after specdash restarts)
"""

from specdash.server.launch import DEFAULT_PORT, launch
from specdash.server.probe import HttpProbe, probe, probe_http, probe_via_host
from specdash.server.restart import GpuMemoryHeldBy, restart, wait_gpu_released
from specdash.server.run_handle import RestartResult, RunHandle, StopResult
from specdash.server.runs import find_runs
from specdash.server.status import ServerState, ServerStatus, server_status, wait_for_state
from specdash.server.stop import stop

__all__ = [
    "DEFAULT_PORT",
    "GpuMemoryHeldBy",
    "HttpProbe",
    "RestartResult",
    "RunHandle",
    "ServerState",
    "ServerStatus",
    "StopResult",
    "find_runs",
    "launch",
    "probe",
    "probe_http",
    "probe_via_host",
    "restart",
    "server_status",
    "stop",
    "wait_for_state",
    "wait_gpu_released",
]
