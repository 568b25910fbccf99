"""The pre-launch port check binds the way the server will (CPython asyncio ``create_server``, which uvicorn uses):
every address of ``--host``, IPv6 ones IPV6_V6ONLY. It refuses only on a port the check really asked about, says
unknown (the launch goes ahead) otherwise, and never raises. Real sockets and a real ``python3`` on LocalHost."""

from __future__ import annotations

import contextlib
import socket

import pytest

from specdash.app.lifecycle import LifecycleActions
from specdash.hosts.local import LocalHost
from specdash.server.port_check import port_in_use

LAUNCH = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B"


@contextlib.contextmanager
def listener(family: int, address: str, port: int = 0):
    """A socket listening on ``address``:``port`` (0: a free one); yields its port, or None when it cannot bind."""
    with socket.socket(family) as s:
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            s.bind((address, port))
        except OSError:
            yield None
            return
        s.listen()
        yield s.getsockname()[1]


def ipv6() -> bool:
    with listener(socket.AF_INET6, "::1") as port:
        return port is not None


class Console(LifecycleActions):
    """The lifecycle keys' port check, on LocalHost, without a screen (no builder: the newest flag table)."""

    builder_pane = None

    def __init__(self) -> None:
        self.host = LocalHost()


async def test_the_check_binds_like_the_server():
    host = LocalHost()
    with listener(socket.AF_INET, "127.0.0.1") as port:
        assert await port_in_use(host, port) is True
        assert await port_in_use(host, port, "127.0.0.1") is True
        assert await port_in_use(host, port, "0.0.0.0") is True
        assert await port_in_use(host, port, "") is True  # every address, the IPv4 wildcard among them
        assert await port_in_use(host, port, "10.255.255.254") is None  # an address this host does not have
        assert await port_in_use(host, port, "no-such-host.invalid") is None
        assert await port_in_use(host, port, None, "python3-not-installed") is None
        if ipv6():  # uvicorn's IPv6 socket is IPV6_V6ONLY: an IPv4 listener does not take [::]:port
            assert await port_in_use(host, port, "::") is False
    for port in (0, -1, 65536, 70000):
        assert await port_in_use(host, port) is None


@pytest.mark.skipif(not ipv6(), reason="no IPv6 on this host")
async def test_an_ipv6_listener_takes_the_ipv6_address_only():
    host = LocalHost()
    with listener(socket.AF_INET6, "::1") as port:
        assert await port_in_use(host, port, "::1") is True
        assert await port_in_use(host, port, "::") is True
        assert await port_in_use(host, port, "0.0.0.0") is False


async def test_a_port_that_is_no_tcp_port_is_never_refused_as_the_default_port():
    """``--port 0`` or ``--port 70000`` used to be checked as SGLang's default 30000: with 30000 taken the launch
    was refused with "port 30000 is in use", a port the command does not use."""
    console = Console()
    with listener(socket.AF_INET, "127.0.0.1", 30000):  # held here, or by someone else: taken either way
        said = await console._port_taken(LAUNCH)
        assert said is not None and said.startswith("Not launched: port 30000 is in use on local"), said
        for flags in ("--port 0", "--port=70000", "--port -5", "--port abc"):
            assert await console._port_taken(f"{LAUNCH} {flags}") is None, flags
    with listener(socket.AF_INET, "127.0.0.1") as port:
        said = await console._port_taken(f"{LAUNCH} --port={port}")
        assert said is not None and f"port {port} is in use on local (another process listens on it)" in said
        assert await console._port_taken(f"{LAUNCH} --port={port} --host 10.255.255.254") is None  # unknown
        if ipv6():
            assert await console._port_taken(f"{LAUNCH} --port {port} --host ::") is None


async def test_the_check_over_ssh_and_with_no_python_there(sshd):
    """Through the real SSH host: the same answers; a host without the python asked for says unknown."""
    host = sshd.make_host()
    try:
        await host.connect()
        with listener(socket.AF_INET, "127.0.0.1") as port:
            assert await port_in_use(host, port) is True
            assert await port_in_use(host, port, "::" if ipv6() else "0.0.0.0") is (False if ipv6() else True)
            assert await port_in_use(host, port, None, "/nonexistent/python3") is None
    finally:
        await host.close()
