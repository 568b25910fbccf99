"""TARGET parsing and open_host: what `specdash connect TARGET` accepts and the one-line errors it gives."""

from __future__ import annotations

import pytest

from specdash.hosts.local import LocalHost
from specdash.hosts.ssh import SSHHost
from specdash.hosts.target import Target, open_host, parse_target


@pytest.mark.parametrize(
    "text, expected",
    [
        ("local", Target("local")),
        ("gpu-box", Target("gpu-box")),
        ("alice@gpu-box", Target("gpu-box", "alice")),
        ("alice@gpu-box.example.com:2222", Target("gpu-box.example.com", "alice", 2222)),
        ("127.0.0.1:22", Target("127.0.0.1", None, 22)),
        ("root@[::1]:2200", Target("::1", "root", 2200)),
        ("fe80::1", Target("fe80::1")),
        ("my_alias", Target("my_alias")),
    ],
)
def test_parse_target_forms(text, expected):
    assert parse_target(text) == expected


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "empty target"),
        ("alice@", "is not a host name"),
        ("@host", "bad user name"),
        ("host:0", "port must be a number from 1 to 65535"),
        ("host:99999", "port must be a number from 1 to 65535"),
        ("host:ssh", "port must be a number"),
        ("[::1", "missing ']'"),
        ("[nothost]:22", "is not an IPv6 address"),
        ("gpu box", "no spaces"),
        ("-oProxyCommand=x", "is not a host name"),
    ],
)
def test_bad_targets_raise_one_line_value_error(text, fragment):
    with pytest.raises(ValueError) as info:
        parse_target(text)
    message = str(info.value)
    assert fragment in message
    assert "\n" not in message


def test_local_user_at_local_is_an_ssh_target():
    assert not parse_target("root@local").is_local
    assert parse_target("local").is_local


def test_open_host_picks_the_implementation(tmp_path):
    assert isinstance(open_host("local"), LocalHost)
    host = open_host("alice@gpu-box:2222", known_hosts=str(tmp_path / "kh"), config_file=str(tmp_path / "cfg"))
    assert isinstance(host, SSHHost)
    assert (host.host, host.port, host.username) == ("gpu-box", 2222, "alice")
    assert host.known_hosts_path == str(tmp_path / "kh")
    assert host.name == "alice@gpu-box:2222"


def test_open_host_port_option():
    assert open_host("gpu-box", port=2200).port == 2200
    assert open_host("gpu-box:2200", port=2200).port == 2200
    with pytest.raises(ValueError, match="two different ports"):
        open_host("gpu-box:2200", port=2201)
    with pytest.raises(ValueError, match="bad port"):
        open_host("gpu-box", port=70000)


def test_local_refuses_ssh_options():
    with pytest.raises(ValueError, match="takes no SSH options"):
        open_host("local", identity_file="~/.ssh/id_ed25519")
