"""``connect --log FILE``: the header never says "ready" for a server no process is behind any more.

The log's last lines say "ready"; the header asks the host whether a running SGLang server writes the file
(its stdout or stderr) and says ``unknown`` with what the log last said when none does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from support.fake_server import FAKE_SERVER
from support.gpu import FakeGpuState
from support.pilot import wait_until

from specdash.app import log_liveness
from specdash.app.main import SpecdashApp
from specdash.hosts.base import CommandResult
from specdash.hosts.local import LocalHost
from specdash.logs.discover import WRITER_LIVE, WRITER_NONE, WRITER_UNKNOWN, log_writer

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
    # a server whose output goes to a pipe (| tee): cannot tell
    piped = started(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert await log_writer(_CannedPs([piped.pid]), str(tmp_path / "old.log")) == (WRITER_UNKNOWN, None)


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
