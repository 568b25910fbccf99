"""Finding the running SGLang server and its log through a Host (real processes on LocalHost)."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from support.fake_server import FAKE_SERVER

from specdash.hosts.base import CommandResult
from specdash.hosts.local import LocalHost
from specdash.logs.discover import discover_server_log, explain_target, parse_ps, same_user

REPO = Path(__file__).resolve().parent.parent



async def test_server_writing_to_a_file_is_found_with_its_log_path(tmp_path, started):
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        proc = started(stdout=out, stderr=subprocess.STDOUT)
    found = await discover_server_log(LocalHost(), pid=proc.pid)
    assert found.pid == proc.pid and found.path == str(log)
    assert found.explanation == f"PID {proc.pid} writes to {log}"
    # without a PID the candidates include it (other servers may run on a shared machine)
    anyone = await discover_server_log(LocalHost())
    assert proc.pid in [c.pid for c in anyone.candidates]


async def test_server_writing_to_a_pipe_is_explained(started):
    proc = started(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    found = await discover_server_log(LocalHost(), pid=proc.pid)
    assert found.pid == proc.pid and found.path is None
    assert "writes to a pipe" in found.explanation and "--log" in found.explanation


async def test_stdout_to_dev_null_but_stderr_to_a_file_uses_stderr(tmp_path, started):
    log = tmp_path / "err.log"
    with open(log, "wb") as err:
        proc = started(stdout=subprocess.DEVNULL, stderr=err)
    found = await discover_server_log(LocalHost(), pid=proc.pid)
    assert found.path == str(log) and "stderr" in found.explanation


async def test_pid_that_is_not_a_server_is_reported():
    found = await discover_server_log(LocalHost(), pid=os.getpid())
    assert found.pid is None and found.path is None and "not a running SGLang server" in found.explanation


def test_terminal_socket_and_deleted_targets_are_explained():
    path, text = explain_target(42, "/dev/pts/3")
    assert path is None and "terminal (/dev/pts/3)" in text and "> server.log 2>&1" in text
    assert "journal" in explain_target(42, "socket:[1234]")[1]
    assert "deleted" in explain_target(42, "/tmp/x.log (deleted)")[1]
    assert "another user's" in explain_target(42, "")[1]


def test_ps_parsing_prefers_launch_server_and_falls_back_to_process_titles():
    ps = """\
      1       0  9999 root     /sbin/init
    100       1   500 alice    python3 -m sglang.launch_server --model-path m --port 30000
    101     100   490 alice    sglang::scheduler_TP0
    200       1    20 bob      sglang serve --model-path n
    300       1    30 alice    specdash connect local
"""
    cands = parse_ps(ps)
    assert [c.pid for c in cands] == [200, 100]  # newest first; titles and other programs are not servers
    only_titles = parse_ps("  7  1  10 u  sglang::scheduler_DP0_TP0_EP0\n  8  7  9 u  sglang::detokenizer\n")
    assert [c.pid for c in only_titles] == [7]


def test_own_process_and_its_ancestors_are_left_out_by_pid_not_by_name():
    ps = """\
    400       1    90 alice    bash -c specdash validate -- python -m sglang.launch_server --model-path m
    401     400    90 alice    /usr/bin/python3 /usr/bin/specdash validate -- python -m sglang.launch_server
    500       1    60 alice    /home/alice/specdash/.venv/bin/python -m sglang.launch_server --model-path m
"""
    assert [c.pid for c in parse_ps(ps, own_pid=401)] == [500]  # a server run from a 'specdash' folder counts
    assert [c.pid for c in parse_ps(ps)] == [500, 400, 401]  # another host's table: nothing is ours


@pytest.mark.parametrize("ps_user, login, same", [
    ("alice", "alice", True), ("alice", "alicia", False), ("verylon+", "verylongname", True),
    ("verylon+", "verylazy", False), ("alice", "", False),
])
def test_ps_user_column_matches_the_login(ps_user, login, same):
    assert same_user(ps_user, login) is same


async def test_real_server_started_from_a_specdash_folder_is_discovered(tmp_path):
    folder = tmp_path / "specdash" / "bin"
    folder.mkdir(parents=True)
    (folder / "python").symlink_to(sys.executable)
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([str(folder / "python"), *FAKE_SERVER[1:]], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        found = await discover_server_log(LocalHost())
        assert proc.pid in [c.pid for c in found.candidates]
        assert "specdash" in next(c.args for c in found.candidates if c.pid == proc.pid)
        by_pid = await discover_server_log(LocalHost(), pid=proc.pid)
        assert by_pid.path == str(log)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def test_discovering_process_whose_own_command_line_names_the_marker_is_not_a_candidate(tmp_path):
    """A real process runs discovery with ``-m sglang.launch_server`` in its own argv (as ``specdash validate --
    python -m sglang.launch_server`` has): it must not find itself."""
    code = ("import asyncio, os, sys; sys.path.insert(0, sys.argv[1]); "
            "from specdash.hosts.local import LocalHost; from specdash.logs.discover import discover_server_log; "
            "found = asyncio.run(discover_server_log(LocalHost())); "
            "print(os.getpid(), [c.pid for c in found.candidates])")
    out = subprocess.run([sys.executable, "-c", code, str(REPO), "-m", "sglang.launch_server", "--model-path", "x"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    own, _, pids = out.stdout.partition(" ")
    assert own.strip() and own.strip() not in pids.replace("[", " ").replace("]", " ").replace(",", " ").split()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
async def test_another_users_newer_server_is_listed_but_not_followed(tmp_path, started):
    """A real server of mine, then a newer real one of ``nobody``'s: discovery follows mine (a public /bin/sh
    stands in for the other user's server: a private interpreter could not start as nobody)."""
    import pwd

    log = tmp_path / "mine.log"
    with open(log, "wb") as out:
        mine = started(stdout=out, stderr=subprocess.STDOUT)
    # the other's server must be strictly newer in ps's whole seconds: start it once mine is a second old
    while int(subprocess.run(["ps", "-o", "etimes=", "-p", str(mine.pid)], capture_output=True, text=True,
                             timeout=30).stdout.strip() or 0) < 1:
        await asyncio.sleep(0.1)
    nobody = pwd.getpwnam("nobody")
    other = subprocess.Popen(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                              "/bin/sh", "-c", "while :; do sleep 1; done", "sh", "-m", "sglang.launch_server"],
                             start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(1000):  # until setpriv has switched user (its argv names the marker before and after exec)
            if Path(f"/proc/{other.pid}/status").read_text().find(f"Uid:\t{nobody.pw_uid}") >= 0:
                break
            await asyncio.sleep(0.02)
        found = await discover_server_log(LocalHost())
        assert other.pid in [c.pid for c in found.candidates if c.user == "nobody"], found.candidates
        by_pid = {c.pid: c for c in found.candidates}
        assert by_pid[other.pid].elapsed_s < by_pid[mine.pid].elapsed_s  # newer than mine ...
        assert found.pid != other.pid and found.pid is not None  # ... and still not followed
        assert found.candidates[0].user != "nobody"
        assert mine.pid in [c.pid for c in found.candidates]
    finally:
        try:
            os.killpg(other.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        other.wait(timeout=10)


class _CannedHost(LocalHost):
    """LocalHost whose discovery ``ps`` answer is a given table (as another machine's would be)."""

    is_local = False

    def __init__(self, login: str, table: str) -> None:
        super().__init__()
        self._answer = f"{login}\n{table}"

    async def run(self, command: str, timeout_s: float = 30.0, input: str | None = None):
        if command.startswith("id -un; ps"):
            return CommandResult(0, self._answer, "")
        return await super().run(command, timeout_s, input)


async def test_only_other_users_servers_are_named_not_followed():
    host = _CannedHost("alice", "    200       1    20 bob      sglang serve --model-path n\n")
    found = await discover_server_log(host)
    assert found.pid is None and found.path is None
    assert "only other users' SGLang servers" in found.explanation and "PID 200 (bob)" in found.explanation
