"""The live members of a launched server's process group, read through the Host (``ps`` and /proc).

A member is "ours" when its environment carries ``SPECDASH_RUN_ID=<run id>`` (read from ``/proc/PID/environ``,
Linux). Zombies (state Z) are listed but do not count as alive: they hold no memory and cannot be signalled.
"""

from __future__ import annotations

import dataclasses

from specdash.hosts.base import Host, HostError, quote


@dataclasses.dataclass(frozen=True)
class GroupMember:
    """One process of the group: ``pid``, ``ppid``, ``stat`` (ps STAT, e.g. ``S``, ``Z``), ``ours`` (carries
    the run id) and ``args`` (the command line / process title)."""

    pid: int
    ppid: int
    stat: str
    ours: bool
    args: str

    @property
    def alive(self) -> bool:
        """Not a zombie."""
        return not self.stat.startswith("Z")


def _members_script(pgid: int, run_id: str) -> str:
    marker = quote(f"SPECDASH_RUN_ID={run_id}")
    return (
        f"ps -e -o pid=,ppid=,pgid=,stat=,args= | awk '$3 == {int(pgid)}' | while read -r pid ppid pg st args; do "
        f"if tr '\\000' '\\n' < /proc/$pid/environ 2>/dev/null | grep -qxF {marker}; then o=1; else o=0; fi; "
        f'printf "%s %s %s %s %s\\n" "$pid" "$ppid" "$st" "$o" "$args"; done'
    )


def parse_members(text: str) -> list[GroupMember]:
    """Parse the member listing (``pid ppid stat ours args`` per line); bad lines are skipped."""
    members = []
    for line in text.splitlines():
        parts = line.split(None, 4)
        if len(parts) < 4 or not (parts[0].isdigit() and parts[1].isdigit()):
            continue
        members.append(GroupMember(int(parts[0]), int(parts[1]), parts[2], parts[3] == "1",
                                   parts[4] if len(parts) > 4 else ""))
    return members


async def group_members(host: Host, pgid: int, run_id: str) -> list[GroupMember]:
    """Processes whose process group is ``pgid`` on ``host`` (the ``ps`` process itself excluded).

    Raises HostError when ``ps`` cannot be run.
    """
    result = await host.run(_members_script(pgid, run_id), timeout_s=15)
    if result.exit_status != 0 and not result.stdout:
        raise HostError(f"cannot list processes on {host.name}: {result.stderr.strip() or 'ps failed'}")
    return parse_members(result.stdout)
