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
