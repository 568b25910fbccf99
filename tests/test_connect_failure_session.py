"""``specdash connect`` when the connection never comes up: one error line, exit 1, and no junk session file in
the sessions folder; a session in which something happened is kept.

The console needs a terminal, so the CLI runs in a real pseudo-terminal (stdout/stdin on the pty, stderr on a
pipe), with HOME and the XDG folders in tmp_path so it never touches the real sessions folder. Traffic goes to
127.0.0.1 only: a port nothing listens on (refused) and the test sshd offering a key other than the trusted one.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

from sshd import fingerprint, free_port
from support.guard import guard

from specdash.session.reader import read_session
from specdash.session.recorder import Recorder

ANSI_RE = re.compile(rb"\x1b\[[0-9;?<>=]*[A-Za-z~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")


def isolated_env(tmp_path: Path) -> dict[str, str]:
    """The environment with HOME and every XDG folder under tmp_path and no SPECDASH_* overrides."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPECDASH_", "XDG_"))}
    home = tmp_path / "home"
    home.mkdir()
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"), XDG_STATE_HOME=str(home / ".local/state"),
               XDG_DATA_HOME=str(home / ".local/share"), XDG_CACHE_HOME=str(home / ".cache"),
               TERM="xterm-256color")
    return env


def sessions_dir(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".local" / "state" / "specdash" / "sessions"


def run_console(args: list[str], env: dict[str, str], wait_for: bytes | None, timeout_s: float = 30.0,
                answer: bytes | None = None):
    """Run ``specdash ARGS`` on a 160x48 pty (Textual draws on stderr, so all three streams are the pty). When the
    terminal asks ``[y/N]`` (an unknown host key), type ``answer``; once the screen shows ``wait_for`` press
    ``q`` (``wait_for=None``: the console must never open). Returns (exit status, the lines printed after the
    console left the alternate screen, or all lines when it never opened — what the user reads in the terminal),
    and the whole screen text is in ``run_console.screen``."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 48, 160, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "specdash", *args], stdin=slave, stdout=slave, stderr=slave,
                            env=env, start_new_session=True)
    os.close(slave)
    output = b""
    pressed = answered = False
    try:
        deadline = time.monotonic() + guard(timeout_s)
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer of the terminal is gone
                    break
                if not chunk:
                    break
                output += chunk
            elif proc.poll() is not None:
                break
            if answer is not None and not answered and b"[y/N]" in output:
                os.write(master, answer + b"\n")
                answered = True
            if wait_for is not None and not pressed and wait_for in ANSI_RE.sub(b"", output):
                time.sleep(0.3)
                os.write(master, b"q")
                pressed = True
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()  # by PID: the console we started
            proc.wait()
        os.close(master)
    screen = ANSI_RE.sub(b"", output).decode("utf-8", "replace")
    run_console.screen = screen
    if wait_for is not None:
        assert pressed, f"the console never showed {wait_for!r}: {screen[-800:]!r}"
    else:
        assert b"\x1b[?1049h" not in output, f"the console opened: {screen[-800:]!r}"
    after = output.rpartition(b"\x1b[?1049l")[2]  # leaving the alternate screen: the console is gone
    lines = [line.strip() for line in ANSI_RE.sub(b"", after).decode("utf-8", "replace").splitlines()]
    return proc.returncode, [line for line in lines if line]


def test_refused_port_prints_one_line_exits_1_before_the_console_opens(tmp_path):
    port = free_port()  # bound and closed: nothing listens there
    rc, lines = run_console(["connect", f"nosuchuser@127.0.0.1:{port}"], isolated_env(tmp_path), wait_for=None)
    assert rc == 1
    assert lines == [f"specdash connect: error: cannot connect to nosuchuser@127.0.0.1:{port}: Connection refused"]
    assert not sessions_dir(tmp_path).exists() or list(sessions_dir(tmp_path).iterdir()) == []


def test_missing_identity_file_is_named_before_any_connection(tmp_path):
    port = free_port()  # nothing listens: the key file is checked first
    rc, lines = run_console(["connect", f"someone@127.0.0.1:{port}", "-i", "/nope/key"], isolated_env(tmp_path),
                            wait_for=None)
    assert rc == 1
    assert lines == ["specdash connect: error: identity file /nope/key: No such file or directory"]


def test_changed_host_key_prints_one_line_exits_1_and_keeps_no_session(sshd, tmp_path):
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text(sshd.known_hosts_line(sshd.make_second_host_key()))
    rc, lines = run_console(["connect", f"{sshd.user}@127.0.0.1:{sshd.port}", "-i", str(sshd.client_key),
                             "--known-hosts", str(known_hosts)], isolated_env(tmp_path), wait_for=None)
    assert rc == 1
    assert len(lines) == 1, lines
    assert lines[0].startswith("specdash connect: error: ") and "HOST KEY CHANGED" in lines[0]
    assert not sessions_dir(tmp_path).exists() or list(sessions_dir(tmp_path).iterdir()) == []


def test_unknown_host_key_is_asked_on_the_terminal_and_no_refuses(sshd, tmp_path):
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    rc, lines = run_console(["connect", f"{sshd.user}@127.0.0.1:{sshd.port}", "-i", str(sshd.client_key),
                             "--known-hosts", str(known_hosts)], isolated_env(tmp_path), wait_for=None,
                            answer=b"n")
    fp = fingerprint(sshd.host_key.with_suffix(".pub"))
    assert rc == 1
    assert lines[:3] == [f"The host [127.0.0.1]:{sshd.port} is not in {known_hosts}.",
                         f"Its ssh-ed25519 key fingerprint is {fp}.",
                         f"Trust this key and add it to {known_hosts}? [y/N] n"]
    assert "failed" not in run_console.screen.split("[y/N]")[0]  # the question is neutral
    assert lines[3:] == [f"specdash connect: error: host key of [127.0.0.1]:{sshd.port} not trusted "
                         f"(ssh-ed25519 {fp}): not connected"]
    assert known_hosts.read_text() == ""


def test_unknown_host_key_trusted_on_the_terminal_opens_the_console(sshd, tmp_path):
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    log = tmp_path / "server.log"
    log.write_text("[2025-01-01 10:00:00] The server is fired up and ready to roll!\n")
    rc, lines = run_console(["connect", f"{sshd.user}@127.0.0.1:{sshd.port}", "-i", str(sshd.client_key),
                             "--known-hosts", str(known_hosts), "--log", str(log), "--no-record"],
                            isolated_env(tmp_path), wait_for=b"fired up", answer=b"y")
    assert rc == 0, lines
    assert known_hosts.read_text().startswith(f"[127.0.0.1]:{sshd.port} ssh-ed25519 ")


def test_a_session_that_connected_is_kept_and_exits_0(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[2025-01-01 10:00:00] The server is fired up and ready to roll!\n")
    rc, lines = run_console(["connect", "local", "--log", str(log)], isolated_env(tmp_path), wait_for=b"fired up")
    assert rc == 0, lines
    (path,) = sessions_dir(tmp_path).iterdir()
    assert lines == [f"session recorded to {path}"]
    session = read_session(path)
    assert any(ev.state == "connected" for ev in session.of_kind("connection"))
    assert [text for ev in session.of_kind("log") for _, text in ev.lines] == log.read_text().splitlines()


def record_and_finish(path: Path, *events: tuple[str, dict], discard_if_empty: bool = True) -> bool:
    rec = Recorder(path, {"host": "gpu-box"}, discard_if_empty=discard_if_empty, timer=False)
    for kind, fields in events:
        rec.record(kind, **fields)
    return rec.finish()


def test_the_keep_rule(tmp_path):
    """Kept: the connection came up (even if it dropped), or anything a replay shows from the host; discarded:
    failed attempts, key presses and commands only typed into the builder."""
    failed = [("connection", {"state": "connecting"}), ("connection", {"state": "failed", "detail": "refused"}),
              ("action", {"binding": "app.quit"}), ("command", {"action": "validated", "command": "python -m x"})]
    assert not record_and_finish(tmp_path / "failed.yaml", *failed)
    assert not (tmp_path / "failed.yaml").exists()
    dropped = [("connection", {"state": "connected"}), ("connection", {"state": "retrying", "detail": "lost"}),
               ("connection", {"state": "failed", "detail": "gave up"})]
    assert record_and_finish(tmp_path / "dropped.yaml", *dropped)
    assert read_session(tmp_path / "dropped.yaml").closed
    for kind, fields in (("log", {"lines": [[0, "a"]], "source": "/l"}), ("gpu", {"gpus": []}),
                         ("finding", {"code": "crash"}), ("command", {"action": "launched", "command": "x"}),
                         ("bench", {"result": {}})):
        assert record_and_finish(tmp_path / f"{kind}.yaml", *failed, (kind, fields)), kind
        assert (tmp_path / f"{kind}.yaml").exists()
    # a file the user named (--record PATH) is kept whatever happened
    assert record_and_finish(tmp_path / "named.yaml", *failed, discard_if_empty=False)
    assert read_session(tmp_path / "named.yaml").of_kind("connection")
