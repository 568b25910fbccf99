"""Classification of GPU processes (server / orphan / zombie / foreign / unknown) from the process tree, the
table parser, and the summary line. Tables are written in the exact format of the host command
(``/proc/PID/stat`` lines, then ``ps`` lines) and parsed by the real parser; real processes are in
tests/test_gpu_trees.py."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from support.gpu import DATA

from specdash.gpu import smi
from specdash.gpu.classify import (
    classify,
    crashed_server_members,
    is_launcher,
    looks_like_worker,
    mark_targets,
    summarize,
)
from specdash.gpu.model import GpuProcess, GpuSnapshot
from specdash.gpu.proctable import SEPARATOR, parse_process_table, parse_stat_line


def table(*rows):
    """rows: (pid, ppid, pgid, user, state, args[, sid]) -> the parsed table of the real command's output."""
    stats, pss = [], []
    for row in rows:
        pid, ppid, pgid, user, state, args = row[:6]
        sid = row[6] if len(row) > 6 else 0
        comm = (args.split() or ["?"])[0].rsplit("/", 1)[-1][:15]
        stats.append(f"{pid} ({comm}) {state} {ppid} {pgid} {sid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 "
                     f"{1000 + pid} 1000 10 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0")
        pss.append(f"{pid:>8} {user:<10} {600:>7} {args}")
    return parse_process_table("\n".join(stats) + f"\n{SEPARATOR}\n" + "\n".join(pss) + "\n")


def snap(*procs, gpus=()):
    return GpuSnapshot(0, "nvml", gpus=tuple(gpus), processes=tuple(procs))


def dp4_orphans_snapshot() -> GpuSnapshot:
    gpus = smi.parse_gpu_csv((DATA / "dp4_orphans_query_gpu_csv.txt").read_text())
    procs = smi.parse_apps_csv((DATA / "dp4_orphans_query_apps_csv_nounits.txt").read_text(), gpus)
    return GpuSnapshot(time_s=0, source="nvidia-smi", gpus=tuple(gpus), processes=tuple(procs))


def test_stat_parser_reads_ticks_session_and_odd_names():
    line = ("4242 (sglang::sch) ed) S 1 4200 4100 0 -1 4194560 0 0 0 0 5 6 0 0 20 0 30 0 987654 0 0 0 0 0 0")
    st_ = parse_stat_line(line)
    assert (st_.pid, st_.comm, st_.state, st_.ppid, st_.pgid, st_.sid, st_.start_ticks) == (
        4242, "sglang::sch) ed", "S", 1, 4200, 4100, 987654)
    assert parse_stat_line("garbage") is None and parse_stat_line("12 (x) S 1 2") is None


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_table_parser_never_raises(text):
    parse_process_table(text)
    parse_process_table(f"{text}\n{SEPARATOR}\n{text}")


def test_crashed_dp_schedulers_with_ppid_1_are_orphans_and_summarised():
    """A real DP=4 deployment whose launcher crashed: four schedulers, PPID 1, their launcher's group gone."""
    t = table(*[(pid, 1, 2505700, "user", "S", f"sglang::scheduler_DP{n}_TP{n}_EP{n}")
                for n, pid in enumerate(range(2505781, 2505785))])
    rows = mark_targets(classify(dp4_orphans_snapshot(), t, "user"))
    assert [r.process_class for r in rows] == ["orphan"] * 4
    assert rows[0].reason == ("GPU 0 held by PID 2505781 (sglang::scheduler_DP0_TP0_EP0, 100998 MiB) — orphan of a "
                              "crashed server: no live SGLang launcher owns it; its parent PID 1 is gone")
    assert all(r.cleanable and r.killable for r in rows)
    assert summarize(rows) == "4 orphans from a crashed server hold 394.4 GiB on GPU 0–3"


def test_summary_three_orphans_on_two_gpus():
    s = snap(GpuProcess(11, 0, "GPU-a", 36454, "sglang::scheduler_TP0"),
             GpuProcess(12, 1, "GPU-b", 36454, "sglang::scheduler_TP1"),
             GpuProcess(13, 1, "GPU-b", 0, "sglang::detokenizer"))
    t = table((1, 0, 0, "root", "S", "/sbin/init"),
              *[(p, 1, 10, "alice", "S", n) for p, n in
                ((11, "sglang::scheduler_TP0"), (12, "sglang::scheduler_TP1"), (13, "sglang::detokenizer"))])
    rows = mark_targets(classify(s, t, "alice"))
    assert summarize(rows) == "3 orphans from a crashed server hold 71.2 GiB on GPU 0–1"
    # the detokenizer listed with 0 MiB goes with its server, whose schedulers hold memory
    assert all(r.cleanable for r in rows)


def test_nohup_server_from_an_exited_shell_is_a_server():
    """``ssh host 'nohup python3 -m sglang.launch_server ... &'``: the launcher has PPID 1 and is not a group
    leader (the exited shell led the group); its workers are a live server, never orphans."""
    s = snap(GpuProcess(701, 0, "GPU-a", 60000, "sglang::scheduler_TP0"),
             GpuProcess(702, 0, "GPU-a", 0, "sglang::detokenizer"))
    t = table((1, 0, 0, "root", "S", "/sbin/init"),
              (700, 1, 690, "alice", "S", "python3 -m sglang.launch_server --model-path m --port 30000", 690),
              (701, 700, 690, "alice", "S", "sglang::scheduler_TP0", 690),
              (702, 700, 690, "alice", "S", "sglang::detokenizer", 690))
    rows = mark_targets(classify(s, t, "alice"))
    assert [r.process_class for r in rows] == ["server", "server"]
    assert "part of the live server launched by PID 700 (python3 -m sglang.launch_server" in rows[0].reason
    assert not any(r.cleanable for r in rows) and summarize(rows) == "no orphaned GPU memory"


def test_server_in_a_foreground_interactive_shell_is_a_server():
    s = snap(GpuProcess(201, 0, "GPU-a", 60000, "sglang::scheduler_TP0"))
    t = table((50, 40, 50, "alice", "S", "-bash", 50),
              (200, 50, 200, "alice", "S", "sglang serve --model-path m", 50),
              (201, 200, 200, "alice", "S", "sglang::scheduler_TP0", 50))
    (row,) = classify(s, t, "alice")
    assert row.process_class == "server" and "launched by PID 200 (sglang serve" in row.reason


def test_nohup_training_job_is_a_detached_foreign_job():
    s = snap(GpuProcess(800, 0, "GPU-a", 20000, "python3"))
    t = table((1, 0, 0, "root", "S", "/sbin/init"), (800, 1, 790, "alice", "S", "python3 train.py --out /d/sglang/x"))
    (row,) = mark_targets(classify(s, t, "alice"))
    assert row.process_class == "foreign" and not row.cleanable and not row.killable
    assert row.reason.startswith("detached job, not from a server (PPID 1;")
    assert summarize([row]) == "no orphaned GPU memory"


def test_lonely_orphan_with_0_mib_is_never_a_target():
    s = snap(GpuProcess(900, 0, "GPU-a", 0, "sglang::scheduler_TP0"))
    t = table((900, 1, 880, "alice", "S", "sglang::scheduler_TP0"))
    (row,) = mark_targets(classify(s, t, "alice"))
    assert row.process_class == "orphan" and not row.cleanable and not row.killable
    assert row.reason.endswith("holds no GPU memory: never a clean-up target")
    assert summarize([row]) == "no orphaned GPU memory"


def test_crashed_server_members_join_and_strangers_are_left():
    s = snap(GpuProcess(301, 0, "GPU-a", 60000, "sglang::scheduler_TP0"))
    t = table((301, 1, 300, "alice", "S", "sglang::scheduler_TP0"),
              (302, 1, 300, "alice", "S", "sglang::detokenizer"),
              (303, 1, 300, "alice", "S", "sglang::data_parallel_controller"),
              (304, 1, 300, "alice", "S", "python3 -c from multiprocessing.spawn import spawn_main; spawn_main()"),
              (305, 1, 300, "alice", "S", "python3 train.py"),
              (306, 1, 300, "bob", "S", "sglang::detokenizer"))
    rows = classify(s, t, "alice")
    members, left = crashed_server_members(rows, t, "alice")
    assert [m.pid for m in members] == [302, 303, 304]
    assert all(m.process_class == "orphan" and m.source == "process group" for m in members)
    assert [(r.pid, why.split(":")[0]) for r, why in left] == [(305, "foreign"), (306, "foreign")]
    rows = mark_targets(rows + members)
    assert all(r.cleanable for r in rows)
    assert summarize(rows) == ("1 orphan from a crashed server holds 58.6 GiB on GPU 0 (+3 more processes of the "
                               "same server without GPU memory)")


def test_engine_in_a_script_owns_its_workers():
    """``python3 offline.py`` running ``sglang.Engine`` in-process: not a known launcher, but alive and in the
    workers' group: they are a server's, not orphans."""
    s = snap(GpuProcess(401, 0, "GPU-a", 60000, "sglang::scheduler_TP0"))
    t = table((400, 50, 400, "alice", "S", "python3 offline.py", 50),
              (401, 400, 400, "alice", "S", "sglang::scheduler_TP0", 50))
    (row,) = classify(s, t, "alice")
    assert row.process_class == "server" and "live program PID 400 (python3 offline.py)" in row.reason


def test_other_users_graphics_zombies_known_servers_and_live_parents():
    s = snap(GpuProcess(201, 0, "GPU-a", 60000, "sglang::scheduler_TP0"),
             GpuProcess(301, 1, "GPU-b", 500, "python3"),
             GpuProcess(401, 1, "GPU-b", 20, "/usr/lib/xorg/Xorg", kind="graphics"),
             GpuProcess(501, 1, "GPU-b", 900, "python3"),
             GpuProcess(601, 0, "GPU-a", 800, "sglang::scheduler_TP1"),
             GpuProcess(701, 0, "GPU-a", 800, "sglang::scheduler_TP0"))
    t = table((200, 50, 200, "alice", "S", "python3 my_server.py"),
              (201, 200, 200, "alice", "S", "sglang::scheduler_TP0"),
              (301, 77, 77, "alice", "Z", "[python3] <defunct>"),
              (401, 1, 401, "alice", "S", "/usr/lib/xorg/Xorg :0"),
              (500, 1, 500, "alice", "S", "jupyter-lab"),
              (501, 500, 501, "alice", "S", "python3 -m ipykernel_launcher"),
              (77, 1, 77, "alice", "S", "bash run.sh"),
              (601, 999, 600, "alice", "S", "sglang::scheduler_TP1"),
              (999, 1, 999, "alice", "S", "tmux"),
              (701, 1, 700, "bob", "S", "sglang::scheduler_TP0"))
    rows = {r.pid: r for r in classify(s, t, "alice", server_pgids={200})}
    assert rows[201].process_class == "server" and "running server" in rows[201].reason
    assert rows[301].process_class == "zombie"
    assert rows[401].process_class == "foreign" and "graphics" in rows[401].reason
    assert rows[501].process_class == "foreign" and "parent PID 500 (jupyter-lab) is alive" in rows[501].reason
    assert rows[601].process_class == "orphan" and "its parent PID 999 (tmux) is no SGLang launcher" in rows[601].reason
    assert rows[701].process_class == "foreign" and "bob" in rows[701].reason and not rows[701].killable


def test_pid_missing_from_table_is_unknown_with_container_hint():
    s = snap(GpuProcess(3179875, 0, "GPU-a", None, "[Not Found]"))
    (row,) = classify(s, table((1, 0, 0, "root", "S", "/sbin/init")), "root")
    assert row.process_class == "unknown" and "container" in row.reason and not row.killable
    assert "another PID namespace" in summarize([row])


def test_unlisted_memory_is_never_called_clean():
    assert summarize([], {0: 69939}) == ("GPU 0: 68.3 GiB held by processes the driver does not list — container "
                                         "PID namespace?")


def test_container_init_launcher_keeps_its_workers_out_of_orphans():
    """``docker run ... python3 -m sglang.launch_server``: the launcher is PID 1, its workers have PPID 1."""
    s = snap(GpuProcess(1, 0, "GPU-a", 300, "python3"), GpuProcess(40, 0, "GPU-a", 60000, "sglang::scheduler_TP0"))
    t = table((1, 0, 1, "root", "S", "python3 -m sglang.launch_server --model-path m"),
              (40, 1, 1, "root", "S", "sglang::scheduler_TP0"))
    assert [r.process_class for r in classify(s, t, "root")] == ["server", "server"]
    (row,) = classify(snap(GpuProcess(1, 0, "GPU-a", 1, "init")), table((1, 0, 1, "root", "S", "/sbin/init")), "root")
    assert row.process_class == "foreign" and not row.killable


def test_json_shape():
    s = snap(GpuProcess(11, 0, "GPU-a", 5, "x"))
    (row,) = classify(s, table((11, 1, 11, "alice", "S", "sglang::scheduler_TP0")), "alice")
    assert row.to_json() == {"pid": 11, "gpu": 0, "used_mib": 5, "name": "sglang::scheduler_TP0", "user": "alice",
                             "ppid": 1, "pgid": 11, "class": "orphan", "reason": row.reason, "source": "driver",
                             "devices": [], "target": True}


def test_launcher_and_worker_recognition():
    for args in ("python3 -m sglang.launch_server --model-path m", "/usr/bin/python3 -m sglang_router.launch_server",
                 "/opt/venv/bin/sglang serve --model-path m", "vllm serve m", "python -m vllm.entrypoints.openai.api_server",
                 "python3 /src/sglang/python/sglang/launch_server.py --port 1"):
        assert is_launcher(args), args
    for args in ("python3 train.py", "python3 -m sglang_bench_mine", "sglang::scheduler_TP0"):
        assert not is_launcher(args), args
    for args in ("sglang::scheduler_TP0", "sglang::detokenizer", "VLLM::EngineCore",
                 "python3 /usr/lib/python3/site-packages/sglang/srt/foo.py"):
        assert looks_like_worker(args), args
    for args in ("python3 train.py --out /data/sglang/ckpt", "python3 -c import sglang", "jupyter-lab"):
        assert not looks_like_worker(args), args
