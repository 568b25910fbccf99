"""SSHHost: the Host interface over SSH, with asyncssh.

What it honours, as OpenSSH's ``ssh`` does: ``~/.ssh/config`` (Host aliases, HostName, User, Port, IdentityFile,
ProxyJump — asyncssh's config support), the SSH agent and identity files, strict known_hosts checking (default
``~/.ssh/known_hosts``; an unknown key raises :class:`HostKeyUnknown`, a changed key :class:`HostKeyChanged`, and
nothing is ever accepted silently).

Keepalive: asyncssh sends a keepalive every ``keepalive_interval_s`` seconds of silence and drops the link after
``keepalive_count_max`` + 1 unanswered ones, so with the defaults (3 s, 2) a dead link is noticed ~9 s after
the last packet (OpenSSH's ``ServerAliveInterval 3`` / ``ServerAliveCountMax 3`` gives the same 9 s; asyncssh
counts one more tick before giving up).

Reconnect: when an established connection drops, the host retries with capped exponential backoff
(``reconnect_initial_s`` doubling up to ``reconnect_max_s``) and reports ``retrying in N s (reason)`` /
``connecting`` / ``connected`` through :meth:`Host.add_state_listener`. Permanent failures (host key unknown or
changed, authentication refused) end in ``failed: reason``.

Remote commands never outlive their channel: OpenSSH ignores signal requests on channels without a PTY, so every
command runs under a small ``sh`` wrapper that watches the channel's stdin and kills the command's process group
(sshd makes each session its own process group) when stdin closes, i.e. when the channel or connection goes away.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import signal
import socket
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, cast

import asyncssh

from specdash.hosts.base import (
    AuthenticationFailed,
    CommandResult,
    ConnectionLost,
    ConnectionStatus,
    ConnState,
    Host,
    HostError,
    HostKeyChanged,
    HostKeyUnknown,
)
from specdash.hosts.wrapper import input_bytes, wrap_command

__all__ = ["SSHHost", "trust_host_key", "wrap_command"]

#: Where keys are trusted unless ``known_hosts`` is given (OpenSSH's default UserKnownHostsFile).
DEFAULT_KNOWN_HOSTS = "~/.ssh/known_hosts"
#: The user's OpenSSH client config, read when it exists and no ``config_file`` is given.
DEFAULT_CONFIG = "~/.ssh/config"
#: Most ProxyJump hops followed (a loop in the config would otherwise recurse forever).
MAX_JUMP_DEPTH = 8

class _Client(asyncssh.SSHClient):
    """Keeps why the connection ended (for the ``retrying`` detail)."""

    def __init__(self) -> None:
        self.lost_reason: Exception | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost_reason = exc


class SSHHost(Host):
    """A host reached over SSH.

    ``host`` is a host name, address or ``~/.ssh/config`` alias; ``port`` / ``username`` override the config
    (None: config, else 22 / the local user). ``identity_file``: a private key to offer (None: config
    IdentityFile, the default keys and the agent). ``known_hosts``: the file trusted keys are read from and
    :func:`trust_host_key` appends to (None: ``~/.ssh/known_hosts``). ``config_file``: the OpenSSH client config
    (None: ``~/.ssh/config`` when it exists). Times are in seconds.

    Raises (from :meth:`connect`): :class:`HostKeyUnknown`, :class:`HostKeyChanged`, :class:`AuthenticationFailed`,
    :class:`ConnectionLost` (cannot reach it now: refused, timeout, DNS) and :class:`HostError` (bad config or key).
    """

    is_local = False

    def __init__(
        self,
        host: str,
        *,
        port: int | None = None,
        username: str | None = None,
        identity_file: str | None = None,
        known_hosts: str | None = None,
        config_file: str | None = None,
        connect_timeout_s: float = 15.0,
        keepalive_interval_s: float = 3.0,
        keepalive_count_max: int = 2,
        reconnect_initial_s: float = 1.0,
        reconnect_max_s: float = 15.0,
    ) -> None:
        super().__init__()
        self.host, self.port, self.username = host, port, username
        self.identity_file = os.path.expanduser(identity_file) if identity_file else None
        #: The known_hosts file used for checking and for trusting (absolute path): ``known_hosts``, else the
        #: ssh config's UserKnownHostsFile for this host (first one; known once :meth:`connect` ran), else
        #: ``~/.ssh/known_hosts``.
        self.known_hosts_path = os.path.abspath(os.path.expanduser(known_hosts or DEFAULT_KNOWN_HOSTS))
        self._known_hosts_given = known_hosts is not None
        if config_file is not None:
            self._config: list[str] = [os.path.expanduser(config_file)]
        else:
            default = os.path.expanduser(DEFAULT_CONFIG)
            self._config = [default] if os.path.isfile(default) else []
        self.connect_timeout_s = connect_timeout_s
        self.keepalive_interval_s = keepalive_interval_s
        self.keepalive_count_max = keepalive_count_max
        self.reconnect_initial_s = reconnect_initial_s
        self.reconnect_max_s = reconnect_max_s
        self._name = _display(username, host, port)
        self._conn: asyncssh.SSHClientConnection | None = None
        self._chain: list[asyncssh.SSHClientConnection] = []  # jump hosts then the target
        self._closing = False
        self._watch_task: asyncio.Task[None] | None = None
        self._reconnect_task: asyncio.Task[None] | None = None
        self._clients: dict[int, _Client] = {}  # id(connection) -> its client (knows why it ended)

    @property
    def name(self) -> str:  # type: ignore[override]
        """``user@host:port`` as resolved by the ssh config once connected (as typed before)."""
        return self._name

    # -- lifecycle ---------------------------------------------------------------------------------
    async def connect(self) -> None:
        """Connect (through any ProxyJump hosts). On failure the state becomes ``failed: reason`` and the error
        is raised; no automatic retry for a first connection (the user sees why at once). A no-op when
        already connected."""
        if self._conn is not None and not self._conn.is_closed():
            return
        self._closing = False
        self._set_status(ConnectionStatus(ConnState.CONNECTING))
        try:
            self._check_identity_file()
            chain = await self._open(self.host, self.port, self.username)
        except HostKeyUnknown:
            # not a failure yet: the caller asks the user whether to trust the key (the header stays neutral)
            self._set_status(ConnectionStatus(ConnState.CONNECTING, "host key to be confirmed"))
            raise
        except HostError as exc:
            self._set_status(ConnectionStatus(ConnState.FAILED, str(exc)))
            raise
        self._install(chain)

    def _check_identity_file(self) -> None:
        """Raise HostError naming the ``-i`` key file when it cannot be read (asyncssh would only say "No such
        file or directory", without the path)."""
        path = self.identity_file
        if not path:
            return
        try:
            with open(path, "rb"):
                pass
        except OSError as exc:
            raise HostError(f"identity file {path}: {exc.strerror or exc}") from None

    async def close(self) -> None:
        """Close the connection and the jump connections; stop reconnecting. Streams end with ConnectionLost;
        the state becomes ``failed: closed`` (so :meth:`wait_connected` raises)."""
        self._closing = True
        for task in (self._reconnect_task, self._watch_task):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
        self._conn = None
        await _close_chain(self._chain)
        self._chain = []
        self._clients.clear()
        self._set_status(ConnectionStatus(ConnState.FAILED, "closed"))

    def _install(self, chain: list[asyncssh.SSHClientConnection]) -> None:
        self._chain, self._conn = chain, chain[-1]
        self._set_status(ConnectionStatus(ConnState.CONNECTED))
        self._watch_task = asyncio.get_running_loop().create_task(self._watch(chain))

    async def _watch(self, chain: list[asyncssh.SSHClientConnection]) -> None:
        """Wait for the connection to end; unless we closed it, start reconnecting."""
        conn = chain[-1]
        await conn.wait_closed()
        if self._closing or self._conn is not conn:
            return
        self._conn = None
        client = self._clients.get(id(conn))
        reason = client.lost_reason if client is not None else None
        for hop in chain:
            self._clients.pop(id(hop), None)
        detail = _reason_text(reason) if reason else "connection lost"
        loop = asyncio.get_running_loop()
        retry_at = time.monotonic() + self.reconnect_initial_s
        self._set_status(ConnectionStatus(ConnState.RETRYING, detail, retry_at=retry_at))
        await _close_chain(chain)  # the jump hosts' connections, if any
        if not self._closing:
            self._reconnect_task = loop.create_task(self._reconnect(detail))

    async def _reconnect(self, detail: str) -> None:
        delay_s = self.reconnect_initial_s
        while not self._closing:
            retry_at = time.monotonic() + delay_s  # ConnectionStatus.describe counts down with time.monotonic
            self._set_status(ConnectionStatus(ConnState.RETRYING, detail, retry_at=retry_at))
            await asyncio.sleep(delay_s)
            if self._closing:
                return
            self._set_status(ConnectionStatus(ConnState.CONNECTING, detail))
            try:
                chain = await self._open(self.host, self.port, self.username)
            except (HostKeyUnknown, HostKeyChanged, AuthenticationFailed) as exc:
                self._set_status(ConnectionStatus(ConnState.FAILED, str(exc)))
                return
            except HostError as exc:
                detail = str(exc)
                delay_s = min(delay_s * 2, self.reconnect_max_s)
                continue
            if self._closing:
                await _close_chain(chain)
                return
            self._install(chain)
            return

    # -- opening connections -----------------------------------------------------------------------
    def _options(self, host: str, port: int | None, username: str | None) -> asyncssh.SSHClientConnectionOptions:
        try:
            return asyncssh.SSHClientConnectionOptions(
                config=self._config, host=host, port=port if port else (), username=username or ()
            )
        except (OSError, ValueError, asyncssh.Error) as exc:
            raise HostError(f"ssh config {', '.join(self._config) or '(none)'}: {exc}") from None

    def _known_hosts(self) -> Any:
        try:
            return asyncssh.read_known_hosts(self.known_hosts_path)
        except FileNotFoundError:
            return asyncssh.import_known_hosts("")  # nothing trusted: every key is unknown (strict)
        except (OSError, ValueError) as exc:
            raise HostError(f"cannot read known_hosts {self.known_hosts_path}: {exc}") from None

    async def _open(
        self,
        host: str,
        port: int | None,
        username: str | None,
        via: asyncssh.SSHClientConnection | None = None,
        depth: int = 0,
    ) -> list[asyncssh.SSHClientConnection]:
        """Open ``host`` (following its ProxyJump unless ``via`` is given); return the chain of connections
        (jump hosts first, ``host`` last). Jump hosts get the same known_hosts, identity and timeouts."""
        loop = asyncio.get_running_loop()
        options = await loop.run_in_executor(None, self._options, host, port, username)
        real_host, real_port, user = options.host, options.port, options.username
        if depth == 0:
            self._name = _display(user, host, real_port)
            configured = options.known_hosts  # UserKnownHostsFile (+ GlobalKnownHostsFile) paths, or None
            if not self._known_hosts_given and isinstance(configured, list) and configured:
                self.known_hosts_path = os.path.abspath(os.path.expanduser(str(configured[0])))
        chain: list[asyncssh.SSHClientConnection] = []
        tunnel: Any = via if via is not None else ()
        jump = options.tunnel
        if via is None and isinstance(jump, str) and jump.strip().lower() not in ("", "none"):
            if depth >= MAX_JUMP_DEPTH:
                raise HostError(f"ProxyJump chain longer than {MAX_JUMP_DEPTH} hops (a loop in the ssh config?)")
            from specdash.hosts.target import parse_target

            previous: asyncssh.SSHClientConnection | None = None
            try:
                for hop in jump.split(","):
                    try:
                        target = parse_target(hop)
                    except ValueError as exc:
                        raise HostError(f"ProxyJump of {host}: {exc}") from None
                    hop_chain = await self._open(target.host, target.port, target.user, previous, depth + 1)
                    chain.extend(hop_chain)
                    previous = hop_chain[-1]
            except BaseException:
                await _close_chain(chain)
                raise
            tunnel = previous
        where = f"{user}@{real_host}:{real_port}" if depth == 0 else f"jump host {user}@{real_host}:{real_port}"
        kwargs: dict[str, Any] = dict(
            port=real_port,
            username=user,
            config=self._config,
            tunnel=tunnel,
            known_hosts=self._known_hosts(),
            connect_timeout=self.connect_timeout_s,
            keepalive_interval=self.keepalive_interval_s,
            keepalive_count_max=self.keepalive_count_max,
        )
        if self.identity_file:
            kwargs["client_keys"] = [self.identity_file]
        try:
            try:
                conn, client = await asyncio.wait_for(
                    asyncssh.create_connection(_Client, host, **kwargs), self.connect_timeout_s + 5
                )
            except asyncssh.HostKeyNotVerifiable:
                key_name = options.host_key_alias or real_host
                await self._raise_host_key_error(key_name, real_host, real_port, tunnel, where)
                raise  # not reached
            except asyncssh.PermissionDenied as exc:
                raise AuthenticationFailed(f"{where}: permission denied ({exc.reason})") from None
            except asyncssh.DisconnectError as exc:
                raise ConnectionLost(f"{where}: {exc.reason}") from None
            except asyncio.TimeoutError:
                raise ConnectionLost(f"{where}: connection timed out after {self.connect_timeout_s:g} s") from None
            except (asyncssh.KeyImportError, asyncssh.KeyEncryptionError) as exc:
                raise HostError(f"{where}: cannot use the identity file: {exc}") from None
            except socket.gaierror as exc:  # DNS: the name does not resolve (before any connection)
                raise ConnectionLost(f"cannot resolve host name {real_host!r} ({where}): "
                                     f"{exc.strerror or exc}") from None
            except OSError as exc:
                # positive errno: the plain text ("Connection refused"); getaddrinfo errors are negative
                text = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else (exc.strerror or str(exc))
                raise ConnectionLost(f"cannot connect to {where}: {text}") from None
            except (asyncssh.Error, ValueError) as exc:
                raise HostError(f"{where}: {exc}") from None
        except BaseException:
            await _close_chain(chain)
            raise
        chain.append(conn)
        self._clients[id(conn)] = cast(_Client, client)  # create_connection(_Client, ...) made it
        return chain

    async def _raise_host_key_error(self, key_name: str, host: str, port: int, tunnel: Any, where: str) -> None:
        """Tell an unknown key from a changed one: fetch the server's key (restricted to the key types already
        known for the host, as OpenSSH does) and compare it with known_hosts. Always raises."""
        known = self._known_hosts()
        addr = key_name if _is_ip(key_name) else ""
        matched = known.match(key_name, addr, None if port == 22 else port)
        trusted = list(matched[0])
        revoked = list(matched[2]) + revoked_host_keys(self.known_hosts_path, key_name, addr, port)
        algs: list[str] = []
        for key in trusted:
            alg = key.get_algorithm()
            algs.extend(["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"] if alg == "ssh-rsa" else [alg])
        server_key = None
        if algs:
            server_key = await self._fetch_host_key(host, port, tunnel, algs)
        if server_key is None:
            server_key = await self._fetch_host_key(host, port, tunnel, ())
        if server_key is None:
            raise HostError(f"{where}: host key not verifiable and the server did not present one")
        fingerprint = server_key.get_fingerprint("sha256")
        key_type = server_key.get_algorithm()
        if any(_same_key(server_key, key) for key in revoked):  # never offered for trust
            raise HostError(f"{where}: the server's host key {key_type} {fingerprint} is marked @revoked in "
                            f"{self.known_hosts_path}: refusing to connect")
        if trusted:
            if any(_same_key(server_key, key) for key in trusted):
                raise HostError(f"{where}: host key rejected by {self.known_hosts_path} (revoked or CA-only entry)")
            raise HostKeyChanged(
                f"HOST KEY CHANGED for {where}: the server now offers {key_type} {fingerprint}, which differs "
                f"from the key in {self.known_hosts_path} (possible man-in-the-middle); refusing to connect",
                host=key_name, port=port, fingerprint=fingerprint, key_type=key_type,
            )
        public_key_line = server_key.export_public_key("openssh").decode("ascii").split("\n")[0].strip()
        raise HostKeyUnknown(key_name, port, fingerprint, key_type, public_key_line)

    async def _fetch_host_key(self, host: str, port: int, tunnel: Any, algs: Any) -> Any:
        try:
            return await asyncio.wait_for(
                asyncssh.get_server_host_key(host, port, tunnel=tunnel, config=[], server_host_key_algs=algs),
                self.connect_timeout_s,
            )
        except (asyncssh.Error, OSError, asyncio.TimeoutError, ValueError):
            return None

    # -- operations --------------------------------------------------------------------------------
    def _require(self) -> asyncssh.SSHClientConnection:
        conn = self._conn
        if conn is None or conn.is_closed():
            raise ConnectionLost(f"{self.name}: not connected ({self.status.describe()})")
        return conn

    async def run(self, command: str, timeout_s: float = 30.0, input: str | None = None) -> CommandResult:
        """Run ``command`` (POSIX sh) on the host; see :meth:`Host.run`. The command is killed (its process
        group) on timeout. Exit status -1 also when it was killed by a signal. Raises ConnectionLost."""
        conn = self._require()
        out, err = bytearray(), bytearray()
        try:
            process = await conn.create_process(wrap_command(command, input), encoding=None)
            if input is not None:
                process.stdin.write(input_bytes(input))  # the wrapper reads exactly this much; not on argv
        except (asyncssh.Error, OSError) as exc:
            raise ConnectionLost(f"{self.name}: {_reason_text(exc)}") from None

        async def pump(reader: Any, sink: bytearray) -> None:
            while True:
                chunk = await reader.read(65536)
                if not chunk:
                    return
                sink.extend(chunk)

        gathered = asyncio.gather(pump(process.stdout, out), pump(process.stderr, err), process.wait_closed())
        # a pump cancelled by the connection closing under it ends the gather with CancelledError; when the
        # caller has moved on by then nobody awaits it: retrieve it here, or asyncio reports it at exit
        gathered.add_done_callback(lambda done: done.cancelled() or done.exception())
        try:
            await asyncio.wait_for(gathered, timeout_s)
        except asyncio.TimeoutError:
            _close_process(process)
            return CommandResult(-1, out.decode("utf-8", "replace"), f"timeout after {timeout_s:g} s")
        except (asyncssh.Error, OSError) as exc:
            _close_process(process)
            raise ConnectionLost(f"{self.name}: {_reason_text(exc)}") from None
        except asyncio.CancelledError:
            _close_process(process)
            raise
        status = process.exit_status
        if status is None:
            if process.exit_signal is None and conn.is_closed():
                raise ConnectionLost(f"{self.name}: connection lost while running a command")
            status = -1
        return CommandResult(status, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))

    async def stream(self, command: str) -> AsyncGenerator[bytes, None]:
        """See :meth:`Host.stream`. Raises ConnectionLost when the link drops mid-stream."""
        conn = self._require()
        try:
            process = await conn.create_process(wrap_command(command, discard_stderr=True), encoding=None)
        except (asyncssh.Error, OSError) as exc:
            raise ConnectionLost(f"{self.name}: {_reason_text(exc)}") from None
        try:
            while True:
                try:
                    line = await process.stdout.readline()
                except (asyncssh.Error, OSError) as exc:
                    raise ConnectionLost(f"{self.name}: {_reason_text(exc)}") from None
                if not line:
                    break
                yield line
            # EOF: the command ended, or the link went away (then no exit status ever comes).
            try:
                await asyncio.wait_for(process.wait_closed(), 5)
            except asyncio.TimeoutError:
                pass
            if process.exit_status is None and process.exit_signal is None and conn.is_closed():
                raise ConnectionLost(f"{self.name}: connection lost")
        finally:
            _close_process(process)

    async def forward_port(self, remote_port: int, remote_host: str = "127.0.0.1") -> str:
        """Forward a free loopback port here to ``remote_host:remote_port`` on the host (``ssh -L``); returns
        ``http://127.0.0.1:<local port>``. Forwards are reused per remote address and dropped on reconnect."""
        key = (remote_host, int(remote_port))
        forwards = self.__dict__.setdefault("_forwards", {})
        conn = self._require()
        existing = forwards.get(key)
        if existing is not None and existing[0] is conn:
            return f"http://127.0.0.1:{existing[1].get_port()}"
        try:
            listener = await conn.forward_local_port("127.0.0.1", 0, remote_host, int(remote_port))
        except (OSError, asyncssh.Error) as exc:
            raise HostError(f"cannot forward port {remote_port} from {self.name}: {exc}") from None
        forwards[key] = (conn, listener)
        return f"http://127.0.0.1:{listener.get_port()}"

    async def send_signal(self, pid: int, signum: int, *, group: bool = False) -> None:
        """``kill -s SIG PID`` (``kill -s SIG -- -PGID`` for a process group) on the host; see
        :meth:`Host.send_signal`."""
        if int(pid) <= 0:
            raise ValueError(f"bad PID {pid}")
        try:
            sig = "-s " + signal.Signals(signum).name.removeprefix("SIG") if signum else "-0"
        except ValueError:
            sig = f"-{int(signum)}"
        who = f"-- -{int(pid)}" if group else str(int(pid))
        result = await self.run(f"kill {sig} {who}", timeout_s=15)
        if result.ok:
            return
        text = (result.stderr or result.stdout).strip().splitlines()
        message = text[-1] if text else f"exit status {result.exit_status}"
        what = f"process group {pid}" if group else f"PID {pid}"
        if "no such process" in message.lower():
            raise ProcessLookupError(f"{self.name}: no {what}")
        if "not permitted" in message.lower():
            raise PermissionError(f"{self.name}: not allowed to signal {what}")
        raise HostError(f"{self.name}: kill {what} failed: {message}")


def trust_host_key(known_hosts_path: str, host: str, port: int, public_key_line: str) -> str:
    """Append ``host``'s key to ``known_hosts_path`` (created with mode 0600, its folder 0700) and return the
    line written: ``host KEYTYPE BASE64`` for port 22, ``[host]:port KEYTYPE BASE64`` otherwise (OpenSSH's
    known_hosts format, sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT").

    Pass the ``host``, ``port`` and ``public_key_line`` of the :class:`HostKeyUnknown` the user agreed to.
    Raises ValueError for a malformed key line, HostKeyChanged when known_hosts already holds a different
    key for this host (a changed key is never trusted this way) and HostError when it marks this key
    ``@revoked``. Trusting a key already present is a no-op.
    """
    try:
        key = asyncssh.import_public_key(public_key_line.strip())
    except (asyncssh.KeyImportError, ValueError) as exc:
        raise ValueError(f"not an OpenSSH public key line: {exc}") from None
    key_text = " ".join(key.export_public_key("openssh").decode("ascii").split()[:2])
    entry_host = host if port == 22 else f"[{host}]:{port}"
    line = f"{entry_host} {key_text}"
    path = Path(os.path.expanduser(known_hosts_path))
    if path.exists():
        known = asyncssh.read_known_hosts(str(path))
        matched = known.match(host, host if _is_ip(host) else "", None if port == 22 else port)
        trusted = matched[0]
        revoked = list(matched[2]) + revoked_host_keys(str(path), host, host if _is_ip(host) else "", port)
        if any(_same_key(key, other) for other in revoked):
            raise HostError(f"{path} marks this key of {entry_host} @revoked: refusing to trust it")
        if any(_same_key(key, other) for other in trusted):
            return line
        if trusted:
            raise HostKeyChanged(
                f"{path} already holds a different key for {entry_host}: refusing to add another",
                host=host, port=port, fingerprint=key.get_fingerprint("sha256"), key_type=key.get_algorithm(),
            )
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
    with os.fdopen(fd, "a+b") as handle:
        handle.seek(0, os.SEEK_END)
        needs_newline = False
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            needs_newline = handle.read(1) != b"\n"
        handle.write((("\n" if needs_newline else "") + line + "\n").encode("ascii"))
    return line


# -- helpers ---------------------------------------------------------------------------------------
def _display(user: str | None, host: str, port: int | None) -> str:
    shown = f"[{host}]" if ":" in host else host
    text = f"{user}@{shown}" if user else shown
    return f"{text}:{port}" if port else text


def _is_ip(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def revoked_host_keys(known_hosts_path: str, host: str, addr: str, port: int) -> list[Any]:
    """The keys that ``known_hosts_path`` marks ``@revoked`` for ``host`` (or ``addr``) on ``port``: sshd(8)
    "SSH_KNOWN_HOSTS FILE FORMAT" — comma-separated patterns (``*``/``?`` wildcards, ``!`` negation,
    ``[host]:port`` for a port other than 22, hashed ``|1|salt|hmac`` names). Read here because asyncssh 2.x
    does not match ``@revoked`` entries written in the ``[host]:port`` form. Unreadable files and malformed lines
    give no keys (the connection is then refused or offered as asyncssh decides)."""
    try:
        text = Path(os.path.expanduser(known_hosts_path)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    names = {host if port == 22 else f"[{host}]:{port}"}
    if addr:
        names.add(addr if port == 22 else f"[{addr}]:{port}")
    keys = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) < 4 or fields[0] != "@revoked":
            continue
        if not _host_patterns_match(fields[1], names):
            continue
        try:
            keys.append(asyncssh.import_public_key(f"{fields[2]} {fields[3]}"))
        except (asyncssh.KeyImportError, ValueError):
            continue
    return keys


def _host_patterns_match(patterns: str, names: set[str]) -> bool:
    import base64
    import hashlib
    import hmac
    import re

    if patterns.startswith("|1|"):
        try:
            _, _, salt, digest = patterns.split("|")
            salt_bytes, want = base64.b64decode(salt), base64.b64decode(digest)
        except ValueError:
            return False
        return any(hmac.compare_digest(hmac.new(salt_bytes, name.encode(), hashlib.sha1).digest(), want)
                   for name in names)
    matched = False
    for pattern in patterns.split(","):
        negated = pattern.startswith("!")
        pattern = pattern[1:] if negated else pattern
        regex = re.compile(re.escape(pattern.lower()).replace(r"\*", ".*").replace(r"\?", "."))
        if any(regex.fullmatch(name.lower()) for name in names):
            if negated:
                return False
            matched = True
    return matched


def _same_key(a: Any, b: Any) -> bool:
    return a.public_data == b.public_data


def _reason_text(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    text = reason if isinstance(reason, str) and reason else str(exc)
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def _close_process(process: Any) -> None:
    """EOF the channel's stdin (the wrapper then kills the command's process group) and close it."""
    try:
        process.stdin.write_eof()
    except (asyncssh.Error, OSError, AttributeError):
        pass
    try:
        process.close()
    except (asyncssh.Error, OSError):
        pass


async def _close_chain(chain: list[asyncssh.SSHClientConnection]) -> None:
    """Close the connections of a chain, target first, and wait (up to 5 s each) until they are closed."""
    for conn in reversed(chain):
        conn.close()
    for conn in reversed(chain):
        try:
            await asyncio.wait_for(conn.wait_closed(), 5)
        except (asyncio.TimeoutError, asyncssh.Error, OSError):
            pass
