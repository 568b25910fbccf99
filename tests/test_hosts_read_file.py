"""Host.read_file returns the file's bytes exactly (binary-safe), locally and over SSH."""

from __future__ import annotations

from specdash.hosts.local import LocalHost

PAYLOAD = bytes(range(256)) * 4 + b"\x00\xff\xfe tail"


async def test_local_read_file_is_binary_exact(tmp_path):
    path = tmp_path / "weights.safetensors"
    path.write_bytes(PAYLOAD)
    host = LocalHost()
    assert await host.read_file(str(path)) == PAYLOAD
    assert await host.read_file(str(path), max_bytes=8) == PAYLOAD[:8]
    assert await host.read_file(str(tmp_path / "missing")) is None


async def test_ssh_read_file_is_binary_exact(sshd, tmp_path):
    path = tmp_path / "weights.safetensors"
    path.write_bytes(PAYLOAD)
    host = sshd.make_host()
    await host.connect()
    try:
        assert await host.read_file(str(path)) == PAYLOAD
        assert await host.read_file(str(path), max_bytes=300) == PAYLOAD[:300]
        assert await host.read_file(str(tmp_path / "missing")) is None
    finally:
        await host.close()
