"""SSHHost against a real OpenSSH sshd on 127.0.0.1 (tests/sshd.py): commands, streams, signals, host keys,
ssh_config aliases with ProxyJump, keepalive and reconnect."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import time

import psutil
import pytest

from specdash.hosts.base import (
    AuthenticationFailed,
    ConnectionLost,
    ConnState,
    HostError,
    HostKeyChanged,
    HostKeyUnknown,
)
from specdash.hosts.local import LocalHost
from specdash.hosts.ssh import SSHHost, trust_host_key

pytestmark = pytest.mark.ssh


async def _ps_args(pattern: str) -> list[str]:
    """Command lines of processes on this machine containing ``pattern`` (the test sshd is local)."""
    result = await LocalHost().run("ps -ww -eo pid=,args=")
    return [line for line in result.stdout.splitlines() if pattern in line and "ps -ww -eo" not in line]


async def test_run_returns_status_output_and_remote_environment(sshd):
    host = sshd.make_host()
    await host.connect()
    try:
        assert host.status.state is ConnState.CONNECTED
        result = await host.run("echo out; echo err >&2; echo $FAKE_NVIDIA_SMI_STATE; exit 3")
        assert result.exit_status == 3
        assert result.stdout.splitlines() == ["out", str(sshd.gpu_state)]
        assert result.stderr == "err\n"
        assert (await host.run("command -v nvidia-smi")).stdout.strip().endswith("tests/fakes/bin/nvidia-smi")
        assert (await host.run("tr a-z A-Z", input="shout\n")).stdout == "SHOUT\n"
    finally:
        await host.close()


async def test_run_timeout_kills_the_remote_command(sshd):
    host = sshd.make_host()
    await host.connect()
    try:
        marker = f"sleep 31{os.getpid() % 1000}"
        started = time.monotonic()
        result = await host.run(marker, timeout_s=1)
        assert time.monotonic() - started < 5
        assert result.exit_status == -1 and "timeout after 1 s" in result.stderr
        deadline = time.monotonic() + 5
        while await _ps_args(marker) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert await _ps_args(marker) == []
    finally:
        await host.close()


async def test_stream_lines_and_closing_stops_the_remote_command(sshd):
    host = sshd.make_host()
    await host.connect()
    try:
        lines = [line async for line in host.stream("printf 'a\\nb\\n'; printf tail")]
        assert lines == [b"a\n", b"b\n", b"tail"]

        marker = f"sleep 32{os.getpid() % 1000}"
        stream = host.stream(f"echo started; {marker}; echo never")
        assert await stream.__anext__() == b"started\n"
        assert await _ps_args(marker)  # running
        await stream.aclose()
        deadline = time.monotonic() + 5
        while await _ps_args(marker) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        assert await _ps_args(marker) == []
    finally:
        await host.close()


async def test_file_size_read_file_and_signals(sshd, tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 1234)
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)  # ours: its own process group
    host = sshd.make_host()
    await host.connect()
    try:
        assert await host.file_size(str(path)) == 1234
        assert await host.file_size(str(tmp_path / "missing")) is None
        assert await host.read_file(str(path), max_bytes=10) == b"x" * 10
        await host.send_signal(victim.pid, 0)  # exists
        await host.send_signal(victim.pid, signal.SIGTERM, group=True)
        assert victim.wait(timeout=5) == -signal.SIGTERM
        with pytest.raises(ProcessLookupError):
            await host.send_signal(victim.pid, signal.SIGTERM)
    finally:
        if victim.poll() is None:
            os.killpg(victim.pid, signal.SIGKILL)
        await host.close()


async def test_unknown_host_key_shows_fingerprint_and_trust_makes_connect_work(sshd, tmp_path):
    from sshd import fingerprint

    known_hosts = tmp_path / "sub" / "known_hosts"  # does not exist yet: nothing is trusted
    host = sshd.make_host(known_hosts=str(known_hosts))
    with pytest.raises(HostKeyUnknown) as info:
        await host.connect()
    exc = info.value
    assert exc.fingerprint == fingerprint(sshd.host_key.with_suffix(".pub"))
    assert (exc.host, exc.port, exc.key_type) == ("127.0.0.1", sshd.port, "ssh-ed25519")
    # not a failure while the user is asked: the header stays neutral until they answer (mark_failed on no)
    assert host.status.state is ConnState.CONNECTING and "failed" not in host.status.describe()
    assert not known_hosts.exists()

    line = trust_host_key(str(known_hosts), exc.host, exc.port, exc.public_key_line)
    assert line.startswith(f"[127.0.0.1]:{sshd.port} ssh-ed25519 ")
    assert known_hosts.read_text() == line + "\n"
    # the real OpenSSH client accepts the entry with strict checking
    ssh = subprocess.run(
        ["ssh", "-F", "none", "-i", str(sshd.client_key), "-p", str(sshd.port), "-o", "BatchMode=yes",
         "-o", "StrictHostKeyChecking=yes", "-o", f"UserKnownHostsFile={known_hosts}",
         f"{sshd.user}@127.0.0.1", "echo via-openssh"],
        capture_output=True, text=True, timeout=20,
    )
    assert ssh.stdout.strip() == "via-openssh", ssh.stderr
    await host.connect()
    try:
        assert (await host.run("echo ok")).stdout == "ok\n"
    finally:
        await host.close()
    assert trust_host_key(str(known_hosts), exc.host, exc.port, exc.public_key_line) == line  # no duplicate
    assert known_hosts.read_text() == line + "\n"


async def test_changed_host_key_is_refused_and_never_trusted(sshd, tmp_path):
    from sshd import fingerprint

    other = sshd.make_second_host_key()
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(sshd.known_hosts_line(other))
    before = known_hosts.read_text()
    host = sshd.make_host(known_hosts=str(known_hosts))
    with pytest.raises(HostKeyChanged) as info:
        await host.connect()
    assert "HOST KEY CHANGED" in str(info.value) and "\n" not in str(info.value)
    assert info.value.fingerprint == fingerprint(sshd.host_key.with_suffix(".pub"))
    assert host.status.state is ConnState.FAILED and "HOST KEY CHANGED" in host.status.describe()
    real_key_line = sshd.host_key.with_suffix(".pub").read_text()
    with pytest.raises(HostKeyChanged):
        trust_host_key(str(known_hosts), "127.0.0.1", sshd.port, real_key_line)
    assert known_hosts.read_text() == before


async def test_wrong_client_key_is_an_authentication_failure(sshd):
    host = sshd.make_host(identity_file=str(sshd.make_second_host_key()))
    with pytest.raises(AuthenticationFailed, match="permission denied"):
        await host.connect()
    assert host.status.state is ConnState.FAILED


async def test_nothing_listening_is_a_connection_error(sshd):
    from sshd import free_port

    host = sshd.make_host(port=free_port(), connect_timeout_s=5)
    with pytest.raises(ConnectionLost, match="cannot connect"):
        await host.connect()
    with pytest.raises(HostError, match="^cannot connect to "):
        await host.wait_connected(timeout_s=1)


async def test_ssh_config_alias_resolves_hostname_port_user_key_and_known_hosts(sshd):
    from sshd import ALIAS

    host = SSHHost(ALIAS, config_file=str(sshd.ssh_config))  # UserKnownHostsFile from the config
    await host.connect()
    try:
        assert host.name == f"{sshd.user}@{ALIAS}:{sshd.port}"
        assert host.known_hosts_path == str(sshd.known_hosts)
        assert (await host.run("id -un")).stdout.strip() == sshd.user
    finally:
        await host.close()


async def test_proxyjump_alias_goes_through_the_jump_host(sshd):
    from sshd import JUMP_ALIAS

    own_ports = lambda: {c.laddr.port for c in psutil.Process().net_connections(kind="tcp") if c.laddr}  # noqa: E731
    direct = sshd.make_host()
    await direct.connect()
    jumped = SSHHost(JUMP_ALIAS, config_file=str(sshd.ssh_config), known_hosts=str(sshd.known_hosts))
    await jumped.connect()
    try:
        direct_client_port = int((await direct.run("echo $SSH_CONNECTION")).stdout.split()[1])
        jumped_client_port = int((await jumped.run("echo $SSH_CONNECTION")).stdout.split()[1])
        ports = own_ports()
        # the direct connection's TCP socket is ours; the jumped one was opened by the jump host's sshd
        assert direct_client_port in ports
        assert jumped_client_port not in ports
        assert (await jumped.run("echo through")).stdout == "through\n"
    finally:
        await jumped.close()
        await direct.close()


async def test_proxyjump_checks_the_jump_hosts_key_too(sshd, tmp_path):
    from sshd import JUMP_ALIAS

    host = SSHHost(JUMP_ALIAS, config_file=str(sshd.ssh_config), known_hosts=str(tmp_path / "empty"))
    with pytest.raises(HostKeyUnknown) as info:
        await host.connect()
    assert info.value.port == sshd.port


async def test_keepalive_notices_a_dead_link_then_reconnects(sshd):
    """A link whose server stopped answering (sshd frozen, TCP still open) is noticed by keepalive alone;
    then the host retries with backoff and reconnects once sshd is back."""
    states: list[tuple[float, ConnState, str]] = []
    host = sshd.make_host(keepalive_interval_s=0.5, keepalive_count_max=2,
                          reconnect_initial_s=0.2, reconnect_max_s=0.4)
    host.add_state_listener(lambda st: states.append((time.monotonic(), st.state, st.describe())))
    await host.connect()
    frozen: list[int] = []
    try:
        frozen = sshd.freeze_sessions()  # the link stays open but nothing answers any more
        sshd.kill(sessions=False)  # and no new connections until sshd is back
        frozen_at = time.monotonic()
        while host.status.state is ConnState.CONNECTED and time.monotonic() - frozen_at < 10:
            await asyncio.sleep(0.05)
        detected_s = time.monotonic() - frozen_at
        assert host.status.state is not ConnState.CONNECTED
        assert detected_s < 0.5 * (2 + 1) + 1.0  # interval * (count_max + 1) plus scheduling slack
        with pytest.raises(ConnectionLost):
            await host.run("true")
        await asyncio.sleep(0.6)
        retrying = [text for _, state, text in states if state is ConnState.RETRYING]
        assert any("retrying in" in text and "keepalive" in text for text in retrying), "; ".join(retrying)
        assert any("Connection refused" in text for text in retrying), "; ".join(retrying)  # sshd is down
        sshd.start()
        await host.wait_connected(timeout_s=10)
        assert (await host.run("echo back")).stdout == "back\n"
    finally:
        sshd.kill_pids(frozen)
        await host.close()
