"""``connect --log FILE``: the header never says "ready" for a server no process is behind any more.

The log's last lines say "ready"; the header asks the host whether a running SGLang server writes the file
(its stdout or stderr) and says ``unknown`` with what the log last said when none does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from support.fake_server import FAKE_SERVER
from support.gpu import FakeGpuState
from support.pilot import wait_until

from specdash.app import log_liveness
from specdash.app.main import SpecdashApp
from specdash.hosts.base import CommandResult
from specdash.hosts.local import LocalHost
from specdash.logs.discover import WRITER_LIVE, WRITER_NONE, WRITER_UNKNOWN, held_open_for_writing, log_writer

REPO = Path(__file__).resolve().parent.parent
DEMO_LOG = (REPO / "sessions" / "demo-server.log").read_text().splitlines()


class _CannedPs(LocalHost):
    """LocalHost whose ``ps`` lists only the given PIDs' rows (other sessions' servers on this machine left out);
    every other command (readlink, tail, nvidia-smi) runs for real."""

    is_local = False

    def __init__(self, pids: list[int], env: dict[str, str] | None = None) -> None:
        super().__init__(env=env)
        self.pids = pids

    async def run(self, command: str, timeout_s: float = 30.0, input: str | None = None):
        if command.startswith("id -un; ps"):
            rows = "".join(f"{pid:>7} {1:>7} {5:>5} root     {' '.join(FAKE_SERVER)}\n" for pid in self.pids)
            return CommandResult(0, f"root\n{rows}", "")
        return await super().run(command, timeout_s, input)


async def test_log_writer_live_none_and_unknown(tmp_path, started):
    log = tmp_path / "server.log"
    with open(log, "wb") as out:
        writer = started(stdout=out, stderr=subprocess.STDOUT)
    assert await log_writer(_CannedPs([writer.pid]), str(log)) == (WRITER_LIVE, writer.pid)
    # the same file through a symlink is the same log
    link = tmp_path / "link.log"
    link.symlink_to(log)
    assert await log_writer(_CannedPs([writer.pid]), str(link)) == (WRITER_LIVE, writer.pid)
    # no server at all, or every server writes another file: none writes this log
    assert await log_writer(_CannedPs([]), str(log)) == (WRITER_NONE, None)
    assert await log_writer(_CannedPs([writer.pid]), str(tmp_path / "old.log")) == (WRITER_NONE, None)
    # a server whose output goes to a pipe (| tee): cannot tell while something holds the log open for writing
    # (tee would); a log nothing writes is an old one whatever runs beside it
    piped = started(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    old = tmp_path / "old.log"
    old.write_text("ready\n")
    assert await log_writer(_CannedPs([piped.pid]), str(old)) == (WRITER_NONE, None)
    tee = subprocess.Popen([sys.executable, "-c", "import sys, time\nf = open(sys.argv[1], 'a')\nprint(flush=True)\n"
                            "time.sleep(60)", str(old)], stdout=subprocess.PIPE, start_new_session=True)
    try:
        tee.stdout.readline()  # it has the file open
        assert await log_writer(_CannedPs([piped.pid]), str(old)) == (WRITER_UNKNOWN, None)
    finally:
        tee.kill()
        tee.wait()


async def test_held_open_for_writing_counts_writers_not_readers(tmp_path):
    host = LocalHost()
    log = tmp_path / "odd [1] * ?.log"  # find -lname reads a pattern: these characters are matched as themselves
    log.write_text("x\n")
    assert await held_open_for_writing(host, str(log)) is False
    assert await held_open_for_writing(host, str(tmp_path / "missing.log")) is False
    procs = []
    try:
        for mode in ("r", "a"):  # a reader (specdash's own tail is one) does not count; a writer does
            procs.append(subprocess.Popen([sys.executable, "-c", f"import sys, time\nf = open(sys.argv[1], '{mode}')\n"
                                           "print(flush=True)\ntime.sleep(60)", str(log)],
                                          stdout=subprocess.PIPE, start_new_session=True))
            procs[-1].stdout.readline()
            assert await held_open_for_writing(host, str(log)) is (mode == "a"), mode
        # the same file through a symlink
        link = tmp_path / "link.log"
        link.symlink_to(log)
        assert await held_open_for_writing(host, str(link)) is True
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def header(app) -> str:
    """The header line as the screen shows it (cut at the terminal's width)."""
    return app.status_bar.render_line(0).text


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_old_log_of_a_gone_server_is_not_shown_ready(tmp_path, monkeypatch, started, size):
    monkeypatch.setattr(log_liveness, "LOG_WRITER_POLL_S", 0.2)
    log = tmp_path / "server.log"
    log.write_text("\n".join(DEMO_LOG) + "\n")  # ends with the server ready
    gpu = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    host = _CannedPs([], env=gpu.env())
    app = SpecdashApp(host, log_path=str(log), gpu_interval_s=0.5)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: "no running server" in header(app), what="header saying no server")
        line = header(app)
        assert "server: unknown (no running server" in line and "server: ready" not in line
        if size[0] >= 160:
            assert "it last said: ready (" in line
        # a server starts writing the log: the header says what the log says again
        with open(log, "ab") as out:
            writer = started(stdout=out, stderr=subprocess.STDOUT)
        host.pids = [writer.pid]
        await wait_until(pilot, lambda: "server: ready" in header(app), what="header ready again")
        assert "no running server" not in header(app)


async def test_an_old_log_beside_another_server_writing_to_a_pipe_is_not_shown_ready(tmp_path, monkeypatch, started):
    """``--log OLD_LOG`` while another server runs with its output into a pipe: the header said ``server: ready (from
    /health on port P of PID N; its output goes to a pipe, not OLD_LOG)`` — another server's state for this log.
    Nothing holds the old log open for writing, so no server writes it."""
    monkeypatch.setattr(log_liveness, "LOG_WRITER_POLL_S", 0.2)
    log = tmp_path / "server.log"
    log.write_text("\n".join(DEMO_LOG) + "\n")  # ends with the server ready
    piped = started(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    gpu = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    app = SpecdashApp(_CannedPs([piped.pid], env=gpu.env()), log_path=str(log), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: "no running server" in header(app), what="header saying no server",
                         state=lambda: header(app))
        assert "server: unknown (no running server" in header(app) and "from /health" not in header(app)
