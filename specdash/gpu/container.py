"""Is specdash looking at a host from inside a container? (Docker, Podman, LXC/LXD, Kubernetes, systemd-nspawn)

Why it matters for the GPU view: in a container with its own PID namespace the NVIDIA driver reports PIDs of the
*host*; they do not exist here (or are other processes), and processes of other containers hold memory that cannot
be seen or cleaned from here. Evidence read through the Host (one ``sh`` command, locally or over SSH):
``/.dockerenv`` (Docker), ``/run/.containerenv`` (Podman), ``/run/systemd/container`` and ``container=`` in PID 1's
environment (LXC, systemd-nspawn, Podman), and container runtimes named in ``/proc/1/cgroup`` (cgroup v1:
``/docker/…``, ``/kubepods/…``, ``/lxc/…``).
"""

from __future__ import annotations

import dataclasses
import re

from specdash.hosts.base import Host, HostError

CONTAINER_COMMAND = (
    "ls -d /.dockerenv /run/.containerenv 2>/dev/null; echo --; "
    "cat /run/systemd/container 2>/dev/null; echo; echo --; "
    "tr '\\000' '\\n' < /proc/1/environ 2>/dev/null | grep '^container=' ; echo --; "
    "cat /proc/1/cgroup 2>/dev/null"
)
_CGROUP = re.compile(r"/(docker|kubepods|lxc|libpod|containerd|crio|machine\.slice/machine-)")


@dataclasses.dataclass(frozen=True)
class ContainerInfo:
    """``kind`` (``docker``, ``podman``, ``lxc``, ``kubernetes``, ``systemd-nspawn`` or ``container``) and the
    ``evidence`` that says so (e.g. ``/.dockerenv``)."""

    kind: str
    evidence: str

    @property
    def meaning(self) -> str:
        """One line: what being in a container may mean for the GPU view, before any PID was checked (worded as a
        possibility: many containers share the host's PID namespace, and then the driver's PIDs are right)."""
        return (f"specdash sees this host from inside a {self.kind} container ({self.evidence}): the driver may "
                "report host PIDs, which would not exist here or be other processes, and memory held outside this "
                "container can be neither seen nor cleaned from here")

    def checked(self, listed: int, not_here: int) -> str:
        """One line once the driver's ``listed`` PIDs were looked up in this host's process table: ``not_here`` of
        them did not resolve (or named a process holding no GPU device file). With ``listed`` 0 nothing was
        checked and :attr:`meaning` is returned.

        >>> ContainerInfo("docker", "/.dockerenv").checked(2, 0).split(": ", 1)[1][:52]
        'the 2 PIDs the driver lists are processes here; memo'
        """
        if listed <= 0:
            return self.meaning
        head = f"specdash sees this host from inside a {self.kind} container ({self.evidence}): "
        tail = "memory held outside this container can be neither seen nor cleaned from here"
        if not_here <= 0:
            what = f"the {listed} PIDs the driver lists are" if listed != 1 else "the PID the driver lists is"
            return head + f"{what} {'processes' if listed != 1 else 'a process'} here; " + tail
        of = f"{not_here} of the {listed} PIDs" if listed != 1 else "the PID"
        verb = ("do", "name") if not_here != 1 else ("does", "names")
        return head + f"{of} the driver lists {verb[0]} not exist here or {verb[1]} another process (probably host " \
            "PIDs; never signalled), and " + tail

def _kind(name: str) -> str:
    name = name.strip().lower()
    return {"oci": "container", "libpod": "podman", "lxc-libvirt": "lxc", "docker": "docker", "podman": "podman",
            "lxc": "lxc", "systemd-nspawn": "systemd-nspawn", "kubepods": "kubernetes",
            "crio": "kubernetes", "containerd": "container"}.get(name, name or "container")


def parse_container(text: str) -> ContainerInfo | None:
    """Parse :data:`CONTAINER_COMMAND`'s output; None when nothing says "container"."""
    parts = (text.split("--\n") + ["", "", "", ""])[:4]
    files, systemd, environ, cgroup = parts[0], parts[1].strip(), parts[2], parts[3]
    if "/.dockerenv" in files.split():
        return ContainerInfo("docker", "/.dockerenv")
    if "/run/.containerenv" in files.split():
        return ContainerInfo("podman", "/run/.containerenv")
    if systemd:
        return ContainerInfo(_kind(systemd.splitlines()[0]), f"/run/systemd/container says {systemd.splitlines()[0]!r}")
    for line in environ.splitlines():
        if line.startswith("container="):
            return ContainerInfo(_kind(line.split("=", 1)[1]), f"PID 1 has {line.strip()}")
    for line in cgroup.splitlines():
        match = _CGROUP.search(line)
        if match:
            name = match.group(1).rstrip("/").split(".")[0]
            return ContainerInfo(_kind("systemd-nspawn" if name == "machine" else name),
                                 f"/proc/1/cgroup: {line.strip()[:80]}")
    return None


async def detect_container(host: Host) -> ContainerInfo | None:
    """The container ``host``'s commands run in, or None (also when it cannot be told). Never raises."""
    try:
        result = await host.run(CONTAINER_COMMAND, timeout_s=15)
    except HostError:
        return None
    return parse_container(result.stdout)
