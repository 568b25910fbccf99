"""Pasted nvidia-smi outputs as people paste them into issues: what ``ps --from`` prints must hold for one machine
at one time."""

from __future__ import annotations

from specdash.gpu.pasted import pasted_text
from specdash.gpu.smi_table import parse_pasted_smi

HEADER = """\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 570.86.10              Driver Version: 570.86.10      CUDA Version: 12.8     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
"""
PROCESSES = """\
+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
"""
BOTTOM = "+-----------------------------------------------------------------------------------------+\n"


def gpu(index: int, used: int) -> str:
    return (f"|   {index}  NVIDIA H100 80GB HBM3          On  |   00000000:1{index}:00.0 Off |                    0 |\n"
            f"| N/A   34C    P0            117W /  700W |   {used:>5}MiB /  81559MiB |      0%      Default |\n"
            "|                                         |                        |             Disabled |\n"
            "+-----------------------------------------+------------------------+----------------------+\n")


def proc(index: int, pid: int, used: int) -> str:
    return f"|    {index}   N/A  N/A          {pid:>6}      C   sglang::scheduler_TP{index}{used:>22}MiB |\n"


def test_before_and_after_snapshots_are_not_added_up():
    before = HEADER + gpu(0, 76543) + gpu(1, 76543) + "\n" + PROCESSES + proc(0, 123456, 76530) + proc(
        1, 123457, 76530) + BOTTOM
    none = "|  No running processes found" + " " * 62 + "|\n"
    after = HEADER + gpu(0, 4) + gpu(1, 4) + "\n" + PROCESSES + none + BOTTOM
    text = "before:\n" + before + "\nafter killing the server:\n" + after
    shown = pasted_text(parse_pasted_smi(text))
    assert "4 GPUs" not in shown and "2 processes" not in shown
    assert shown.splitlines()[-1].startswith("2 GPUs; no processes listed;")
    assert "the paste holds 2 nvidia-smi tables (lines 3, 29): only the last one (line 29) is read" in shown
    assert "123456" not in shown


def test_one_table_has_no_snapshot_note():
    shown = pasted_text(parse_pasted_smi(HEADER + gpu(0, 76543) + "\n" + PROCESSES + proc(0, 1, 76530) + BOTTOM))
    assert "nvidia-smi tables" not in shown
    assert "1 GPU; 1 process (1 SGLang worker) holds 74.7 GiB" in shown


def test_csv_paste_cut_inside_its_last_number_does_not_state_the_cut_number():
    text = ("pid, process_name, used_gpu_memory [MiB]\n123456, sglang::scheduler_TP0, 76530\n"
            "123457, sglang::scheduler_TP1, 7653")  # 76530 cut by the selection, no newline after it
    shown = pasted_text(parse_pasted_smi(text))
    assert "7653 " not in shown.replace("76530", "")
    assert "line 3: the paste ends inside this CSV row (no newline after it): its last value (7653) may be cut" in shown
    assert "hold at least 74.7 GiB" in shown


def test_csv_paste_without_final_newline_but_with_units_is_whole():
    text = "index, name, memory.used [MiB], memory.total [MiB]\n0, NVIDIA H100 80GB HBM3, 76543 MiB, 81559 MiB"
    smi = parse_pasted_smi(text)
    assert [(g.memory_used_mib, g.memory_total_mib) for g in smi.gpus] == [(76543, 81559)]
    assert smi.notes == []


def test_headerless_csv_row_cut_at_the_end_is_not_read():
    smi = parse_pasted_smi("123456, sglang::scheduler_TP0, 76530 MiB\n123457, sglang::scheduler_TP1, 7653")
    assert [(p.pid, p.used_mib) for p in smi.processes] == [(123456, 76530)]


def test_process_row_with_a_blank_name_keeps_its_memory():
    """nvidia-smi in a container often prints no process name: the row is whole, not cut."""
    row = "|    0   N/A  N/A           12345      C" + " " * 42 + "76530MiB |\n"
    shown = pasted_text(parse_pasted_smi(HEADER + gpu(0, 76543) + "\n" + PROCESSES + row + BOTTOM))
    assert "cut before its memory column" not in shown
    assert "no name in the paste" in shown
    assert "1 GPU; 1 process (1 unnamed) holds 74.7 GiB" in shown
