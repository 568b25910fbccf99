"""The Host interface: the one door between specdash and the outside world.

Everything that touches a machine — running a command, following a file, sending a
signal — goes through a :class:`Host`. Implementations: :class:`~specdash.hosts.local.LocalHost`
(asyncio subprocesses on this machine) and :class:`~specdash.hosts.ssh.SSHHost` (asyncssh).
A replay host feeds recorded data instead (session package).

No Textual imports here: the core and the headless commands use hosts directly.
"""

from __future__ import annotations

import abc
import asyncio
import dataclasses
import enum
import time
from collections.abc import AsyncGenerator, Callable

from specdash.log import get_logger

_log = get_logger(__name__)

class HostError(Exception):
    """A host operation failed for a reason the user can act on (message is one line)."""


class ConnectionLost(HostError):
    """The connection to the host dropped (or is down right now) while an operation needed it.

    Transient: an :class:`~specdash.hosts.ssh.SSHHost` reconnects by itself with backoff; wait with
    :meth:`Host.wait_connected` and try again."""


class AuthenticationFailed(HostError):
    """The server refused every offered credential (key, agent). Permanent: retrying will not help."""


class HostKeyUnknown(HostError):
    """The server's host key is not in known_hosts.

    Attributes: ``host`` (str), ``port`` (int), ``fingerprint`` (SHA256 string as ``ssh-keygen -l`` prints it),
    ``key_type`` (e.g. ``ssh-ed25519``), ``public_key_line`` (the OpenSSH public key, for appending to known_hosts).
    """

    def __init__(self, host: str, port: int, fingerprint: str, key_type: str, public_key_line: str):
        super().__init__(f"unknown host key for {host}:{port} ({key_type} {fingerprint})")
        self.host, self.port = host, port
        self.fingerprint, self.key_type, self.public_key_line = fingerprint, key_type, public_key_line


class HostKeyChanged(HostError):
    """The server's host key differs from the one in known_hosts: refused, never trusted automatically.

    Attributes (None when unknown): ``host`` (str, the known_hosts name), ``port`` (int), ``fingerprint``
    (SHA256 of the key the server offers now, as ``ssh-keygen -l`` prints it), ``key_type``.
    """

    def __init__(
        self,
        message: str,
        *,
        host: str | None = None,
        port: int | None = None,
        fingerprint: str | None = None,
        key_type: str | None = None,
    ):
        super().__init__(message)
        self.host, self.port, self.fingerprint, self.key_type = host, port, fingerprint, key_type


class ConnState(str, enum.Enum):
    """Connection states shown in the header."""

    CONNECTING = "connecting"
    CONNECTED = "connected"
    RETRYING = "retrying"
    FAILED = "failed"


@dataclasses.dataclass(frozen=True)
class ConnectionStatus:
    """A snapshot of a host's connection: ``state``, a one-line ``detail`` and, when retrying,
    the monotonic time (``time.monotonic()`` seconds) of the next attempt."""

    state: ConnState
    detail: str = ""
    retry_at: float | None = None

    def describe(self) -> str:
        """Human text: ``connected``, ``retrying in 4 s (connection lost)``, ``failed: reason``."""
        if self.state is ConnState.RETRYING and self.retry_at is not None:
            wait_s = max(0, round(self.retry_at - time.monotonic()))
            text = f"retrying in {wait_s} s"
            return f"{text} ({self.detail})" if self.detail else text
        if self.state is ConnState.FAILED:
            return f"failed: {self.detail}" if self.detail else "failed"
        return self.state.value


@dataclasses.dataclass(frozen=True)
class CommandResult:
    """Result of :meth:`Host.run`: exit status (int; -1 when killed by timeout), stdout and stderr (str,
    decoded as UTF-8 with replacement)."""

    exit_status: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit_status == 0


StateListener = Callable[[ConnectionStatus], None]


class Host(abc.ABC):
    """A machine specdash works on.

    Commands are POSIX ``sh`` command lines (the remote login shell for SSH). All methods are coroutines
    and raise :class:`HostError` (one-line message) when the host cannot be reached.
    """

    #: Short display name, e.g. ``local`` or ``alice@gpu-box:22``.
    name: str = "host"
    #: True when the host is this machine (NVML may be used directly).
    is_local: bool = False

    def __init__(self) -> None:
        self._status = ConnectionStatus(ConnState.CONNECTING)
        self._listeners: list[StateListener] = []
        self._status_waiters: list[asyncio.Future[None]] = []

    # -- connection state -------------------------------------------------------------------------
    @property
    def status(self) -> ConnectionStatus:
        """Current :class:`ConnectionStatus`."""
        return self._status

    def add_state_listener(self, listener: StateListener) -> None:
        """Call ``listener(status)`` on every connection state change (from the event loop)."""
        self._listeners.append(listener)

    def remove_state_listener(self, listener: StateListener) -> None:
        """Stop calling ``listener`` (no error when it was not registered)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _set_status(self, status: ConnectionStatus) -> None:
        _log.info("connection %s: %s", self.name, status.describe())
        self._status = status
        waiters, self._status_waiters = self._status_waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        for listener in list(self._listeners):
            listener(status)

    def mark_failed(self, reason: str) -> None:
        """Mark the connection FAILED with ``reason`` (one line), e.g. when the user refused an unknown host key:
        listeners and :meth:`wait_connected` waiters learn it as from the host itself."""
        self._set_status(ConnectionStatus(ConnState.FAILED, reason))

    async def wait_connected(self, timeout_s: float | None = None) -> None:
        """Return once the host is CONNECTED (at once when it already is).

        Raises HostError with the reason when the state becomes FAILED (a permanent failure: changed or
        unknown host key, authentication refused, or :meth:`close` was called), and TimeoutError after
        ``timeout_s`` seconds (None: wait as long as it takes).
        """
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        while True:
            state = self._status.state
            if state is ConnState.CONNECTED:
                return
            if state is ConnState.FAILED:
                raise HostError(self._status.detail or "connection failed")
            waiter: asyncio.Future[None] = loop.create_future()
            self._status_waiters.append(waiter)
            remaining = None if deadline is None else max(0.0, deadline - loop.time())
            try:
                await asyncio.wait_for(waiter, remaining)
            except asyncio.TimeoutError:
                raise TimeoutError(f"{self.name}: not connected after {timeout_s:g} s") from None

    # -- lifecycle --------------------------------------------------------------------------------
    @abc.abstractmethod
    async def connect(self) -> None:
        """Open the connection (no-op for local). Raises HostKeyUnknown / HostKeyChanged / HostError."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Close the connection and stop everything started through it (streams, not launched servers)."""

    # -- operations -------------------------------------------------------------------------------
    @abc.abstractmethod
    async def run(self, command: str, timeout_s: float = 30.0, input: str | None = None) -> CommandResult:
        """Run ``command`` to completion; return its exit status, stdout and stderr.

        ``input`` becomes the command's stdin (small text; never passed on a command line, so a secret in it does
        not show in ``ps`` on the host). On timeout the command is killed and
        ``CommandResult(-1, partial stdout, "timeout after N s")`` returned.
        """

    @abc.abstractmethod
    def stream(self, command: str) -> AsyncGenerator[bytes, None]:
        """Yield the stdout of a long-running ``command`` line by line, as raw bytes including the ``\\n``
        (a last partial line is yielded without it when the command ends). Closing the iterator (``aclose``,
        or leaving an ``async for``) stops the command: it never outlives the stream. Raises ConnectionLost
        (a HostError) when the connection drops mid-stream.

        The command reads /dev/null and its stderr is discarded. It runs in its own process group under the
        wrapper of :mod:`specdash.hosts.wrapper`, which kills that group when the stream's stdin pipe closes:
        when the stream is closed, the connection drops, or specdash dies (even by SIGKILL)."""

    async def file_size(self, path: str) -> int | None:
        """Size of ``path`` in bytes, or None when it does not exist."""
        result = await self.run(f"stat -c %s -- {quote(path)} 2>/dev/null", timeout_s=15)
        text = result.stdout.strip()
        return int(text) if result.ok and text.isdigit() else None

    async def read_file(self, path: str, max_bytes: int = 4 * 1024 * 1024) -> bytes | None:
        """The first ``max_bytes`` bytes of ``path``, exactly (binary-safe: sent base64-encoded over the text
        channel, so safetensors headers survive); None when unreadable. Needs ``base64`` (coreutils) on the host."""
        import base64
        import binascii

        result = await self.run(f"head -c {int(max_bytes)} -- {quote(path)} | base64 -w0 && test -r {quote(path)}",
                                timeout_s=30)
        if not result.ok:
            return None
        try:
            return base64.b64decode(result.stdout.strip(), validate=False)
        except (binascii.Error, ValueError):
            return None

    async def forward_port(self, remote_port: int, remote_host: str = "127.0.0.1") -> str:
        """A base URL (``http://127.0.0.1:PORT``) on this machine that reaches ``remote_host:remote_port`` as seen
        from the host — the host itself for local, an SSH local port forward for SSH (kept until ``close``).
        Raises HostError when the forward cannot be set up."""
        return f"http://{remote_host}:{int(remote_port)}"

    @abc.abstractmethod
    async def send_signal(self, pid: int, signum: int, *, group: bool = False) -> None:
        """Send ``signum`` to process ``pid`` (to process group ``pid`` when ``group``).

        Raises ProcessLookupError when it does not exist, PermissionError when not allowed, HostError otherwise.
        Never called with a name: by PID or process group only.
        """


def quote(text: str) -> str:
    """POSIX-shell quote ``text`` (shlex.quote)."""
    import shlex

    return shlex.quote(text)
