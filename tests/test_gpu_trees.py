"""GPU cleanup on real process trees, built the way users build them, seen through ``specdash ps`` / ``clean``.

Every situation is made of real processes: the SGLang test double (tests/double) started with ``nohup`` from a
shell that exits (locally and through the test sshd), in a foreground interactive shell on a pty, crashing and
leaving its schedulers and detokenizer behind; a ``nohup``'d training job; a worker the driver lists with 0 MiB;
GPU memory the driver cannot attribute, held by processes that keep a (test) GPU device file open. Each test
asserts what the user sees — class, reason, summary, what survived — and kills only process groups it started.
"""

from __future__ import annotations

import json
import os
import pathlib
import pty
import shlex
import subprocess
import sys
import urllib.request

import pytest
from support.double import harness
from support.gpu import FAKES_BIN, FakeGpuState, pid_alive, poll_until, reap_group, spawn_holder, spawn_orphans
from support.gpu import run_specdash as specdash

TRAIN = "import time\nwhile True: time.sleep(0.2)\n"


def double_env(tmp_path, scenario: str = "fast") -> dict[str, str]:
    env = harness.double_env(tmp_path, scenario)
    env["PATH"] = f"{FAKES_BIN}:{env['PATH']}"
    return env


def health(port: int) -> int | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
            return resp.status
    except OSError:
        return None


def proc_stat(pid: int) -> list[str] | None:
    try:
        text = pathlib.Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def nohup_from_exited_shell(env: dict, command: str, log: pathlib.Path) -> tuple[int, int]:
    """``sh -c 'nohup CMD > LOG 2>&1 & echo $!'`` in a new session (as sshd runs a command), the shell exits at
    once. Returns (launcher PID, its process group = the exited shell's PID)."""
    out = subprocess.run(["sh", "-c", f"nohup {command} > {log} 2>&1 & echo $!"], env=env, capture_output=True,
                         text=True, timeout=30, start_new_session=True)
    pid = int(out.stdout.split()[-1])
    stat = proc_stat(pid)
    assert stat is not None, log.read_text() if log.exists() else "launcher gone"
    return pid, int(stat[2])


def ps_json(env: dict) -> dict:
    out = specdash(None, "ps", "local", "--json", env=env)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def by_pid(data: dict) -> dict[int, dict]:
    return {p["pid"]: p for p in data["processes"]}


def wait_gpu_pids(env: dict, n: int, timeout_s: float = 30) -> list[int]:
    assert poll_until(lambda: len(harness.gpu_processes(env)) >= n, timeout_s), harness.gpu_processes(env)
    return [p["pid"] for p in harness.gpu_processes(env)]


def test_nohup_server_from_an_exited_shell_is_a_healthy_server_and_survives_clean(tmp_path, started_groups):
    env = double_env(tmp_path)
    port = harness.free_port()
    launcher, pgid = nohup_from_exited_shell(env, harness.launch_command(port, extra="--tp 2"), tmp_path / "s.log")
    started_groups.append(pgid)
    assert launcher != pgid  # not a group leader: the shell led the group, and it has exited
    assert poll_until(lambda: health(port) == 200, 30), (tmp_path / "s.log").read_text()
    schedulers = wait_gpu_pids(env, 2)
    assert proc_stat(launcher)[1] != str(os.getpid())  # re-parented (PPID 1 or a subreaper)
    data = ps_json(env)
    procs = by_pid(data)
    for pid in schedulers:
        assert procs[pid]["class"] == "server" and procs[pid]["target"] is False
        assert f"part of the live server launched by PID {launcher} (python3 -m sglang.launch_server" \
            in procs[pid]["reason"]
    assert data["summary"] == "no orphaned GPU memory"
    out = specdash(None, "clean", "local", "--yes", env=env)
    assert out.returncode == 0 and "nothing to clean: no orphaned GPU memory" in out.stdout
    assert health(port) == 200 and all(pid_alive(p) for p in schedulers + [launcher])


def test_nohup_server_through_ssh_is_a_server(sshd, tmp_path, started_groups):
    """``ssh host 'nohup python3 -m sglang.launch_server ... > s.log 2>&1 &'``, classified over the same SSH."""
    import asyncio

    from specdash.commands.ps import look

    FakeGpuState(sshd.gpu_state, gpus=2)
    port = harness.free_port()
    scenario = harness.scenario_path("fast")
    log = tmp_path / "ssh-server.log"

    async def main():
        host = sshd.make_host()
        try:
            await host.connect()
            result = await host.run(f"SGLANG_DOUBLE_SCENARIO={shlex.quote(str(scenario))} nohup "
                                    f"{harness.launch_command(port, extra='--tp 2')} > {shlex.quote(str(log))} 2>&1 "
                                    "& echo $!")
            launcher = int(result.stdout.split()[-1])
            started_groups.append(int(proc_stat(launcher)[2]))
            for _ in range(300):
                gpu = json.loads(pathlib.Path(sshd.gpu_state).read_text())["processes"]
                if len(gpu) >= 2 and health(port) == 200:
                    break
                await asyncio.sleep(0.1)
            view, _ = await look(host)
            return launcher, view
        finally:
            await host.close()

    launcher, view = asyncio.run(main())
    rows = [p for p in view.processes if p.source == "driver"]
    assert len(rows) == 2 and all(p.process_class == "server" for p in rows), [(p.pid, p.reason) for p in rows]
    assert all(f"launched by PID {launcher}" in p.reason for p in rows)
    assert view.summary == "no orphaned GPU memory" and health(port) == 200


def test_server_in_a_foreground_interactive_shell_is_a_server(tmp_path, started_groups):
    env = double_env(tmp_path)
    port = harness.free_port()
    log = tmp_path / "fg.log"
    pid, fd = pty.fork()
    if pid == 0:  # child: an interactive bash on the pty, with job control
        os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "-i"], env)
    try:
        os.write(fd, f"{harness.launch_command(port)} > {log} 2>&1\n".encode())
        schedulers = []

        def up() -> bool:
            nonlocal schedulers
            try:
                os.read(fd, 65536)  # keep the pty drained
            except OSError:
                pass
            schedulers = [p["pid"] for p in harness.gpu_processes(env)]
            return bool(schedulers) and health(port) == 200

        os.set_blocking(fd, False)
        assert poll_until(up, 30), log.read_text() if log.exists() else "no log"
        launcher = int(proc_stat(schedulers[0])[1])
        lstat = proc_stat(launcher)
        started_groups.append(int(lstat[2]))
        assert int(lstat[1]) == pid  # its parent is the interactive shell, alive
        data = ps_json(env)
        row = by_pid(data)[schedulers[0]]
        assert row["class"] == "server" and f"launched by PID {launcher}" in row["reason"]
        assert specdash(None, "clean", "local", "--yes", env=env).returncode == 0
        assert health(port) == 200
    finally:
        reap_group(pid)  # the shell we started (session leader of the pty)
        os.close(fd)
        os.waitpid(pid, 0)


def test_crashed_server_is_cleaned_whole_and_a_job_in_its_group_is_left(tmp_path, started_groups):
    """The launcher crashes (CUDA OOM in graph capture) and leaves two schedulers holding memory and the
    detokenizer holding none; a training job started by the same shell shares their process group."""
    env = double_env(tmp_path, "crash_orphan")
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    port = harness.free_port()
    out = subprocess.run(
        ["sh", "-c", f"nohup python3 {train} > {tmp_path}/t.log 2>&1 & echo $!; "
                     f"nohup {harness.launch_command(port, extra='--tp 2')} > {tmp_path}/s.log 2>&1 & echo $!"],
        env=env, capture_output=True, text=True, timeout=30, start_new_session=True)
    job, launcher = (int(x) for x in out.stdout.split())
    pgid = int(proc_stat(job)[2])
    started_groups.append(pgid)
    assert poll_until(lambda: proc_stat(launcher) is None or proc_stat(launcher)[0] == "Z", 30)
    schedulers = wait_gpu_pids(env, 2)
    members = [p for p in harness.pids_in_group(pgid) if p not in schedulers + [job]]
    assert len(members) == 1  # the detokenizer
    data = ps_json(env)
    procs = by_pid(data)
    for pid in schedulers:
        assert procs[pid]["class"] == "orphan" and procs[pid]["target"] is True
        assert "orphan of a crashed server: no live SGLang launcher owns it" in procs[pid]["reason"]
    (detok,) = members
    assert procs[detok]["class"] == "orphan" and procs[detok]["source"] == "process group"
    assert procs[detok]["name"] == "sglang::detokenizer" and procs[detok]["target"] is True
    assert [(x["pid"], x["why"].split(":")[0]) for x in data["left"]] == [(job, "foreign")]
    assert data["left"][0]["why"].startswith("foreign: detached job, not from a server (PPID ")
    assert data["left"][0]["why"].endswith("no SGLang launcher or worker in its process tree)")
    gib = sum(p["used_mib"] for p in harness.gpu_processes(env)) / 1024
    assert data["summary"] == (f"2 orphans from a crashed server hold {gib:.1f} GiB on GPU 0–1 (+1 more process of "
                               "the same server without GPU memory)")
    text = specdash(None, "ps", "local", env=env).stdout
    assert f"left alone: PID {job} (python3 {str(train)[:40]}" in text and "detached job, not from a server" in text

    out = specdash(None, "clean", "local", "--yes", "--json", "--grace-s", "2", env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout)
    assert result["released"] is True
    assert {o["pid"]: o["what"] for o in result["report"]["outcomes"]} == {
        schedulers[0]: "orphan of a crashed server", schedulers[1]: "orphan of a crashed server",
        detok: "process of a crashed server (no GPU memory)"}
    assert "2 orphans of a crashed server, 1 process of a crashed server (no GPU memory)" in result["report"]["summary"]
    assert f"left alone: PID {job}" in result["report"]["summary"]
    assert poll_until(lambda: harness.pids_in_group(pgid) == [job])  # the whole server went; the job did not
    assert not harness.gpu_processes(env)


def test_nohup_training_job_is_foreign_and_never_cleaned(tmp_path, started_groups):
    env = double_env(tmp_path)
    state = FakeGpuState(pathlib.Path(env["FAKE_NVIDIA_SMI_STATE"]), gpus=1)
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    job, pgid = nohup_from_exited_shell(env, f"python3 {train} --epochs 3", tmp_path / "t.log")
    started_groups.append(pgid)
    state.add_process(job, 0, 20000)
    row = by_pid(ps_json(env))[job]
    assert row["class"] == "foreign" and row["target"] is False
    assert row["reason"].startswith("detached job, not from a server (PPID ")
    out = specdash(None, "clean", "local", "--yes", env=env)
    assert out.returncode == 0 and "nothing to clean: no orphaned GPU memory" in out.stdout
    assert pid_alive(job)


def test_driver_listed_worker_with_0_mib_is_never_a_target(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    pgid, (pid,) = spawn_orphans(1)
    try:
        state.add_process(pid, 0, 0)
        env = state.env()
        row = by_pid(ps_json(env))[pid]
        assert row["class"] == "orphan" and row["target"] is False
        assert row["reason"].endswith("holds no GPU memory: never a clean-up target")
        out = specdash(None, "clean", "local", "--yes", env=env)
        assert out.returncode == 0 and "nothing to clean: no orphaned GPU memory" in out.stdout
        assert "never a clean-up target" in out.stdout and pid_alive(pid)
    finally:
        reap_group(pgid)


def test_gpu_memory_held_with_no_process_listed_is_never_called_clean(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    state.state["gpus"][0]["unlisted_used_mib"] = 69935  # + 4 idle = 69939 MiB = 68.3 GiB
    state.write()
    env = state.env() | {"SPECDASH_GPU_DEVICE_GLOBS": str(tmp_path / "nvidia*")}
    text = specdash(None, "ps", "local", env=env).stdout
    assert "no orphaned GPU memory" not in text
    assert "GPU 0: 69939 MiB used by processes the driver does not list" in text
    assert "no GPU processes listed by the driver" in text
    assert text.rstrip().endswith("GPU 0: 68.3 GiB held by processes the driver does not list — container PID "
                                  "namespace?")
    assert "no process of yours holds a GPU device file open" in text
    data = ps_json(env)
    assert [g["unattributed_mib"] for g in data["gpus"]] == [69939, 4]
    out = specdash(None, "clean", "local", "--yes", env=env)
    assert out.returncode == 1
    assert "nothing to clean: GPU 0: 68.3 GiB held by processes the driver does not list" in out.stdout


DEVICE_HOLDER = (
    "import os, subprocess, sys, time\n"
    "dev, role = sys.argv[1], sys.argv[2]\n"
    "fd = os.open(dev, os.O_RDWR)\n"
    "if role == 'crashed':\n"  # a launcher that starts a scheduler holding the device, then dies
    "    kid = subprocess.Popen(['sglang::scheduler_TP0', '-c', 'import os, time\\nfd = os.open(%r, os.O_RDWR)\\n"
    "print(os.getpid(), flush=True)\\nwhile True: time.sleep(0.2)' % dev], executable=sys.executable,"
    " stdout=subprocess.PIPE)\n"
    "    print(kid.stdout.readline().decode().strip(), flush=True)\n"
    "    os._exit(0)\n"
    "print(os.getpid(), flush=True)\n"
    "while True: time.sleep(0.2)\n"
)


def test_unlisted_memory_holders_found_by_device_files_classified_and_cleaned(tmp_path):
    """Inside a container the driver lists nobody. The processes holding the (test) GPU device file are found
    through /proc/PID/fd: the crashed server's scheduler is cleaned (release judged by the GPU's used memory
    falling), the live server's worker and the training job survive."""
    dev = tmp_path / "nvidia0"
    dev.write_bytes(b"")
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    env = state.env() | {"SPECDASH_GPU_DEVICE_GLOBS": f"{tmp_path}/nvidia*"}
    started = []

    def start(argv0: str, role: str) -> int:
        proc = subprocess.Popen([argv0, "-c", DEVICE_HOLDER, str(dev), role], executable=sys.executable,
                                stdout=subprocess.PIPE, start_new_session=True)
        started.append(proc)
        return int(proc.stdout.readline())

    try:
        orphan = start("python3", "crashed")
        server = start("python3 -m sglang.launch_server --model-path m", "server")
        job = start("python3 train.py", "job")
        state.state["processes"] += [
            {"pid": orphan, "gpu_index": 0, "used_mib": 60000, "hidden": True},
            {"pid": server, "gpu_index": 0, "used_mib": 9000, "hidden": True},
            {"pid": job, "gpu_index": 0, "used_mib": 1000, "hidden": True}]
        state.write()
        data = ps_json(env)
        procs = by_pid(data)
        assert {pid: (procs[pid]["class"], procs[pid]["source"], procs[pid]["target"]) for pid in procs} == {
            orphan: ("orphan", "device files", True), server: ("server", "device files", False),
            job: ("foreign", "device files", False)}
        assert procs[orphan]["devices"] == [str(dev)] and procs[orphan]["used_mib"] is None
        assert procs[orphan]["reason"].endswith("(not listed by the driver: found by its open GPU device files)")
        assert data["summary"] == ("1 orphan from a crashed server holds an unknown amount of memory; GPU 0: 68.4 "
                                   "GiB held by processes the driver does not list — container PID namespace?")
        assert data["gpus"][0]["unattributed_mib"] == 70004
        out = specdash(None, "clean", "local", "--yes", "--grace-s", "2", "--timeout-s", "10", env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "killed 1 of 1 processes (GPU 0: 70004 -> 10004 MiB) — 1 orphan of a crashed server" in out.stdout
        assert "GPU memory released" in out.stdout
        assert "judged by the GPUs' used memory" in out.stdout
        assert not pid_alive(orphan) and pid_alive(server) and pid_alive(job)
    finally:
        for proc in started:
            reap_group(proc.pid)
            proc.wait()
        try:
            if pid_alive(orphan):
                os.kill(orphan, 9)  # our own scheduler child (its group was ours), by PID
        except (NameError, ProcessLookupError):
            pass


@pytest.mark.skipif(not os.access("/proc/sys/kernel/ns_last_pid", os.W_OK), reason="needs ns_last_pid (root)")
async def test_same_pid_same_command_line_new_process_is_never_signalled(tmp_path):
    """The shown orphan exits; a new process gets its PID with the very same command line (and user): only the
    start time in clock ticks tells them apart, and the signal is refused."""
    from specdash.gpu.classify import classify, mark_targets
    from specdash.gpu.kill import safe_kill
    from specdash.gpu.proctable import current_user, read_process_table
    from specdash.gpu.sampler import make_sampler
    from specdash.hosts.local import LocalHost

    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    host = LocalHost(env=state.env())
    sampler = make_sampler(host, 0.2, source="nvidia-smi")
    shown = spawn_holder("sglang::scheduler_TP0")  # our child, so that we can reap it and free its PID
    pid = shown.pid
    state.add_process(pid, 0, 5000, keep_when_dead=True)
    (row,) = mark_targets(classify(await sampler.sample_once(), await read_process_table(host), "root"))
    assert row.process_class == "orphan" and row.cleanable
    argv = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:-1]
    reap_group(pid)
    shown.wait()
    twin = None
    for _ in range(50):
        pathlib.Path("/proc/sys/kernel/ns_last_pid").write_text(str(pid - 1))
        proc = subprocess.Popen([a.decode() for a in argv], executable=sys.executable, start_new_session=True)
        if proc.pid == pid:
            twin = proc
            break
        reap_group(proc.pid)
        proc.wait()
    if twin is None:
        pytest.skip("could not get the same PID again")
    try:
        fresh = (await read_process_table(host)).get(pid)
        assert (fresh.args, fresh.user) == (row.command, row.user) and fresh.start_ticks != row.start_ticks
        report = await safe_kill(host, [row], await current_user(host), sampler.sample_once, grace_s=0.3,
                                 poll_s=0.05, release_timeout_s=0.5)
        (outcome,) = report.outcomes
        assert outcome.result == "identity changed" and outcome.signals == []
        assert twin.poll() is None
    finally:
        reap_group(twin.pid)
        twin.wait()
