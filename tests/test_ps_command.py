"""``specdash ps TARGET [--json]`` as a user runs it: a real subprocess, the fake nvidia-smi on PATH."""

from __future__ import annotations

import json

from support.gpu import FakeGpuState, reap_group, spawn_orphans
from support.gpu import run_specdash as specdash


def test_ps_json_lists_gpus_and_classified_orphans(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    pgid, pids = spawn_orphans(2)
    try:
        state.add_process(pids[0], 0, 36000)
        state.add_process(pids[1], 1, 37000)
        state.add_process(4_100_000, 1, 900, name="[Not Found]", keep_when_dead=True)
        out = specdash(state, "ps", "local", "--json")
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert set(data) == {"gpus", "processes", "left", "container", "notes", "summary"}
        assert data["gpus"][1] == {"index": 1, "name": "NVIDIA H100 80GB HBM3",
                                   "uuid": "GPU-5f1c0a3e-0000-4000-8000-000000000001", "memory_used_mib": 37904,
                                   "memory_total_mib": 81559, "utilization_pct": 0, "unattributed_mib": 4}
        procs = {p["pid"]: p for p in data["processes"]}
        assert set(procs[pids[0]]) == {"pid", "gpu", "used_mib", "name", "user", "ppid", "pgid", "class", "reason",
                                       "source", "devices", "target"}
        assert procs[pids[0]]["class"] == procs[pids[1]]["class"] == "orphan"
        assert procs[pids[0]]["target"] is True and procs[pids[0]]["source"] == "driver"
        assert data["summary"] == "2 orphans from a crashed server hold 71.3 GiB on GPU 0–1; 1 process from another " \
                                  "PID namespace (container?) holds 0.9 GiB — not visible here"
        assert procs[pids[0]]["pgid"] == pgid and procs[pids[1]]["gpu"] == 1
        assert procs[4_100_000]["class"] == "unknown" and procs[4_100_000]["user"] is None
        text = specdash(state, "ps", "local")
        assert "2 orphans from a crashed server hold 71.3 GiB on GPU 0–1" in text.stdout
        # PPID 1, or a subreaper (CI containers) with the launcher gone: either way the reason names the cause
        assert "orphan of a crashed server: no live SGLang launcher owns it; re-parented to PID" in text.stdout
    finally:
        reap_group(pgid)


def test_ps_without_driver_is_a_normal_state(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", driver=False)
    out = specdash(state, "ps", "local", "--json")
    assert out.returncode == 0
    data = json.loads(out.stdout)
    assert {k: data[k] for k in ("gpus", "processes", "left", "error")} == {
        "gpus": [], "processes": [], "left": [], "error": "no NVIDIA driver on this host"}
    out = specdash(state, "ps", "local")
    assert out.returncode == 0 and "no NVIDIA driver on this host" in out.stdout and "Traceback" not in out.stderr


def test_ps_bad_target_is_one_line_and_exit_2():
    out = specdash(None, "ps", "user@host:99999")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1 and "port" in out.stderr
