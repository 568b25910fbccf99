"""A launch onto a port another process already listens on: SGLang starts its HTTP server last, so such a server
loads its weights, KV cache and CUDA graphs and only then fails to bind. The console refuses the launch and says
whose the port is (the followed server's, by PID) and how to change it; a server that still fails to bind (its
port taken meanwhile, or launched elsewhere) gives an error finding in the findings panel, not only a header.
Real processes (the SGLang test double) on LocalHost."""

from __future__ import annotations

import shlex
import socket
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.double import harness, host_env
from support.guard import guard
from support.pilot import screen_text, wait_until

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost
from specdash.logs.analyzer import LogAnalyzer

pytestmark = pytest.mark.timeout(guard(180))  # a hang guard, scaled like every wait


def notices(app) -> str:
    return "\n".join(str(n.message) for n in app._notifications)


def listening(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


async def test_l_onto_the_followed_servers_port_is_refused_naming_that_server(tmp_path, started_groups, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    env = host_env(tmp_path, "fast")
    port = harness.free_port()
    log = tmp_path / "elsewhere.log"
    with open(log, "wb") as out:  # started from another terminal
        proc = subprocess.Popen(shlex.split(harness.launch_command(port)), env=env, stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    started_groups.append(proc.pid)
    app = SpecdashApp(LocalHost(env=env), log_path=None, gpu_interval_s=0.5, server_port=port)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.log_path == str(log) and listening(port), timeout_s=120,
                         what="the followed server listening")
        await pilot.press("f3")
        app.builder_pane.set_command(harness.launch_command(port))  # e.g. prefilled from the followed server
        note = (f"port {port} is the followed server's (PID {proc.pid}): l would start a second server that cannot "
                "listen on it - change --port before launching")
        await wait_until(pilot, lambda: note in " ".join(screen_text(app).split()), what="the builder's port note",
                         state=lambda: screen_text(app))
        # another port: the note goes
        app.builder_pane.set_command(harness.launch_command(harness.free_port()))
        await wait_until(pilot, lambda: "is the followed server's" not in screen_text(app), what="no port note")
        app.builder_pane.set_command(harness.launch_command(port))
        await pilot.pause(0.3)
        await pilot.press("escape", "f2")  # out of the editor, back to the log, where l launches
        await pilot.pause(0.3)
        await pilot.press("l")
        said = (f"Not launched: port {port} is in use on local (the followed server (PID {proc.pid}) listens on it); "
                "the server would fail only after loading everything. Change --port in the builder (F3), then l.")
        await wait_until(pilot, lambda: said in notices(app), what="the refusal", state=lambda: notices(app))
        await pilot.pause(0.5)
        assert app.run_handle is None
        assert not list((tmp_path / "specdash-state").glob("runs/*"))  # nothing was started
    assert proc.poll() is None  # the followed server is untouched


def test_a_server_that_cannot_bind_its_port_gives_an_error_finding(tmp_path):
    env = host_env(tmp_path, "fast")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        run = subprocess.run(shlex.split(harness.launch_command(port)), env=env, capture_output=True, text=True,
                             stdin=subprocess.DEVNULL, timeout=120, start_new_session=True)
    assert run.returncode != 0
    lines = (run.stdout + run.stderr).splitlines()
    assert any("address already in use" in line for line in lines), lines[-5:]
    analyzer = LogAnalyzer()
    analyzer.feed_many(lines)
    crash = [f for f in analyzer.findings if f.kind == "crash"]
    assert [f.severity for f in crash] == ["error"], [(f.kind, f.message) for f in analyzer.findings]
    assert crash[0].message == f"launch failed: port {port} is already in use (another process listens on it)"
    assert crash[0].flag == "--port" and crash[0].fix == "choose a free port with --port"


PRINTABLE = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=60)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["", "ERROR:    ", "[2026-01-05 10:00:00] ", "[2026-01-05 10:00:00 TP0] "]), PRINTABLE)
def test_any_bind_failure_text_gives_one_error_finding_and_never_raises(prefix, address):
    analyzer = LogAnalyzer()
    analyzer.feed_many([f"{prefix}[Errno 98] error while attempting to bind on address {address}"])
    found = [f for f in analyzer.findings if f.kind in ("crash", "error")]
    assert [f.severity for f in found] == ["error"], [(f.kind, f.message) for f in analyzer.findings]
    assert found[0].flag == "--port"


def test_an_ipv6_bind_failure_names_its_port():
    """asyncio writes an IPv6 address with four fields: the finding still names the port (it said "its HTTP
    port")."""
    analyzer = LogAnalyzer()
    analyzer.feed_many(["ERROR:    [Errno 98] error while attempting to bind on address ('::1', 30123, 0, 0): "
                        "address already in use"])
    assert [f.message for f in analyzer.findings if f.severity == "error"] == [
        "launch failed: port 30123 is already in use (another process listens on it)"]


async def test_r_onto_a_taken_port_keeps_the_server_and_says_why(tmp_path, started_groups, monkeypatch):
    """r with a builder command on another port that another process holds used to stop the running server and
    start one that would fail only after loading everything; now nothing is stopped and the notice says why."""
    from support.pilot import launch_until_ready

    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "specdash-state"))
    port = harness.free_port()
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(tmp_path / "empty.log"),
                      gpu_interval_s=0.5)
    (tmp_path / "empty.log").write_text("")
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        async with app.run_test(size=(160, 48)) as pilot:
            await launch_until_ready(pilot, app, started_groups, harness.launch_command(port))
            pgid = app.run_handle.pgid
            app.builder_pane.set_command(harness.launch_command(taken))
            await pilot.pause(0.3)
            await pilot.press("escape", "f2")
            await pilot.pause(0.3)
            await pilot.press("r")
            await wait_until(pilot, lambda: "Restart the server?" in screen_text(app), what="the restart dialog")
            await pilot.press("y")
            said = (f"Not restarted (the server keeps running): port {taken} is in use on local (another process "
                    "listens on it); the new server would fail only after loading everything. Change --port in the "
                    "builder (F3), then r.")
            await wait_until(pilot, lambda: said in notices(app), what="the refusal", state=lambda: notices(app))
            await pilot.pause(0.5)
            assert app.run_handle.pgid == pgid and app.status_bar.server_state == "ready" and listening(port)
