"""trust_host_key: the known_hosts lines it writes are the ones OpenSSH and asyncssh read back."""

from __future__ import annotations

import os
import subprocess

import asyncssh
import pytest

from specdash.hosts.base import HostKeyChanged
from specdash.hosts.ssh import trust_host_key


def _new_key_line() -> str:
    return asyncssh.generate_private_key("ssh-ed25519").export_public_key("openssh").decode().strip()


def _trusted(path, host: str, port: int | None) -> list:
    return list(asyncssh.read_known_hosts(str(path)).match(host, "", port)[0])


def test_port_22_uses_the_bare_host_and_other_ports_the_bracket_form(tmp_path):
    known_hosts = tmp_path / "ssh" / "known_hosts"
    key22, key2222 = _new_key_line(), _new_key_line()
    line22 = trust_host_key(str(known_hosts), "gpu-box", 22, key22)
    line2222 = trust_host_key(str(known_hosts), "10.0.0.7", 2222, key2222 + " a comment")
    assert line22 == "gpu-box " + " ".join(key22.split()[:2])
    assert line2222 == "[10.0.0.7]:2222 " + " ".join(key2222.split()[:2])
    assert known_hosts.read_text().splitlines() == [line22, line2222]
    assert oct(known_hosts.stat().st_mode & 0o777) == "0o600"
    assert oct(known_hosts.parent.stat().st_mode & 0o777) == "0o700"
    # asyncssh (what SSHHost checks with) and OpenSSH's ssh-keygen both find the entries
    assert len(_trusted(known_hosts, "gpu-box", None)) == 1
    assert len(_trusted(known_hosts, "10.0.0.7", 2222)) == 1
    assert _trusted(known_hosts, "10.0.0.7", None) == []
    found = subprocess.run(["ssh-keygen", "-F", "[10.0.0.7]:2222", "-f", str(known_hosts)],
                           capture_output=True, text=True)
    assert found.returncode == 0 and line2222.split()[2] in found.stdout


def test_appends_after_a_last_line_without_newline_and_never_duplicates(tmp_path):
    known_hosts = tmp_path / "known_hosts"
    other = "[other]:2200 " + " ".join(_new_key_line().split()[:2])
    known_hosts.write_text(other)  # no trailing newline
    key = _new_key_line()
    line = trust_host_key(str(known_hosts), "gpu-box", 2200, key)
    assert trust_host_key(str(known_hosts), "gpu-box", 2200, key) == line
    assert known_hosts.read_text() == f"{other}\n{line}\n"


def test_a_different_key_for_a_known_host_is_refused(tmp_path):
    known_hosts = tmp_path / "known_hosts"
    trust_host_key(str(known_hosts), "gpu-box", 22, _new_key_line())
    before = known_hosts.read_text()
    with pytest.raises(HostKeyChanged, match="already holds a different key"):
        trust_host_key(str(known_hosts), "gpu-box", 22, _new_key_line())
    assert known_hosts.read_text() == before


def test_garbage_is_not_a_key(tmp_path):
    with pytest.raises(ValueError, match="not an OpenSSH public key"):
        trust_host_key(str(tmp_path / "kh"), "gpu-box", 22, "ssh-ed25519 not-base64!")
    assert not os.path.exists(tmp_path / "kh")


def test_a_revoked_key_is_never_trusted(tmp_path):
    from specdash.hosts.base import HostError

    known_hosts = tmp_path / "known_hosts"
    key = _new_key_line()
    known_hosts.write_text(f"@revoked [gpu-box]:2200 {key}\n")
    with pytest.raises(HostError, match="@revoked"):
        trust_host_key(str(known_hosts), "gpu-box", 2200, key)
    assert known_hosts.read_text() == f"@revoked [gpu-box]:2200 {key}\n"


async def test_connecting_to_a_server_whose_key_is_revoked_is_refused_not_offered(sshd, tmp_path):
    from specdash.hosts.base import HostError, HostKeyUnknown

    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("@revoked " + sshd.known_hosts_line(sshd.host_key) + "\n")
    host = sshd.make_host(known_hosts=str(known_hosts))
    try:
        with pytest.raises(HostError, match="marked @revoked") as info:
            await host.connect()
        assert not isinstance(info.value, HostKeyUnknown)
    finally:
        await host.close()


def test_revoked_entries_match_plain_wildcard_and_hashed_names(tmp_path):
    import base64
    import hashlib
    import hmac

    from specdash.hosts.ssh import revoked_host_keys

    salt = b"0123456789abcdefghij"
    hashed = "|1|" + base64.b64encode(salt).decode() + "|" + base64.b64encode(
        hmac.new(salt, b"[10.0.0.9]:2222", hashlib.sha1).digest()).decode()
    keys = [_new_key_line() for _ in range(3)]
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(f"@revoked gpu-*,!gpu-9 {keys[0]}\n@revoked {hashed} {keys[1]}\n"
                           f"[10.0.0.9]:2222 {keys[2]}\n")
    assert len(revoked_host_keys(str(known_hosts), "gpu-1", "", 22)) == 1
    assert revoked_host_keys(str(known_hosts), "gpu-9", "", 22) == []
    assert len(revoked_host_keys(str(known_hosts), "box", "10.0.0.9", 2222)) == 1
    assert revoked_host_keys(str(known_hosts), "box", "10.0.0.9", 22) == []
