"""What specdash keeps about a server it launched: :class:`RunHandle`, plus the run directory layout.

Run directory on the host (``<state dir>/runs/<YYYYmmdd-HHMMSS>-<port>[-n]/``; state dir as
:func:`specdash.paths.state_dir` says, in the host's environment: ``$SPECDASH_STATE_DIR``, else
``${XDG_STATE_HOME:-~/.local/state}/specdash``):

- ``server.log``   — the server's stdout and stderr
- ``command.txt``  — the command line as launched
- ``run.json``     — ``{"run_id", "command", "port", "started_at_s"}`` (and ``"sweep_config"`` for a depth sweep's
  configuration)
- ``leader.pid``   — PID of the session/process-group leader (a ``sh`` wrapper around the command)
- ``exit_status``  — written by the wrapper when the command exits by itself (absent while running or when the
  group was killed)
- ``stopped``      — written by :func:`specdash.server.stop` before it signals (so "stopped" is told from "crashed")

Every process of the run carries ``SPECDASH_RUN_ID=<run_id>`` in its environment; signals are only sent to a
process group whose live members carry it (a reused PGID is never signalled).
"""

from __future__ import annotations

import dataclasses
import json
import posixpath


@dataclasses.dataclass(frozen=True)
class RunHandle:
    """A launched server.

    ``run_dir``/``log_path`` are absolute paths on the host; ``leader_pid`` is the PID of the session leader and
    ``pgid`` its process group (equal, as the leader was started with ``setsid``); ``port`` is the HTTP port the
    command's ``--port`` gives under SGLang's argparse, abbreviations included, default 30000
    (:func:`specdash.sglang.command_edit.launch_port`); ``started_at_s`` is ``time.time()`` on the machine running
    specdash; ``sweep_config`` the name of the depth sweep configuration the server runs (``chain-5``), "" when
    no sweep launched it.
    """

    host_name: str
    command: str
    run_id: str
    run_dir: str
    log_path: str
    leader_pid: int
    pgid: int
    port: int
    started_at_s: float
    sweep_config: str = ""

    def file(self, name: str) -> str:
        """Path of ``name`` inside the run directory."""
        return posixpath.join(self.run_dir, name)

    def to_json(self) -> str:
        """The handle as one JSON object (for sessions / rediscovery)."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> RunHandle:
        """Inverse of :meth:`to_json`. Raises ValueError/TypeError/KeyError on malformed text."""
        return cls(**json.loads(text))


@dataclasses.dataclass(frozen=True)
class StopResult:
    """Outcome of :func:`specdash.server.stop`.

    ``was_running``: the group had live processes when stop began. ``signals``: names sent to the group, in order
    (``("SIGTERM",)`` or ``("SIGTERM", "SIGKILL")``). ``escalated``: SIGKILL was needed. ``gone``: no live process
    is left in the group. ``refused``: nothing was signalled because the group holds processes specdash did not
    start (PGID reused). ``survivors``: PIDs still alive at the end. ``elapsed_s``: wall time of the stop.
    """

    pgid: int
    was_running: bool
    signals: tuple[str, ...] = ()
    escalated: bool = False
    gone: bool = True
    refused: bool = False
    survivors: tuple[int, ...] = ()
    elapsed_s: float = 0.0

    def describe(self) -> str:
        """One line for the user, e.g. ``stopped process group 4242 with SIGTERM in 1.2 s``."""
        if self.refused:
            return (f"not stopped: process group {self.pgid} now holds processes specdash did not start "
                    f"(PIDs {', '.join(map(str, self.survivors))}); nothing was signalled")
        if not self.was_running:
            return f"process group {self.pgid} had already exited"
        how = " then ".join(self.signals) if self.signals else "no signal"
        if self.gone:
            return f"stopped process group {self.pgid} with {how} in {self.elapsed_s:.1f} s"
        return (f"process group {self.pgid} still has {len(self.survivors)} live process(es) after {how}: "
                f"PIDs {', '.join(map(str, self.survivors))}")


@dataclasses.dataclass(frozen=True)
class RestartResult:
    """Outcome of :func:`specdash.server.restart`.

    ``stop``: the stop's result. ``released``: the old group's GPU memory dropped to 0 MiB within the timeout.
    ``held_mib``: MiB still held by the old group at the end (0 when released). ``new_handle``: the relaunched
    server, or None when not relaunched (memory still held, or the stop was refused).
    """

    stop: StopResult
    released: bool
    held_mib: int
    new_handle: RunHandle | None

    def describe(self) -> str:
        """One line for the user."""
        if self.new_handle is not None:
            return f"restarted: {self.stop.describe()}; new process group {self.new_handle.pgid}"
        if self.stop.refused or not self.stop.gone:
            return f"not restarted: {self.stop.describe()}"
        return (f"not restarted: process group {self.stop.pgid} still holds {self.held_mib} MiB of GPU memory "
                f"after stopping; kill what holds it, then launch again")
