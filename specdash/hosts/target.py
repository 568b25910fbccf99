"""TARGET parsing and the factory that turns a TARGET into a :class:`~specdash.hosts.base.Host`.

TARGET (the ``specdash connect`` argument) is one of

* ``local`` — this machine, no SSH (:class:`~specdash.hosts.local.LocalHost`);
* ``[user@]host[:port]`` — ``host`` a name, an IPv4 address or a bracketed IPv6 address (``[::1]:2222``);
* an alias from ``~/.ssh/config`` (``Host`` entries) — written like a host name; asyncssh applies the
  config (HostName, User, Port, IdentityFile, ProxyJump) when connecting.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re

from specdash.hosts.base import Host

#: The TARGET that means "this machine".
LOCAL_TARGET = "local"

# A host name or ssh_config alias: letters, digits and the punctuation real names and aliases use.
_NAME_RE = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_])?$")
_USER_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*\$?$")


@dataclasses.dataclass(frozen=True)
class Target:
    """A parsed TARGET: ``host`` (name, alias or IP address; IPv6 without brackets), ``user`` (None: from the
    ssh config or the local user name) and ``port`` (None: from the ssh config, else 22). ``is_local`` is True
    for ``local``."""

    host: str
    user: str | None = None
    port: int | None = None

    @property
    def is_local(self) -> bool:
        return self.host == LOCAL_TARGET and self.user is None and self.port is None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        text = f"{self.user}@{host}" if self.user else host
        return f"{text}:{self.port}" if self.port is not None else text


def parse_target(target: str) -> Target:
    """Parse TARGET (``local``, ``[user@]host[:port]`` or an ssh_config alias) into a :class:`Target`.

    Raises ValueError with a one-line message naming what is wrong (empty, bad user, bad port, bad host).
    """
    text = target.strip()
    if not text:
        raise ValueError("empty target: expected [user@]host[:port], an ~/.ssh/config alias, or 'local'")
    if any(ch.isspace() for ch in text):
        raise ValueError(f"bad target {target!r}: no spaces allowed")
    user: str | None = None
    if "@" in text:
        user, _, text = text.rpartition("@")
        if not _USER_RE.match(user):
            raise ValueError(f"bad target {target!r}: bad user name {user!r}")
    port: int | None = None
    if text.startswith("["):  # [IPv6]:port or [IPv6]
        close = text.find("]")
        if close < 0:
            raise ValueError(f"bad target {target!r}: missing ']' after IPv6 address")
        host, rest = text[1:close], text[close + 1 :]
        try:
            ipaddress.IPv6Address(host)
        except ValueError:
            raise ValueError(f"bad target {target!r}: {host!r} is not an IPv6 address") from None
        if rest:
            if not rest.startswith(":"):
                raise ValueError(f"bad target {target!r}: expected ':PORT' after ']'")
            port = _parse_port(rest[1:], target)
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
        port = _parse_port(port_text, target)
    elif text.count(":") > 1:
        try:
            ipaddress.IPv6Address(text)
        except ValueError:
            raise ValueError(f"bad target {target!r}: write IPv6 addresses as [ADDR]:PORT") from None
        host = text
    else:
        host = text
    if ":" not in host and not _NAME_RE.match(host):
        raise ValueError(f"bad target {target!r}: {host!r} is not a host name, address or alias")
    return Target(host=host, user=user, port=port)


def _parse_port(text: str, target: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise ValueError(f"bad target {target!r}: port must be a number from 1 to 65535, got {text!r}")
    return int(text)


def open_host(
    target: str,
    *,
    port: int | None = None,
    identity_file: str | None = None,
    known_hosts: str | None = None,
    config_file: str | None = None,
) -> Host:
    """Make the :class:`Host` for TARGET, not yet connected (call ``await host.connect()``).

    ``local`` gives a :class:`~specdash.hosts.local.LocalHost` (the SSH options must then be absent); anything
    else an :class:`~specdash.hosts.ssh.SSHHost`. ``port`` (``-p``) is the port when TARGET has no ``:PORT``
    (when both are given they must agree); with neither, the ssh config's Port or 22. ``identity_file``
    (``-i``), ``known_hosts`` (``--known-hosts``, default ``~/.ssh/known_hosts``) and ``config_file`` (default
    ``~/.ssh/config``) are passed to the SSH host.

    Raises ValueError (one line) for a bad TARGET, a port outside 1..65535, two different ports, or SSH
    options given with ``local``.
    """
    parsed = parse_target(target)
    if port is not None and not 1 <= port <= 65535:
        raise ValueError(f"bad port {port}: must be from 1 to 65535")
    if parsed.is_local:
        given = [name for name, value in (("port", port), ("identity file", identity_file),
                                          ("known_hosts", known_hosts)) if value is not None]
        if given:
            raise ValueError(f"target 'local' takes no SSH options (got {', '.join(given)})")
        from specdash.hosts.local import LocalHost

        return LocalHost()
    if port is not None and parsed.port is not None and port != parsed.port:
        raise ValueError(f"two different ports: {parsed.port} in {target!r} and {port} from -p")
    from specdash.hosts.ssh import SSHHost

    return SSHHost(
        parsed.host,
        port=port if port is not None else parsed.port,
        username=parsed.user,
        identity_file=identity_file,
        known_hosts=known_hosts,
        config_file=config_file,
    )
