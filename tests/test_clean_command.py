"""``specdash clean TARGET [--yes]``: kills only orphans/zombies, waits for the memory, exit 0 / 1."""

from __future__ import annotations

from support.gpu import FakeGpuState, pid_alive, poll_until, reap_group, spawn_holder, spawn_orphans
from support.gpu import run_specdash as specdash


def test_clean_yes_kills_orphans_only_and_reports_memory_released(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    pgid, pids = spawn_orphans(2)
    bystander = spawn_holder("python3")  # my own process with a live parent (this test): never touched
    try:
        state.add_process(pids[0], 0, 36000)
        state.add_process(pids[1], 1, 37000)
        state.add_process(bystander.pid, 0, 2000)
        out = specdash(state, "clean", "local", "--yes", "--grace-s", "2")
        assert out.returncode == 0, out.stdout + out.stderr
        assert poll_until(lambda: not any(pid_alive(p) for p in pids))
        assert bystander.poll() is None
        assert "killed 2 of 2 processes: 73000 MiB -> 0 MiB held" in out.stdout
        seen = (out.stdout + out.stderr).count("killed 2 of 2 processes")
        assert seen == 1, f"the result line is printed {seen} times:\n{out.stdout}{out.stderr}"
        assert "GPU 0: 38004 -> 2004 MiB" in out.stdout and "GPU memory released" in out.stdout
        assert f"SIGTERM to process group {pgid}" in out.stderr
    finally:
        reap_group(pgid)
        reap_group(bystander.pid)
        bystander.wait()


def test_clean_asks_and_kills_nothing_without_consent(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    pgid, pids = spawn_orphans(1)
    try:
        state.add_process(pids[0], 0, 1000)
        out = specdash(state, "clean", "local")  # stdin is not a terminal and no --yes
        assert out.returncode == 1 and "use --yes" in out.stdout
        assert pid_alive(pids[0])
    finally:
        reap_group(pgid)


def test_clean_exits_1_when_memory_is_not_released(tmp_path):
    """The driver keeps listing the PID after it died (``keep_when_dead``): not released -> exit 1."""
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    pgid, pids = spawn_orphans(1)
    try:
        state.add_process(pids[0], 0, 1000, keep_when_dead=True)
        out = specdash(state, "clean", "local", "--yes", "--grace-s", "1", "--timeout-s", "1")
        assert out.returncode == 1 and "NOT released" in out.stderr
        assert not pid_alive(pids[0])
    finally:
        reap_group(pgid)


def test_clean_with_nothing_to_do_exits_0(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    out = specdash(state, "clean", "local", "--yes")
    assert out.returncode == 0 and "nothing to clean: no orphaned GPU memory" in out.stdout
