"""nvidia-smi parsing (real output quirks) and the fake nvidia-smi that the other tests rely on."""

from __future__ import annotations

import subprocess

from support.gpu import DATA, FAKES_BIN, FakeGpuState, reap_group, spawn_holder

from specdash.gpu import smi


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_dp4_four_orphaned_schedulers_parse_with_units_and_header():
    gpus = smi.parse_gpu_csv(read("dp4_orphans_query_gpu_csv.txt"))
    assert [g.index for g in gpus] == [0, 1, 2, 3]
    assert gpus[0].name == "NVIDIA H200" and gpus[0].memory_total_mib == 143771
    assert gpus[0].memory_used_mib == 101025 and gpus[0].utilization_pct == 0
    procs = smi.parse_apps_csv(read("dp4_orphans_query_apps_csv_nounits.txt"), gpus)
    assert [(p.pid, p.gpu_index, p.used_mib) for p in procs] == [
        (2505781, 0, 100998), (2505782, 1, 101044), (2505783, 2, 101044), (2505784, 3, 100804)]
    assert procs[0].name == "sglang::scheduler_DP0_TP0_EP0"
    assert sum(p.used_mib for p in procs) / 1024 > 393  # ~394 GiB held, as the case says


def test_container_rows_keep_not_found_names_and_na_memory():
    gpus = smi.parse_gpu_csv(read("dp4_orphans_query_gpu_csv.txt"))
    procs = smi.parse_apps_csv(read("container_apps_csv_nounits.txt"), gpus)
    assert [p.used_mib for p in procs] == [None, None, 1658]
    assert procs[0].name == "[Not Found]" and procs[2].name == "/usr/bin/python3"


def test_mig_rows_map_mig_uuid_to_parent_gpu_and_na_utilisation():
    gpus = smi.parse_gpu_csv(read("mig_query_gpu_nounits.txt"))
    assert gpus[0].utilization_pct is None and gpus[0].memory_used_mib == 14366
    mapping = smi.parse_list_gpus(read("mig_list_gpus.txt"))
    assert mapping["MIG-cba663e8-9bed-5b25-b243-5985ef7c9beb"] == 0
    procs = smi.parse_apps_csv(read("mig_apps_nounits.txt"), gpus, mapping)
    assert procs[0].gpu_index == 0 and procs[0].used_mib is None
    assert smi.parse_apps_csv(read("mig_apps_nounits.txt"), gpus)[0].gpu_index is None


def test_no_driver_no_devices_and_missing_tool_are_states_not_crashes():
    snap = smi.snapshot_from_smi(9, read("no_driver_stdout.txt"))
    assert snap.error == smi.NO_DRIVER_ERROR and snap.gpus == ()
    assert smi.snapshot_from_smi(6, read("no_devices_stdout.txt")).error == "No devices were found"
    assert smi.snapshot_from_smi(127, "sh: 1: nvidia-smi: not found\n").error == smi.NOT_INSTALLED_ERROR


def test_process_names_with_comma_space_stay_whole():
    gpus = smi.parse_gpu_csv("0, GPU-a, 10, 100, 5, NVIDIA H100\n")
    procs = smi.parse_apps_csv("7, GPU-a, 3, python3 -c x, y\n", gpus)
    assert procs[0].name == "python3 -c x, y" and procs[0].used_mib == 3


def test_garbage_lines_are_skipped_and_empty_processes_is_empty():
    text = "Unable to determine the device handle for GPU 0000:1B:00.0: Unknown Error\n0, GPU-a, 1, 2, 3, X\n"
    assert [g.index for g in smi.parse_gpu_csv(text)] == [0]
    snap = smi.snapshot_from_smi(0, "0, GPU-a, 1, 2, 3, X\n", 0, "")
    assert snap.error is None and snap.processes == ()


# ---- the fake nvidia-smi (used by every GPU test and by the test sshd) --------------------------------------

def run_fake(state: FakeGpuState, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(FAKES_BIN / "nvidia-smi"), *args], env=state.env(), capture_output=True, text=True,
                          timeout=10)


def test_fake_prints_real_csv_and_memory_follows_live_processes(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    holder = spawn_holder()
    try:
        state.add_process(holder.pid, 1, 70000)
        out = run_fake(state, "--query-gpu=" + ",".join(smi.GPU_FIELDS), "--format=csv,noheader,nounits")
        assert out.returncode == 0
        assert out.stdout.splitlines()[1] == "1, GPU-5f1c0a3e-0000-4000-8000-000000000001, 70004, 81559, 0, " \
                                             "NVIDIA H100 80GB HBM3"
        apps = run_fake(state, "--query-compute-apps=pid,process_name,used_memory,gpu_uuid", "--format=csv")
        assert apps.stdout.splitlines() == [
            "pid, process_name, used_gpu_memory [MiB], gpu_uuid",
            f"{holder.pid}, {holder.args[0]}, 70000 MiB, GPU-5f1c0a3e-0000-4000-8000-000000000001"]
    finally:
        reap_group(holder.pid)
        holder.wait()
    # the process is gone: its memory is released and the process list is empty (no header with noheader)
    apps = run_fake(state, "--query-compute-apps=" + ",".join(smi.APP_FIELDS), "--format=csv,noheader,nounits")
    assert apps.returncode == 0 and apps.stdout == ""
    gpus = smi.parse_gpu_csv(run_fake(state, "--query-gpu=" + ",".join(smi.GPU_FIELDS),
                                      "--format=csv,noheader,nounits").stdout)
    assert gpus[1].memory_used_mib == 4


def test_fake_without_driver_exits_9_with_message_on_stdout(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", driver=False)
    out = run_fake(state, "--query-gpu=index", "--format=csv")
    assert out.returncode == 9 and "couldn't communicate with the NVIDIA driver" in out.stdout
    state.state.update(driver=True, gpus=[])
    state.write()
    out = run_fake(state, "-L")
    assert out.returncode == 6 and out.stdout == "No devices were found\n"


def test_fake_quirks_na_notfound_and_mig(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    state.state["gpus"][0]["quirk"] = "na"
    state.state["gpus"][1]["quirk"] = "mig"
    state.add_process(2**22 + 12345, 1, 500, name="[Not Found]", keep_when_dead=True)
    out = run_fake(state, "--query-gpu=" + ",".join(smi.GPU_FIELDS), "--format=csv,noheader,nounits").stdout
    assert out.splitlines()[0].split(", ")[2:5] == ["[N/A]", "[N/A]", "[N/A]"]
    assert out.splitlines()[1].split(", ")[4] == "[N/A]"
    apps = run_fake(state, "--query-compute-apps=" + ",".join(smi.APP_FIELDS), "--format=csv,noheader,nounits")
    assert apps.stdout == f"{2**22 + 12345}, GPU-5f1c0a3e-0000-4000-8000-000000000001, [N/A], [Not Found]\n"
    listing = run_fake(state, "-L").stdout
    assert "MIG 3g.40gb" in listing and smi.parse_list_gpus(listing)
    bad = run_fake(state, "--query-gpu=bogus", "--format=csv")
    assert bad.returncode == 2 and 'Field "bogus" is not a valid field to query.' in bad.stdout


def test_fake_loops_with_lms(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    proc = subprocess.Popen([str(FAKES_BIN / "nvidia-smi"), "--query-gpu=index,memory.used",
                             "--format=csv,noheader,nounits", "-lms", "50"], env=state.env(),
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        lines = [proc.stdout.readline() for _ in range(3)]
        assert lines == ["0, 4\n"] * 3
    finally:
        reap_group(proc.pid)
        proc.wait()
