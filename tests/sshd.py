"""A real OpenSSH sshd for the tests, on 127.0.0.1 and a free port, with everything in a temp dir.

Layout of ``root``: ``host_ed25519_key`` (+ ``.pub``), ``client_ed25519_key`` (+ ``.pub``), ``authorized_keys``,
``known_hosts`` (trusting the host key as ``[127.0.0.1]:PORT``), ``ssh_config`` (aliases below), ``sshd_config``,
``sshd.log`` (sshd -e output) and ``gpu-state.json`` (named by FAKE_NVIDIA_SMI_STATE in sessions).

ssh_config aliases: ``specdash-test`` (direct) and ``specdash-jump-test`` (ProxyJump through ``specdash-test``, i.e.
the same sshd, to itself).

The sshd runs as ``sshd -D -e -f CONFIG`` in its own process group. Each connection is served by a child sshd that
calls setsid() (its own session and process group), so killing the listener's group leaves open connections
alive — as on a real server. :meth:`SshdServer.kill` therefore also SIGKILLs those children (all descendants of
the sshd we started, by PID) when a test wants the link to die, and :meth:`freeze_sessions` SIGSTOPs them to make
a dead-but-open link that only keepalive can notice.
"""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import psutil
from support.guard import guard

SSHD = "/usr/sbin/sshd"
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
ALIAS = "specdash-test"
JUMP_ALIAS = "specdash-jump-test"


def missing_reason() -> str | None:
    """Why the sshd fixture cannot run here (None when it can)."""
    if not os.path.exists(SSHD):
        return f"{SSHD} is not installed (apt-get install -y openssh-server)"
    if not os.path.exists(SSH_KEYGEN):
        return "ssh-keygen is not installed (openssh-client)"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def keygen(path: Path, comment: str) -> Path:
    """Make an ed25519 key pair at ``path`` / ``path.pub`` with no passphrase."""
    subprocess.run(
        [SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        check=True, stdout=subprocess.DEVNULL,
    )
    return path


def fingerprint(pub_path: Path) -> str:
    """SHA256 fingerprint as ``ssh-keygen -l`` prints it, e.g. ``SHA256:abc...``."""
    out = subprocess.run([SSH_KEYGEN, "-l", "-E", "sha256", "-f", str(pub_path)], check=True,
                         capture_output=True, text=True).stdout
    return out.split()[1]


class SshdServer:
    """The running test sshd. Attributes: ``host`` (127.0.0.1), ``port``, ``user``, ``root`` (temp dir),
    ``client_key``, ``host_key`` (private key path; ``.pub`` beside it), ``known_hosts``, ``ssh_config``,
    ``gpu_state``, ``log_path``, ``pid`` (the listener, leader of its process group)."""

    def __init__(self, root: Path, repo: Path) -> None:
        self.root, self.repo = root, repo
        self.host = "127.0.0.1"
        self.user = getpass.getuser()
        self.port = free_port()
        self.host_key = keygen(root / "host_ed25519_key", "specdash-test-host")
        self.client_key = keygen(root / "client_ed25519_key", "specdash-test-client")
        (root / "authorized_keys").write_text((root / "client_ed25519_key.pub").read_text())
        self.known_hosts = root / "known_hosts"
        self.known_hosts.write_text(self.known_hosts_line(self.host_key))
        self.gpu_state = root / "gpu-state.json"
        self.ssh_config = root / "ssh_config"
        self.log_path = root / "sshd.log"
        self.sshd_config = root / "sshd_config"
        self._write_configs()
        self._proc: subprocess.Popen | None = None
        self._log = None

    # -- files ------------------------------------------------------------------------------------
    def known_hosts_line(self, host_key: Path) -> str:
        """The known_hosts entry trusting ``host_key`` for this server (``[127.0.0.1]:PORT TYPE BASE64``)."""
        key_type, key_b64 = (host_key.with_suffix(".pub") if host_key.suffix != ".pub" else host_key) \
            .read_text().split()[:2]
        return f"[{self.host}]:{self.port} {key_type} {key_b64}\n"

    def make_second_host_key(self) -> Path:
        """A new ed25519 host key that this sshd does NOT use (for the changed-key test); returns the private
        key path (``.pub`` beside it)."""
        index = len(list(self.root.glob("other_host_key_*.pub")))
        return keygen(self.root / f"other_host_key_{index}", "specdash-other-host")

    def _write_configs(self) -> None:
        path_env = f"{self.repo / 'tests' / 'fakes' / 'bin'}:{os.environ.get('PATH', '/usr/bin:/bin')}"
        self.sshd_config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    f"ListenAddress {self.host}",
                    f"HostKey {self.host_key}",
                    f"PidFile {self.root / 'sshd.pid'}",
                    f"AuthorizedKeysFile {self.root / 'authorized_keys'}",
                    "UsePAM no",
                    "StrictModes no",
                    "PermitRootLogin prohibit-password",
                    "PubkeyAuthentication yes",
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "AllowTcpForwarding yes",
                    "X11Forwarding no",
                    "PrintMotd no",
                    "UseDNS no",
                    "MaxStartups 100",
                    "MaxSessions 100",
                    "LogLevel VERBOSE",
                    # SHLVL=1: bash then skips ~/.bashrc for ssh commands (bash sources it only when
                    # SHLVL < 2); this machine's root .bashrc runs `pyenv init` (0.8 s per command).
                    # each assignment quoted: the checkout's path may hold spaces
                    f'SetEnv "PATH={path_env}" "FAKE_NVIDIA_SMI_STATE={self.gpu_state}" '
                    f'"PYTHONPATH={self.repo / "tests" / "double"}" SHLVL=1',
                    "",
                ]
            )
        )
        common = [
            f"  HostName {self.host}",
            f"  Port {self.port}",
            f"  User {self.user}",
            f"  IdentityFile {self.client_key}",
            "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {self.known_hosts}",
            "  StrictHostKeyChecking yes",
        ]
        self.ssh_config.write_text(
            "\n".join([f"Host {ALIAS}", *common, f"Host {JUMP_ALIAS}", *common, f"  ProxyJump {ALIAS}", ""])
        )

    # -- process ----------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def start(self, timeout_s: float = 10.0) -> None:
        """Start ``sshd -D -e -f CONFIG`` in its own process group and wait until it answers with its banner."""
        if self.pid is not None:
            return
        try:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation dir (needed as root)
        except OSError:
            pass  # not root: sshd runs unprivileged and only serves this user
        self._log = open(self.log_path, "ab")
        self._proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", str(self.sshd_config)],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + guard(timeout_s)
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"sshd exited with {self._proc.returncode}: {self.log_tail()}")
            try:
                with socket.create_connection((self.host, self.port), timeout=1) as sock:
                    if sock.recv(64).startswith(b"SSH-2.0"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"sshd did not answer on port {self.port} within {timeout_s} s: {self.log_tail()}")

    def session_pids(self) -> list[int]:
        """PIDs of the sshd processes serving connections (descendants of our listener that are sshd itself, not
        the users' commands: those must die on their own when their channel goes, as on a real server)."""
        if self.pid is None:
            return []
        pids = []
        try:
            for child in psutil.Process(self.pid).children(recursive=True):
                try:
                    if child.name().startswith("sshd"):
                        pids.append(child.pid)
                except psutil.NoSuchProcess:
                    pass
        except psutil.NoSuchProcess:
            return []
        return pids

    def freeze_sessions(self) -> list[int]:
        """SIGSTOP the per-connection sshd processes: open TCP links that no longer answer (a dead network
        path, as far as the client can tell). Returns the PIDs stopped; :meth:`kill` ends them."""
        pids = self.session_pids()
        for pid in pids:
            _signal(pid, signal.SIGSTOP)
        return pids

    def kill(self, *, sessions: bool = True) -> None:
        """SIGKILL the listener's process group and, when ``sessions``, the sshd processes serving connections
        (the links die: the client sees TCP close; the users' commands are left to die on their own as their
        channels close). Waits for the listener to be gone."""
        if self._proc is None:
            return
        descendants = self.session_pids() if sessions else []
        try:
            os.killpg(self._proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in descendants:
            _signal(pid, signal.SIGKILL)
        self._proc.wait(timeout=10)
        self._proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def kill_pids(self, pids: list[int]) -> None:
        """SIGKILL PIDs this fixture reported (from :meth:`freeze_sessions` / :meth:`session_pids`)."""
        for pid in pids:
            _signal(pid, signal.SIGKILL)

    def restart(self) -> None:
        """Kill (listener and sessions) and start again on the same port with the same host key."""
        self.kill()
        self.start()

    def log_tail(self, n_lines: int = 20) -> str:
        try:
            return " | ".join(self.log_path.read_text(errors="replace").splitlines()[-n_lines:])
        except OSError:
            return "(no log)"

    # -- clients ----------------------------------------------------------------------------------
    def make_host(self, **kwargs):
        """An :class:`~specdash.hosts.ssh.SSHHost` for ``user@127.0.0.1:PORT`` with the client key, this
        server's known_hosts and ssh_config; keyword arguments override (e.g. ``known_hosts=...``, short
        keepalive or backoff for tests)."""
        from specdash.hosts.ssh import SSHHost

        options = dict(
            port=self.port,
            username=self.user,
            identity_file=str(self.client_key),
            known_hosts=str(self.known_hosts),
            config_file=str(self.ssh_config),
            # a first connection is not retried (the user sees why at once): on a loaded machine the handshake with
            # this sshd can take longer than the product's 15 s, which a test must not read as a failure
            connect_timeout_s=guard(15.0),
        )
        options.update(kwargs)
        host = options.pop("host", self.host)
        return SSHHost(host, **options)


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass
