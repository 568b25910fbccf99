"""``specdash ps --from FILE|-``: pasted nvidia-smi tables and CSV outputs, read with what a paste can tell."""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.gpu.pasted import NO_KILL, classify_pasted, pasted_json, pasted_text
from specdash.gpu.smi_table import parse_pasted_smi

HEADER_535 = """\
Tue Dec  1 16:06:00 2026
+---------------------------------------------------------------------------------------+
| NVIDIA-SMI 535.104.05             Driver Version: 535.104.05   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
"""
PROC_HEAD_535 = """\

+---------------------------------------------------------------------------------------+
| Processes:                                                                            |
|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |
|        ID   ID                                                             Usage      |
|=======================================================================================|
"""
BOTTOM = "+---------------------------------------------------------------------------------------+\n"


def gpu_rows(index: int, name: str, used: int, total: int, util: str = "0%", mig: str = "Disabled") -> str:
    return (f"|  {index:>2}  {name:<28}  On  | 00000000:{18 + index:02X}:00.0 Off |                    0 |\n"
            f"| N/A   34C    P0             117W / 700W | {used:>6}MiB / {total:>5}MiB | {util:>6}      Default |\n"
            f"|                                         |                      | {mig:>20} |\n"
            "+-----------------------------------------+----------------------+----------------------+\n")


def proc_row(gpu: int, pid: int, ptype: str, name: str, mib: str) -> str:
    return f"|  {gpu:>3}   N/A  N/A  {pid:>8}  {ptype:>5}   {name:<38}{mib:>10} |\n"


def table(procs: list[tuple[int, int, str, str, str]], gpus: int = 2, used: tuple[int, ...] = (76543, 1300)) -> str:
    text = HEADER_535
    for i in range(gpus):
        text += gpu_rows(i, "NVIDIA H100 80GB HBM3", used[i], 81559)
    text += PROC_HEAD_535
    for row in procs:
        text += proc_row(*row)
    if not procs:
        text += "|  No running processes found                                                           |\n"
    return text + BOTTOM


def ps_from(text: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "specdash", "ps", "--from", "-", *extra], input=text.encode(),
                          capture_output=True, timeout=120)


def test_table_rows_types_and_cut_last_row_as_the_user_reads_them():
    text = table([(0, 1234567, "C", "sglang::scheduler_TP0", "76530MiB"),
                  (1, 2345, "G", "/usr/lib/xorg/Xorg", "35MiB"),
                  (1, 3456, "C+G", "...ome/user/.conda/envs/x/bin/python", "500MiB")])
    text = text.removesuffix(BOTTOM) + "|    1   N/A  N/A      5678      C   /usr/bin/pyth\n"
    out = ps_from(text)
    assert out.returncode == 0, out.stderr
    shown = out.stdout.decode()
    assert "pasted nvidia-smi 535.104.05: driver 535.104.05, CUDA 12.2" in shown
    assert "0   NVIDIA H100 80GB HBM3       76543 / 81559 MiB" in shown
    lines = shown.splitlines()
    row = next(line for line in lines if "1234567" in line)
    assert row.split()[:7] == ["23", "1234567", "0", "C", "76530", "unknown", "SGLang"]
    assert "sglang::scheduler_TP0" in row
    xorg = next(line for line in lines if " 2345 " in line)
    assert "foreign" in xorg and "graphics" in xorg
    assert "C+G" in next(line for line in lines if " 3456 " in line)
    cut = next(line for line in lines if " 5678 " in line)
    assert cut.split()[4] == "?"  # memory of the cut row is unknown, never 0
    assert "note: line 26: the row of PID 5678 is cut before its memory column: its GPU memory is unknown" in shown
    assert "the Processes table is cut (no bottom border)" in shown
    assert lines[-1].startswith("2 GPUs; 4 processes (1 SGLang worker, 1 graphics, 1 graphics (C+G), 1 other "
                                "program) hold at least 75.3 GiB; server, orphan or zombie is unknown")
    assert lines[-1].endswith(NO_KILL)
    data = json.loads(ps_from(text, "--json").stdout)
    assert [(p["pid"], p["class"], p["used_mib"], p["killable"]) for p in data["processes"]] == [
        (1234567, "unknown", 76530, False), (2345, "foreign", 35, False), (3456, "foreign", 500, False),
        (5678, "unknown", None, False)]
    assert data["complete"] is False and data["summary"] == lines[-1]


def test_no_running_processes_and_memory_no_listed_process_holds():
    text = table([], used=(70000, 4))
    data = pasted_json(parse_pasted_smi(text))
    assert data["no_processes"] and data["processes"] == [] and data["complete"]
    assert data["gpus"][0]["unlisted_mib"] == 70000 and data["gpus"][1]["unlisted_mib"] is None
    shown = pasted_text(parse_pasted_smi(text))
    assert "no running processes (nvidia-smi: No running processes found)" in shown
    assert "GPU 0: 70000 MiB used that no listed process holds" in shown


def test_old_driver_without_gi_ci_columns_and_windows_na_memory():
    text = """\
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 440.33.01    Driver Version: 440.33.01    CUDA Version: 10.2     |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla V100-SXM2...  On   | 00000000:00:1E.0 Off |                    0 |
| N/A   40C    P0    40W / 300W |  15000MiB / 16160MiB |     12%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
|    0     12001      C   python                                     14990MiB |
|    0     12002    C+G   C:\\Windows\\explorer.exe                        N/A |
+-----------------------------------------------------------------------------+
"""
    smi = parse_pasted_smi(text)
    assert [(g.index, g.name, g.name_cut, g.memory_used_mib) for g in smi.gpus] == [
        (0, "Tesla V100-SXM2...", True, 15000)]
    assert [(p.pid, p.process_type, p.name, p.used_mib, p.gi) for p in smi.processes] == [
        (12001, "C", "python", 14990, None), (12002, "C+G", "C:\\Windows\\explorer.exe", None, None)]
    assert [v.looks_like for v in classify_pasted(smi.processes)] == ["Python process", "graphics (C+G)"]


def test_mig_table_processes_with_gi_ci_and_na_memory():
    text = HEADER_535 + gpu_rows(0, "NVIDIA A100-SXM4-80GB", 14366, 81920, util="N/A", mig="Enabled") + """\

+---------------------------------------------------------------------------------------+
| MIG devices:                                                                          |
+------------------+--------------------------------+-----------+-----------------------+
| GPU  GI  CI  MIG |                   Memory-Usage |        Vol|      Shared           |
|      ID  ID  Dev |                     BAR1-Usage | SM     Unc| CE ENC DEC OFA JPG    |
|==================+================================+===========+=======================|
|  0    1   0   0  |           14366MiB / 40192MiB  | 42      0 |  3   0    2    0    0 |
|                  |               4MiB / 65535MiB  |           |                       |
+------------------+--------------------------------+-----------+-----------------------+
""" + PROC_HEAD_535 + "|    0    1    0      31337      C   sglang::scheduler_TP0                    N/A |\n" + BOTTOM
    smi = parse_pasted_smi(text)
    assert smi.gpus[0].mig is True and smi.gpus[0].utilization_pct is None
    assert [(m.gpu, m.gi, m.ci, m.memory_used_mib) for m in smi.mig_devices] == [(0, 1, 0, 14366)]
    assert [(p.pid, p.gi, p.ci, p.used_mib) for p in smi.processes] == [(31337, 1, 0, None)]
    assert pasted_json(smi)["gpus"][0]["unlisted_mib"] is None  # MIG: per-process memory unknown, no sum
    assert "an unknown amount of memory" in pasted_json(smi)["summary"]


def test_row_cut_before_its_type_is_not_read_since_its_pid_may_be_cut():
    text = table([(0, 1234567, "C", "python3", "70000MiB")]).removesuffix(BOTTOM) + "|    0   N/A  N/A   12\n"
    smi = parse_pasted_smi(text)
    assert [p.pid for p in smi.processes] == [1234567]
    assert "line 24: a process row cut before its Type column: its PID may be cut too, so it is not read" in smi.notes


def test_csv_apps_with_header_units_in_any_order_and_without_header():
    text = "process_name, pid, used_gpu_memory [MiB]\nsglang::scheduler_TP0, 4242, 70000 MiB\n[Not Found], 99, [N/A]\n"
    data = pasted_json(parse_pasted_smi(text))
    assert data["formats"] == ["csv-apps"]
    assert [(p["pid"], p["name"], p["used_mib"], p["class"]) for p in data["processes"]] == [
        (4242, "sglang::scheduler_TP0", 70000, "unknown"), (99, "[Not Found]", None, "unknown")]
    assert "another PID namespace" in data["processes"][1]["reason"]
    assert data["summary"].startswith("no GPU rows in the paste; 2 processes (1 SGLang worker, 1 unnamed) hold at "
                                      "least 68.4 GiB")
    bare = pasted_json(parse_pasted_smi("4242, /usr/bin/python3, 70000\n4243, sglang::detokenizer, 0\n"))
    assert [(p["pid"], p["used_mib"]) for p in bare["processes"]] == [(4242, 70000), (4243, 0)]
    assert any("without its header line" in n for n in bare["notes"])


def test_csv_gpus_join_apps_by_uuid():
    text = ("index, uuid, name, memory.used [MiB], memory.total [MiB]\n"
            "0, GPU-aaaa-1111, NVIDIA H200, 101025 MiB, 143771 MiB\n\n"
            "pid, gpu_uuid, used_gpu_memory [MiB], process_name\n"
            "2505781, GPU-aaaa-1111, 100998 MiB, sglang::scheduler_DP0_TP0_EP0\n")
    smi = parse_pasted_smi(text)
    assert smi.formats == ["csv-apps", "csv-gpus"] or set(smi.formats) == {"csv-apps", "csv-gpus"}
    assert [(g.index, g.memory_used_mib, g.memory_total_mib) for g in smi.gpus] == [(0, 101025, 143771)]
    assert [(p.pid, p.gpu_index) for p in smi.processes] == [(2505781, 0)]


def test_cli_errors_are_one_line_usage_errors():
    out = ps_from("hello, world\nnothing here\n")
    assert out.returncode == 2 and out.stderr.decode().startswith("specdash ps: error: no nvidia-smi output in")
    both = subprocess.run([sys.executable, "-m", "specdash", "ps", "local", "--from", "-"], input=b"",
                          capture_output=True, timeout=120)
    assert both.returncode == 2 and b"not both" in both.stderr
    missing = subprocess.run([sys.executable, "-m", "specdash", "ps", "--from", "/nonexistent/smi.txt"],
                             capture_output=True, timeout=120)
    assert missing.returncode == 2 and b"cannot read /nonexistent/smi.txt" in missing.stderr


_NAMES = st.sampled_from(["python3", "/usr/bin/python3", "sglang::scheduler_TP0", "sglang::detokenizer",
                          "/usr/lib/xorg/Xorg", "...conda/envs/sglang/bin/python", "VLLM::EngineCore", "[Not Found]"])
_ROWS = st.lists(st.tuples(st.integers(0, 1), st.integers(1, 4_194_304), st.sampled_from(["C", "G", "C+G"]), _NAMES,
                           st.one_of(st.integers(0, 81559).map(lambda m: f"{m}MiB"), st.just("N/A"))),
                 min_size=0, max_size=6, unique_by=lambda r: r[1])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=_ROWS, cut=st.integers(0, 4000))
def test_fuzz_table_cut_anywhere_never_states_a_wrong_row(rows, cut):
    full = table(rows)
    smi = parse_pasted_smi(full)
    assert [(p.gpu_index, p.pid, p.process_type, p.name) for p in smi.processes] == [r[:4] for r in rows]
    assert [p.used_mib for p in smi.processes] == [None if r[4] == "N/A" else int(r[4][:-3]) for r in rows]
    part = parse_pasted_smi(full[:cut])
    by_pid = {r[1]: r for r in rows}
    for p in part.processes:  # a row read from a cut table is a row of the table, with unknowns where cut
        gpu, _, ptype, name, mib = by_pid[p.pid]
        assert p.gpu_index == gpu and p.process_type in (ptype, None)
        assert name.startswith(p.name)
        assert p.used_mib is None or f"{p.used_mib}MiB" == mib
    verdicts = classify_pasted(part.processes)
    assert not any(v.killable for v in verdicts)
    assert all(v.process_class == "foreign" for v in verdicts if v.process.process_type in ("G", "C+G"))
    pasted_text(part)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(list("|+-= 0123456789CGMN/AiB:.,[]\n") + ["MiB", "N/A", "C+G", ", ", "Processes:",
                                                                          "MIG devices:", "pid, process_name"]),
                max_size=200).map("".join) | st.text(max_size=300))
def test_fuzz_any_text_never_raises(text):
    smi = parse_pasted_smi(text)
    json.dumps(pasted_json(smi))
    pasted_text(smi)


def test_the_fake_nvidia_smi_csv_outputs_read_back_as_the_live_parser_reads_them(tmp_path):
    from support.gpu import FakeGpuState

    from specdash.gpu import smi

    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    state.add_process(4242, 0, 70000, name="sglang::scheduler_TP0", keep_when_dead=True)
    state.add_process(4243, 1, 1200, name="/usr/bin/python3", keep_when_dead=True)
    env = state.env()

    def run(*args: str) -> str:
        return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, env=env, timeout=60).stdout

    apps_query = "--query-compute-apps=" + ",".join(smi.APP_FIELDS)
    gpu_query = "--query-gpu=" + ",".join(smi.GPU_FIELDS)
    live_gpus = smi.parse_gpu_csv(run(gpu_query, "--format=csv,noheader,nounits"))
    live_apps = smi.parse_apps_csv(run(apps_query, "--format=csv,noheader,nounits"), live_gpus)
    pasted = parse_pasted_smi(run(gpu_query, "--format=csv") + "\n" + run(apps_query, "--format=csv"))
    assert [(g.index, g.name, g.memory_used_mib, g.memory_total_mib) for g in pasted.gpus] == [
        (g.index, g.name, g.memory_used_mib, g.memory_total_mib) for g in live_gpus]
    assert [(p.pid, p.gpu_index, p.used_mib, p.name) for p in pasted.processes] == [
        (p.pid, p.gpu_index, p.used_mib, p.name) for p in live_apps] == [
        (4242, 0, 70000, "sglang::scheduler_TP0"), (4243, 1, 1200, "/usr/bin/python3")]
    bare = parse_pasted_smi(run(gpu_query, "--format=csv,noheader,nounits") + "\n"
                            + run(apps_query, "--format=csv,noheader,nounits"))
    assert [(p.pid, p.gpu_index, p.used_mib, p.name) for p in bare.processes] == [
        (p.pid, p.gpu_index, p.used_mib, p.name) for p in live_apps]
    assert [(g.index, g.memory_used_mib) for g in bare.gpus] == [(0, None), (1, None)]  # no units: not guessed
