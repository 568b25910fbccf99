"""The one door to the outside world: the Host interface and its implementations.

* :mod:`specdash.hosts.base` — :class:`Host` (run / stream / file_size / read_file / send_signal / connect /
  close / status / wait_connected), the connection states and the errors (HostError, ConnectionLost,
  AuthenticationFailed, HostKeyUnknown, HostKeyChanged).
* :mod:`specdash.hosts.local` — LocalHost (this machine; asyncio subprocesses).
* :mod:`specdash.hosts.ssh` — SSHHost (asyncssh: ssh_config, ProxyJump, agent, strict known_hosts, keepalive,
  reconnect with backoff) and :func:`trust_host_key`.
* :mod:`specdash.hosts.target` — TARGET parsing and :func:`open_host`.
* :mod:`specdash.hosts.tail` — LogFollower: follow a file by byte offset across reconnects.
* :mod:`specdash.hosts.wrapper` — the sh wrapper that makes commands die with their channel.

Submodules are imported explicitly (``from specdash.hosts.ssh import SSHHost``) so that importing the package
does not pull in asyncssh.
"""
