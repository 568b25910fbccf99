"""Safe kill with real processes that this test starts, registered as GPU holders in the fake nvidia-smi."""

from __future__ import annotations

import dataclasses
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.gpu import FakeGpuState, pid_alive, poll_until, reap_group, spawn_holder, spawn_orphans

from specdash.gpu.classify import classify
from specdash.gpu.kill import safe_kill
from specdash.gpu.proctable import current_user, read_process_table
from specdash.gpu.sampler import make_sampler
from specdash.hosts.local import LocalHost
from specdash.server.launch import is_launch_shell, launch


@pytest.fixture
def gpu(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    host = LocalHost(env=state.env())
    sampler = make_sampler(host, 0.2, source="nvidia-smi")
    return state, host, sampler


async def classified(host, sampler, server_pgids=frozenset()):
    snap = await sampler.sample_once()
    table = await read_process_table(host)
    return classify(snap, table, await current_user(host), server_pgids)


async def test_orphans_of_a_crashed_launcher_are_killed_by_group_and_memory_released(gpu):
    state, host, sampler = gpu
    pgid, pids = spawn_orphans(2)
    try:
        state.add_process(pids[0], 0, 36000)
        state.add_process(pids[1], 1, 35000)
        rows = await classified(host, sampler)
        assert {r.pid: r.process_class for r in rows} == {pids[0]: "orphan", pids[1]: "orphan"}
        progress: list[str] = []
        report = await safe_kill(host, rows, await current_user(host), sampler.sample_once, grace_s=3,
                                 poll_s=0.05, on_progress=progress.append)
        assert report.released, report.summary()
        assert all(o.signals == [f"SIGTERM group {pgid}"] for o in report.outcomes)
        assert (report.before_mib, report.after_mib) == (71000, 0)
        assert report.gpu_used_before_mib == {0: 36004, 1: 35004}
        assert report.gpu_used_after_mib == {0: 4, 1: 4}
        assert not any(pid_alive(p) for p in pids)
        assert progress[-1] == "waiting for the GPU memory to be released"  # the summary is the caller's to show
        assert "killed 2 of 2 processes: 71000 MiB -> 0 MiB held" in report.summary()
    finally:
        reap_group(pgid)


async def test_sigterm_ignored_escalates_to_sigkill(gpu):
    state, host, sampler = gpu
    holder = spawn_holder("sglang::scheduler_TP0", ignore_term=True)
    try:
        state.add_process(holder.pid, 0, 1000)
        rows = await classified(host, sampler)
        # its parent (this test) is alive: as the running server's group it may be killed from the pane
        rows = await classified(host, sampler, server_pgids={holder.pid})
        assert rows[0].process_class == "server"
        report = await safe_kill(host, rows, await current_user(host), sampler.sample_once, grace_s=0.5,
                                 poll_s=0.05)
        assert report.outcomes[0].signals == [f"SIGTERM group {holder.pid}", f"SIGKILL group {holder.pid}"]
        assert holder.wait(timeout=5) == -signal.SIGKILL
        assert report.released
    finally:
        reap_group(holder.pid)
        holder.wait()


def _spawn_with_pid(pid: int) -> subprocess.Popen | None:
    """Start a sleeper that gets exactly ``pid`` (root: via /proc/sys/kernel/ns_last_pid); None if impossible."""
    path = pathlib.Path("/proc/sys/kernel/ns_last_pid")
    for _ in range(50):
        try:
            path.write_text(str(pid - 1))
        except OSError:
            return None
        proc = subprocess.Popen([sys.executable, "-c", "import time\nwhile True: time.sleep(1)", "innocent"],
                                start_new_session=True)
        if proc.pid == pid:
            return proc
        reap_group(proc.pid)
        proc.wait()
    return None


async def test_reused_pid_is_never_signalled(gpu):
    """The row shown (an orphan) exits; a new, innocent process gets the same PID: it must not be touched."""
    state, host, sampler = gpu
    pgid, (pid,) = spawn_orphans(1)
    state.add_process(pid, 0, 5000, keep_when_dead=True)
    (row,) = await classified(host, sampler)
    assert row.process_class == "orphan"
    reap_group(pgid)
    assert poll_until(lambda: not pid_alive(pid))
    innocent = _spawn_with_pid(pid)
    if innocent is None:  # not root / no ns_last_pid: same PID, different start time, as a reused PID has
        innocent = spawn_holder("innocent")
        await_pid = innocent.pid
        row = dataclasses.replace(row, pid=await_pid, pgid=await_pid)
    try:
        assert innocent.poll() is None
        fresh = (await read_process_table(host)).get(row.pid)
        assert fresh is not None and fresh.identity != (row.pid, row.start_ticks, row.user, row.command)
        report = await safe_kill(host, [row], await current_user(host), sampler.sample_once, grace_s=0.3,
                                 poll_s=0.05, release_timeout_s=0.5)
        (outcome,) = report.outcomes
        assert outcome.result == "identity changed" and outcome.signals == []
        assert innocent.poll() is None and pid_alive(innocent.pid)
        assert not report.released
    finally:
        reap_group(innocent.pid)
        innocent.wait()


async def test_foreign_and_unknown_rows_are_refused(gpu):
    state, host, sampler = gpu
    holder = spawn_holder("python3")
    try:
        state.add_process(holder.pid, 0, 1000)
        state.add_process(4_000_000, 1, 2000, name="[Not Found]", keep_when_dead=True)
        rows = await classified(host, sampler)
        assert {r.process_class for r in rows} == {"foreign", "unknown"}  # parent (pytest) alive; other PID ns
        report = await safe_kill(host, rows, await current_user(host), sampler.sample_once, grace_s=0.3,
                                 poll_s=0.05, release_timeout_s=0.3)
        assert [o.result for o in report.outcomes] == ["refused", "refused"]
        assert all(o.signals == [] for o in report.outcomes)
        assert holder.poll() is None
    finally:
        reap_group(holder.pid)
        holder.wait()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
async def test_real_process_of_another_user_is_never_offered_nor_signalled(gpu):
    """A real orphan-looking process running as ``nobody``: foreign, and refused even if forced in as orphan."""
    state, host, sampler = gpu
    import pwd
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user nobody")
    # a public program (bash renamed to the worker's title): a private interpreter, e.g. one under /root, cannot
    # be started as nobody
    other = subprocess.Popen(["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}", "--clear-groups",
                              "/bin/bash", "-c", "exec -a sglang::scheduler_TP0 /bin/sh -c 'while :; do sleep 1; done'"],
                             start_new_session=True)
    try:
        assert poll_until(lambda: (pathlib.Path(f"/proc/{other.pid}/status").read_text().find(
            f"Uid:\t{nobody.pw_uid}") >= 0))
        state.add_process(other.pid, 0, 70000)
        (row,) = await classified(host, sampler)
        assert row.user == "nobody" and row.process_class == "foreign" and not row.killable
        forced = dataclasses.replace(row, process_class="orphan")
        report = await safe_kill(host, [forced], await current_user(host), sampler.sample_once, grace_s=0.3,
                                 poll_s=0.05, release_timeout_s=0.3)
        assert report.outcomes[0].result == "refused" and "nobody" in report.outcomes[0].detail
        assert other.poll() is None
    finally:
        reap_group(other.pid)
        other.wait()


async def test_kill_recording_and_replay_summary_name_the_class(gpu):
    """A real kill of a crashed server's orphans, recorded as the app records it, reads back in ``replay
    --summary`` as what was killed ("orphans of a crashed server"), not as "2 process(es)"."""
    from specdash.app.recording import RecordingMixin
    from specdash.gpu.classify import mark_targets
    from specdash.session.events import event_from_dict
    from specdash.session.summary import _entry

    state, host, sampler = gpu
    pgid, pids = spawn_orphans(2)
    try:
        state.add_process(pids[0], 0, 36000)
        state.add_process(pids[1], 1, 0)
        rows = mark_targets(await classified(host, sampler))
        report = await safe_kill(host, rows, await current_user(host), sampler.sample_once, grace_s=3, poll_s=0.05)
        assert report.released
    finally:
        reap_group(pgid)
    recorded: list[dict] = []

    class App(RecordingMixin):
        recorder = object()

        def _record(self, event):
            event.t = 1.0
            recorded.append(event.to_dict())

    RecordingMixin.record_kill(App(), type("Message", (), {"report": report})())
    (line, detail) = _entry(event_from_dict(recorded[0]))
    assert line == (f"kill        2 orphans of a crashed server (PID {pids[0]}, {pids[1]}): released, GPU memory "
                    "36000 -> 0 MiB")
    assert detail.endswith("— 2 orphans of a crashed server")
    legacy = dict(recorded[0], targets=[{k: v for k, v in t.items() if k not in ("class", "source")}
                                        for t in recorded[0]["targets"]])
    assert _entry(event_from_dict(legacy))[0].startswith("kill        2 process(es) (PID")


async def test_killing_a_live_servers_worker_names_specdashs_launch_shell_not_its_shell_text(gpu, tmp_path):
    """The group of a server launched by specdash is led by its ``sh -c`` launch wrapper; the kill report names it
    as what it is, never as its raw shell text."""
    state, host, sampler = gpu
    handle = await launch(host, f"{sys.executable} -c 'import time; time.sleep(120)' sglang::scheduler_TP0",
                          run_dir=str(tmp_path / "run"))
    try:
        assert poll_until(lambda: len(_group(handle.pgid)) == 2, timeout_s=10), _group(handle.pgid)
        worker = next(pid for pid in _group(handle.pgid) if pid != handle.leader_pid)
        state.add_process(worker, 0, 61301)
        rows = [r for r in await classified(host, sampler, server_pgids={handle.pgid}) if r.pid == worker]
        assert [r.process_class for r in rows] == ["server"]
        report = await safe_kill(host, rows, await current_user(host), sampler.sample_once, grace_s=3, poll_s=0.05)
        text = report.summary()
        assert (f"left alone: PID {handle.leader_pid} (specdash's launch shell of the server, leader of process "
                f"group {handle.pgid}): never signalled") in text, text
        assert "SPECDASH_RUN_DIR" not in text and "crashed server" not in text, text
        assert [o.signals for o in report.outcomes] == [[f"SIGTERM pid {worker}"]]  # the shell then ends by itself
    finally:
        reap_group(handle.pgid)


def _group(pgid: int) -> list[int]:
    """Live PIDs of process group ``pgid`` (from /proc)."""
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and pid_alive(int(entry)):
            try:
                stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[2]) == pgid:
                pids.append(int(entry))
    return pids


@given(st.text())
def test_launch_shell_recognition_never_raises_and_needs_the_wrappers_own_start(args):
    assert is_launch_shell(args) == (args.split(None, 2)[:2] in (["sh", "-c"], ["dash", "-c"], ["bash", "-c"])
                                     and len(args.split(None, 2)) == 3
                                     and args.split(None, 2)[2].startswith('echo $$ > "$SPECDASH_RUN_DIR/'))
    assert is_launch_shell('sh -c echo $$ > "$SPECDASH_RUN_DIR/leader.pid"; c=$(cat "$SP')
    assert not is_launch_shell("sh -c python3 -m sglang.launch_server --port 30000")
