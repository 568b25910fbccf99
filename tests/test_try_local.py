"""README's "try the live loop without a GPU" recipe (``tools/try_local.sh``): its environment, as a user's shell
gets it, runs SGLang's double and shows its GPU processes through the fake nvidia-smi."""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys

from support.double import harness
from support.gpu import poll_until, reap_group
from support.guard import guard

REPO = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = REPO / "tools" / "try_local.sh"


def recipe_env(tmp_path: pathlib.Path, scenario: str) -> dict[str, str]:
    """The environment a shell has after ``eval "$(tools/try_local.sh --print-env SCENARIO)"``."""
    base = {**os.environ, "SPECDASH_TRY_DIR": str(tmp_path), "PYTHON": sys.executable}
    lines = subprocess.run(["bash", str(SCRIPT), "--print-env", scenario], env=base, capture_output=True,
                           text=True, timeout=60, check=True).stdout
    dump = "import json, os; print(json.dumps(dict(os.environ)))"
    out = subprocess.run(["bash", "-c", 'eval "$1"; exec "$2" -c "$3"', "_", lines, sys.executable, dump],
                         env=base, capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


def test_readme_names_the_recipe():
    readme = (REPO / "README.md").read_text()
    assert "tools/try_local.sh" in readme and SCRIPT.stat().st_mode & 0o111


def test_recipe_env_launches_the_double_and_ps_sees_its_server(tmp_path):
    env = recipe_env(tmp_path, "fast")
    assert shutil.which("nvidia-smi", path=env["PATH"]) == str(REPO / "tests" / "fakes" / "bin" / "nvidia-smi")
    assert env["XDG_STATE_HOME"] == str(tmp_path / "state")
    port = harness.free_port()
    with open(tmp_path / "server.log", "wb") as log:
        proc = subprocess.Popen(["bash", "-c", harness.launch_command(port)], env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        def server_rows() -> list[dict]:
            out = subprocess.run([sys.executable, "-m", "specdash", "ps", "local", "--json"], env=env,
                                 capture_output=True, text=True, timeout=60)
            return [p for p in json.loads(out.stdout)["processes"]
                    if p["class"] == "server" and p["pgid"] == proc.pid and (p["used_mib"] or 0) > 0]

        assert poll_until(lambda: bool(server_rows()), timeout_s=60), (tmp_path / "server.log").read_text()[-2000:]
        text = subprocess.run([sys.executable, "-m", "specdash", "ps", "local"], env=env, capture_output=True,
                              text=True, timeout=60).stdout
        assert "sglang::scheduler" in text and "NVIDIA H100 80GB HBM3" in text
    finally:
        reap_group(proc.pid)
        proc.wait()


def _script_env(tmp_path: pathlib.Path) -> dict[str, str]:
    env = {**os.environ, "TMPDIR": str(tmp_path), "PYTHON": sys.executable}
    env.pop("SPECDASH_TRY_DIR", None)
    return env


def test_print_env_without_a_folder_reuses_one_folder(tmp_path):
    env = _script_env(tmp_path)
    outputs = [subprocess.run(["bash", str(SCRIPT), "--print-env", "fast"], env=env, capture_output=True, text=True,
                              timeout=60, check=True).stdout for _ in range(3)]
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert folders == [f"specdash-try-{os.getuid()}"], folders  # one folder, not a new one per call
    assert all(f"XDG_STATE_HOME={tmp_path / folders[0] / 'state'}" in out for out in outputs), outputs[0]


def test_without_a_terminal_it_says_so_and_starts_nothing(tmp_path):
    out = subprocess.run(["bash", str(SCRIPT), "fast"], env=_script_env(tmp_path), capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)
    assert out.returncode == 2
    assert "the console needs a terminal and stdout is not one" in out.stderr and "nothing was started" in out.stderr
    assert "GPU processes left" not in out.stdout + out.stderr
    assert list(tmp_path.iterdir()) == []  # no state folder left behind


def test_the_console_opens_with_the_printed_command_in_the_builder(tmp_path):
    """In a terminal (a pty, 100x30): the console's builder (F3) shows the launch command the script printed."""
    import pty
    import re
    import select
    import time

    log = tmp_path / "empty.log"
    log.write_text("")  # a log to follow: no chooser over other servers running on this machine
    env = {**_script_env(tmp_path), "SPECDASH_TRY_DIR": str(tmp_path / "try"), "TERM": "xterm-256color",
           "COLUMNS": "100", "LINES": "30"}
    (tmp_path / "try").mkdir()
    master, slave = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    proc = subprocess.Popen(["bash", str(SCRIPT), "fast", "--log", str(log), "--no-record"], env=env, stdin=slave,
                            stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    seen = b""

    def read_until(pattern: bytes, timeout_s: float = 60.0) -> bool:
        nonlocal seen
        deadline = time.monotonic() + guard(timeout_s)
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    return pattern in seen
            if pattern in seen:
                return True
        return False

    try:
        assert read_until(b"\x1b[?1049h"), seen[-2000:]  # the console's alternate screen
        printed = seen.decode("utf-8", "replace")
        port = re.search(r"--port (\d+)", printed).group(1)
        before = len(seen)
        plain = lambda: re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen[before:].decode("utf-8", "replace"))  # noqa: E731
        deadline = time.monotonic() + guard(60)
        while f"--port {port}" not in plain() and time.monotonic() < deadline:
            # F3, again while the builder has not shown: a key sent before the console took the terminal is lost
            os.write(master, b"\x1bOR")
            read_until(b"\x00", timeout_s=2)
        assert f"--port {port}" in plain(), plain()[-3000:]
        assert "--speculative-num-draft-tokens 8" in plain()
        os.write(master, b"\x11")  # ctrl+q (the editor has focus: q would be typed)
        assert read_until(b"GPU processes left", timeout_s=60), plain()[-2000:]
        # how to come back: this script with the same folder (a plain `specdash connect local` has another state)
        assert f"re-attach; the console's stop key stops it, F1 lists the keys): SPECDASH_TRY_DIR={tmp_path / 'try'} tools/try_local.sh" in plain()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
        os.close(master)


def test_connect_command_file_errors_are_one_line(tmp_path):
    def connect(*args):
        return subprocess.run([sys.executable, "-m", "specdash", "connect", "local", *args], capture_output=True,
                              text=True, timeout=60)

    missing = connect("--command", str(tmp_path / "nope.sh"))
    assert missing.returncode == 2
    assert f"cannot read the launch command file {tmp_path / 'nope.sh'}: No such file or directory" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1 and "Traceback" not in missing.stderr
    (tmp_path / "empty.sh").write_text("  \n")
    empty = connect("--command", str(tmp_path / "empty.sh"))
    assert empty.returncode == 2 and "is empty" in empty.stderr
