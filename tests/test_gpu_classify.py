"""Classification of GPU processes (server / orphan / zombie / foreign / unknown) and the summary line."""

from __future__ import annotations

from specdash.gpu import smi
from specdash.gpu.classify import classify, summarize
from specdash.gpu.model import GpuProcess, GpuSnapshot
from specdash.gpu.proctable import parse_ps
from test_gpu_support import DATA

LSTART = "Mon Nov 30 09:30:40 2026"


def ps_line(pid, ppid, pgid, user, stat, args, lstart=LSTART, etimes=600):
    return f"{pid:>8} {ppid:>8} {pgid:>8} {user:<10} {stat:<5} {lstart} {etimes:>7} {args}"


def c23_snapshot() -> GpuSnapshot:
    gpus = smi.parse_gpu_csv((DATA / "c23_query_gpu_csv.txt").read_text())
    procs = smi.parse_apps_csv((DATA / "c23_query_apps_csv_nounits.txt").read_text(), gpus)
    return GpuSnapshot(time_s=0, source="nvidia-smi", gpus=tuple(gpus), processes=tuple(procs))


def test_c23_schedulers_with_ppid_1_are_orphans_and_summarised():
    table = parse_ps("\n".join(
        ps_line(pid, 1, 2505700, "user", "Sl", f"sglang::scheduler_DP{n}_TP{n}_EP{n}")
        for n, pid in enumerate(range(2505781, 2505785))))
    rows = classify(c23_snapshot(), table, "user")
    assert [r.process_class for r in rows] == ["orphan"] * 4
    assert rows[0].reason == ("GPU 0 held by PID 2505781 (sglang::scheduler_DP0_TP0_EP0, 100998 MiB) - parent "
                              "exited (PPID 1)")
    assert all(r.cleanable and r.killable for r in rows)
    assert summarize(rows) == "4 orphans from a crashed server hold 394.4 GiB on GPU 0–3"


def test_issue_example_summary_three_orphans_on_two_gpus():
    snap = GpuSnapshot(0, "nvml", processes=(
        GpuProcess(11, 0, "GPU-a", 36454, "sglang::scheduler_TP0"),
        GpuProcess(12, 1, "GPU-b", 36454, "sglang::scheduler_TP1"),
        GpuProcess(13, 1, "GPU-b", 0, "sglang::detokenizer")))
    table = parse_ps("\n".join(ps_line(p, 1, 10, "alice", "S", n) for p, n in
                               ((11, "sglang::scheduler_TP0"), (12, "sglang::scheduler_TP1"),
                                (13, "sglang::detokenizer"))))
    assert summarize(classify(snap, table, "alice")) == "3 orphans from a crashed server hold 71.2 GiB on GPU 0–1"


def test_another_users_process_is_foreign_and_never_offered():
    snap = GpuSnapshot(0, "nvml", processes=(GpuProcess(500, 0, "GPU-a", 70000, "sglang::scheduler_TP0"),))
    table = parse_ps(ps_line(500, 1, 500, "bob", "Sl", "sglang::scheduler_TP0"))
    (row,) = classify(snap, table, "alice")
    assert row.process_class == "foreign" and "bob" in row.reason
    assert not row.killable and not row.cleanable
    assert summarize([row]) == "no orphaned GPU memory"


def test_pid_missing_from_table_is_unknown_with_container_hint():
    snap = GpuSnapshot(0, "nvidia-smi", processes=(GpuProcess(3179875, 0, "GPU-a", None, "[Not Found]"),))
    (row,) = classify(snap, parse_ps(ps_line(1, 0, 0, "root", "S", "/sbin/init")), "root")
    assert row.process_class == "unknown" and "container" in row.reason and not row.killable
    assert "another PID namespace" in summarize([row])


def test_server_groups_zombies_graphics_and_live_parents():
    snap = GpuSnapshot(0, "nvml", processes=(
        GpuProcess(201, 0, "GPU-a", 60000, "sglang::scheduler_TP0"),   # in the live server's group
        GpuProcess(301, 1, "GPU-b", 500, "python3"),                    # zombie
        GpuProcess(401, 1, "GPU-b", 20, "/usr/lib/xorg/Xorg", kind="graphics"),
        GpuProcess(501, 1, "GPU-b", 900, "python3"),                    # a notebook kernel: parent alive
        GpuProcess(601, 0, "GPU-a", 800, "sglang::scheduler_TP1"),      # launcher (group leader) exited
    ))
    table = parse_ps("\n".join([
        ps_line(200, 50, 200, "alice", "Sl", "python3 -m sglang.launch_server --model-path m"),
        ps_line(201, 200, 200, "alice", "Sl", "sglang::scheduler_TP0"),
        ps_line(301, 77, 77, "alice", "Z", "[python3] <defunct>"),
        ps_line(401, 1, 401, "alice", "Ssl", "/usr/lib/xorg/Xorg :0"),
        ps_line(500, 1, 500, "alice", "S", "jupyter-lab"),
        ps_line(501, 500, 501, "alice", "S", "python3 -m ipykernel_launcher"),
        ps_line(77, 1, 77, "alice", "S", "bash run.sh"),
        ps_line(601, 999, 600, "alice", "Sl", "sglang::scheduler_TP1"),
        ps_line(999, 1, 999, "alice", "S", "tmux"),
    ]))
    rows = {r.pid: r for r in classify(snap, table, "alice", server_pgids={200})}
    assert rows[201].process_class == "server"
    assert rows[301].process_class == "zombie"
    assert rows[401].process_class == "foreign" and "graphics" in rows[401].reason
    assert rows[501].process_class == "foreign" and not rows[501].killable
    assert rows[601].process_class == "orphan" and "launcher" in rows[601].reason
    # without knowing the server, its workers (parent alive) are left alone, never called orphans
    rows = {r.pid: r for r in classify(snap, table, "alice")}
    assert rows[201].process_class == "foreign"


def test_detached_live_launcher_is_a_server_not_an_orphan():
    snap = GpuSnapshot(0, "nvml", processes=(GpuProcess(700, 0, "GPU-a", 500, "python3"),
                                             GpuProcess(701, 0, "GPU-a", 60000, "sglang::scheduler_TP0")))
    table = parse_ps("\n".join([
        ps_line(700, 1, 700, "alice", "Sl", "python3 -m sglang.launch_server --model-path m"),
        ps_line(701, 700, 700, "alice", "Sl", "sglang::scheduler_TP0")]))
    assert [r.process_class for r in classify(snap, table, "alice")] == ["server", "server"]


def test_json_shape():
    snap = GpuSnapshot(0, "nvml", processes=(GpuProcess(11, 0, "GPU-a", 5, "x"),))
    (row,) = classify(snap, parse_ps(ps_line(11, 1, 11, "alice", "S", "x")), "alice")
    assert row.to_json() == {"pid": 11, "gpu": 0, "used_mib": 5, "name": "x", "user": "alice", "ppid": 1,
                             "pgid": 11, "class": "orphan", "reason": row.reason}


def test_container_init_launcher_keeps_its_workers_out_of_orphans():
    """``docker run ... python3 -m sglang.launch_server``: the launcher is PID 1, its workers have PPID 1."""
    snap = GpuSnapshot(0, "nvml", processes=(GpuProcess(1, 0, "GPU-a", 300, "python3"),
                                             GpuProcess(40, 0, "GPU-a", 60000, "sglang::scheduler_TP0")))
    table = parse_ps("\n".join([
        ps_line(1, 0, 1, "root", "Ssl", "python3 -m sglang.launch_server --model-path m"),
        ps_line(40, 1, 1, "root", "Sl", "sglang::scheduler_TP0")]))
    assert [r.process_class for r in classify(snap, table, "root")] == ["server", "server"]
    # PID 1 that is a plain init is never offered either
    table = parse_ps(ps_line(1, 0, 1, "root", "Ss", "/sbin/init"))
    (row,) = classify(GpuSnapshot(0, "nvml", processes=(GpuProcess(1, 0, "GPU-a", 1, "init"),)), table, "root")
    assert row.process_class == "foreign" and not row.killable
