"""A launch with secrets in its environment keeps them off every command line on the host (`ps -eo args`, sampled
the whole time, through LocalHost and through the real test sshd), out of the run files (command.txt, run.json
hold the redacted command), and the run directory is 0700 with 0600 files; the server still gets the secret in
its environment, and a restart of a run found again from run.json launches the exact command."""

from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import threading
import time

import pytest
from support.guard import guard

from specdash.hosts.local import LocalHost
from specdash.server.launch import launch
from specdash.server.runs import find_runs

pytestmark = pytest.mark.timeout(guard(90))  # a hang guard, scaled like every wait

HF = "hf_QwErTyUiOpAsDfGhJkLzXcVbNm0123456789"
PWD = "Pw-9x!LmN2q"
PAT = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


class PsWatch:
    """Samples ``ps -eo args`` in a thread until stopped; ``seen`` holds every line that contained a secret."""

    def __init__(self, secrets: list[str]) -> None:
        self.secrets = secrets
        self.seen: list[str] = []
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            out = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
            self.samples += 1
            self.seen += [line for line in out.splitlines() if any(s in line for s in self.secrets)]

    def __enter__(self) -> PsWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _environ(pid: int) -> dict[str, str]:
    raw = pathlib.Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


async def _launch_and_check(host, run_dir: pathlib.Path, started_groups) -> None:
    command = f"HF_TOKEN={HF} MYSQL_PWD='{PWD}' GH_PAT={PAT} sleep 60"
    with PsWatch([HF, PWD, PAT]) as watch:
        handle = await launch(host, command, run_dir=str(run_dir))
        started_groups.append(handle.pgid)
        deadline = time.monotonic() + 20
        while not _children(handle.leader_pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        seen_from = watch.samples
        while watch.samples < seen_from + 3 and time.monotonic() < deadline + 20:  # ps looked while it ran
            time.sleep(0.05)
    assert watch.samples > 0
    assert watch.seen == []
    # the server got its environment
    (child,) = _children(handle.leader_pid)
    assert _environ(child)["HF_TOKEN"] == HF
    assert _environ(child)["MYSQL_PWD"] == PWD
    # run files: 0700 dir, 0600 files, redacted text
    assert stat.S_IMODE(run_dir.stat().st_mode) == 0o700
    for name in ("command.sh", "command.txt", "run.json", "server.log", "leader.pid"):
        assert stat.S_IMODE((run_dir / name).stat().st_mode) == 0o600, name
    shown = (run_dir / "command.txt").read_text()
    record = json.loads((run_dir / "run.json").read_text())
    for secret in (HF, PWD, PAT):
        assert secret not in shown and secret not in record["command"]
    assert shown.strip() == "HF_TOKEN=<redacted> MYSQL_PWD='<redacted>' GH_PAT=<redacted> sleep 60"
    assert handle.command == command  # the live handle keeps the exact command (for restart)


async def test_local_launch_keeps_secrets_off_ps_and_run_files(tmp_path, started_groups):
    host = LocalHost()
    await host.connect()
    await _launch_and_check(host, tmp_path / "run", started_groups)


async def test_ssh_launch_keeps_secrets_off_ps_and_run_files(tmp_path, sshd, started_groups):
    host = sshd.make_host()
    await host.connect()
    try:
        await _launch_and_check(host, tmp_path / "run", started_groups)
    finally:
        await host.close()


async def test_new_run_dirs_are_private(tmp_path, started_groups, monkeypatch):
    state = tmp_path / "state"
    host = LocalHost(env={**os.environ, "SPECDASH_STATE_DIR": str(state)})
    await host.connect()
    handle = await launch(host, f"HF_TOKEN={HF} sleep 60")
    started_groups.append(handle.pgid)
    for folder in (state, state / "runs", pathlib.Path(handle.run_dir)):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    found = await find_runs(host)
    assert [h.command for h in found] == ["HF_TOKEN=<redacted> sleep 60"]


async def test_restart_of_a_found_run_launches_the_exact_command(tmp_path, started_groups):
    from specdash.server.restart import _exact_command

    state = tmp_path / "state"
    host = LocalHost(env={**os.environ, "SPECDASH_STATE_DIR": str(state)})
    await host.connect()
    command = f"HF_TOKEN={HF} sleep 60"
    handle = await launch(host, command)
    started_groups.append(handle.pgid)
    (found,) = await find_runs(host)
    assert await _exact_command(host, found) == command


async def test_the_command_runs_under_the_users_umask(tmp_path, started_groups):
    """The run files are private, but what the server itself writes (caches, downloads) keeps the user's umask."""
    host = LocalHost()
    await host.connect()
    out = tmp_path / "umask.txt"
    handle = await launch(host, f"umask > {out}; env > {tmp_path / 'env.txt'}", run_dir=str(tmp_path / "run"))
    started_groups.append(handle.pgid)
    for _ in range(200):
        if (tmp_path / "run" / "exit_status").exists():
            break
        time.sleep(0.05)
    mine = os.umask(0)
    os.umask(mine)
    assert int(out.read_text().strip(), 8) == mine
    assert "SPECDASH_UMASK" not in (tmp_path / "env.txt").read_text()
    assert stat.S_IMODE((tmp_path / "run" / "exit_status").stat().st_mode) == 0o600


async def test_run_files_hold_no_secret_of_the_corpus(tmp_path, started_groups):
    """A real launch whose command carries the redaction corpus (in a quoted here-document, so the shell runs
    nothing of it): command.txt and run.json hold none of the secrets, command.sh holds the command exactly."""
    from redaction_corpus import cases

    chosen = cases()[::5]
    body = "\n".join(text for text, _ in chosen)
    command = f"cat > /dev/null <<'SPECDASH_CORPUS_END'\n{body}\nSPECDASH_CORPUS_END\nsleep 30"
    host = LocalHost()
    await host.connect()
    run_dir = tmp_path / "run"
    handle = await launch(host, command, run_dir=str(run_dir))
    started_groups.append(handle.pgid)
    stored = (run_dir / "command.txt").read_text() + (run_dir / "run.json").read_text()
    assert len(chosen) > 300
    assert [secret for _, secret in chosen if secret in stored] == []
    assert (run_dir / "command.sh").read_text() == command + "\n"
