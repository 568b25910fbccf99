"""Finding the running SGLang server and its log through a Host (real processes on LocalHost)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from specdash.hosts.local import LocalHost
from specdash.logs.discover import discover_server_log, explain_target, parse_ps

# a stand-in server: a real process whose command line names sglang.launch_server (argv of python -c)
FAKE_SERVER = [sys.executable, "-c", "import sys, time; print('hello', flush=True); time.sleep(60)",
               "-m", "sglang.launch_server", "--model-path", "discover-test-model"]


@pytest.fixture
def started():
    procs: list[subprocess.Popen] = []

    def start(**kwargs) -> subprocess.Popen:
        proc = subprocess.Popen(FAKE_SERVER, start_new_session=True, **kwargs)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:  # only the processes this test started, by process group
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


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
    assert [c.pid for c in cands] == [200, 100]  # newest first; titles and specdash itself are not servers
    only_titles = parse_ps("  7  1  10 u  sglang::scheduler_DP0_TP0_EP0\n  8  7  9 u  sglang::detokenizer\n")
    assert [c.pid for c in only_titles] == [7]
