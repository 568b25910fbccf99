"""An unknown host key is never accepted silently (the app asks); a changed one is refused."""

from __future__ import annotations

from sshd import fingerprint
from support.pilot import wait_until

from specdash.app.main import SpecdashApp
from specdash.app.modals.host_key import HostKeyScreen
from specdash.hosts.base import ConnState


async def test_unknown_host_key_asks_and_trust_saves_it(sshd, tmp_path):
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    app = SpecdashApp(sshd.make_host(known_hosts=str(known_hosts)), log_path=None)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HostKeyScreen), what="host key prompt")
        screen = app.screen
        assert screen.fingerprint == fingerprint(sshd.host_key.with_suffix(".pub"))
        assert app.host.status.state is not ConnState.CONNECTED  # nothing happens before the user answers
        assert known_hosts.read_text() == ""
        await pilot.press("t")
        await wait_until(pilot, lambda: app.host.status.state is ConnState.CONNECTED, what="connected")
        saved = known_hosts.read_text()
        assert saved.startswith(f"[127.0.0.1]:{sshd.port} ssh-ed25519 ")
        assert saved.split()[2] == sshd.host_key.with_suffix(".pub").read_text().split()[1]


async def test_unknown_host_key_cancel_does_not_connect(sshd, tmp_path):
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    app = SpecdashApp(sshd.make_host(known_hosts=str(known_hosts)), log_path=None)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, HostKeyScreen), what="host key prompt")
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.host.status.state is ConnState.FAILED, what="failed state")
        assert known_hosts.read_text() == ""
        assert "not trusted" in app.host.status.describe()


async def test_changed_host_key_is_refused(sshd, tmp_path):
    other = sshd.make_second_host_key()
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(sshd.known_hosts_line(other))
    app = SpecdashApp(sshd.make_host(known_hosts=str(known_hosts)), log_path=None)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.host.status.state is ConnState.FAILED, what="refusal")
        assert not isinstance(app.screen, HostKeyScreen)  # never offered for trust
        assert "changed" in app.host.status.describe()
        assert known_hosts.read_text() == sshd.known_hosts_line(other)
