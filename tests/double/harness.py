"""Helpers for tests that run the SGLang double on this machine. Load this file by path with ``importlib``:
this directory is never put on the test process's sys.path, because it holds a package named ``sglang``.

Usage from a test file::

    import importlib.util, pathlib
    _spec = importlib.util.spec_from_file_location(
        "sglang_double_harness", pathlib.Path(__file__).parent / "double" / "harness.py")
    harness = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(harness)

    env = harness.double_env(tmp_path, "fast")          # env for LocalHost(env=env)
    cmd = harness.launch_command(port, spec=True)       # "python3 -m sglang.launch_server ... --port N ..."
"""

from __future__ import annotations

import json
import os
import pathlib
import signal
import socket
import sys
import time

DOUBLE_DIR = pathlib.Path(__file__).resolve().parent
SCENARIOS_DIR = DOUBLE_DIR / "scenarios"
BIN_DIR = DOUBLE_DIR / "bin"
FAKES_BIN_DIR = DOUBLE_DIR.parent / "fakes" / "bin"  # the fake nvidia-smi that reads the double's GPU state


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def scenario_path(name_or_path: str) -> str:
    """``fast`` → tests/double/scenarios/fast.yaml; a path is returned as is."""
    path = pathlib.Path(name_or_path)
    if path.suffix in (".yaml", ".yml", ".json"):
        return str(path)
    return str(SCENARIOS_DIR / f"{name_or_path}.yaml")


def double_env(tmp_path: pathlib.Path, scenario: str | None = "fast", gpus: int = 2) -> dict[str, str]:
    """Environment for a host that runs the double: PYTHONPATH with the double first, PATH with its ``sglang``
    script and the fake ``nvidia-smi`` (tests/fakes/bin), the scenario, a fresh fake nvidia-smi state with ``gpus``
    H100s, and XDG_STATE_HOME in ``tmp_path``. ``tools/try_local.sh`` gives a user the same environment."""
    state = tmp_path / "nvidia-smi-state.json"
    state.write_text(json.dumps({
        "driver": True,
        "gpus": [{"index": i, "name": "NVIDIA H100 80GB HBM3", "uuid": f"GPU-5f1c0000-0000-0000-0000-00000000000{i}",
                  "memory_total_mib": 81559, "base_used_mib": 4, "utilization_pct": 0, "quirk": None}
                 for i in range(gpus)],
        "processes": [],
    }))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(DOUBLE_DIR), env.get("PYTHONPATH", "")) if p)
    env["PATH"] = os.pathsep.join((str(BIN_DIR), str(FAKES_BIN_DIR), env.get("PATH", "")))
    env["FAKE_NVIDIA_SMI_STATE"] = str(state)
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    env.pop("SPECDASH_STATE_DIR", None)
    env.pop("SGLANG_DOUBLE_SCENARIO", None)
    if scenario:
        env["SGLANG_DOUBLE_SCENARIO"] = scenario_path(scenario)
    for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
        env.pop(proxy, None)
    return env


def launch_command(port: int, *, spec: bool = True, extra: str = "", launcher: str = "python3 -m sglang.launch_server") -> str:
    """An SGLang launch command for the double on 127.0.0.1:``port`` (EAGLE-3, topk 1 when ``spec``)."""
    cmd = f"{launcher} --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 --port {port}"
    if spec:
        cmd += (" --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3-LLaMA3.1-8B"
                " --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 8")
    return f"{cmd} {extra}".rstrip()


def gpu_processes(env: dict[str, str]) -> list[dict]:
    """The ``processes`` entries of the fake nvidia-smi state."""
    return json.loads(pathlib.Path(env["FAKE_NVIDIA_SMI_STATE"]).read_text()).get("processes", [])


def pids_in_group(pgid: int) -> list[int]:
    """Live (non-zombie) PIDs whose process group is ``pgid``, from /proc."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            pids.append(int(entry))
    return pids


def proc_info(pid: int) -> dict | None:
    """``{"ppid", "pgid", "state", "args"}`` of ``pid`` from /proc, None when gone."""
    try:
        stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
        cmdline = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return {"state": fields[0], "ppid": int(fields[1]), "pgid": int(fields[2]),
            "args": cmdline.replace(b"\0", b" ").decode(errors="replace").strip()}


def kill_group(pgid: int, timeout_s: float = 5.0) -> None:
    """SIGKILL process group ``pgid`` (one a test started) and wait until it has no live process."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout_s
    while pids_in_group(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)


def groups_started_under(tmp_path: pathlib.Path) -> set[int]:
    """Process groups of this user's processes whose environment is a test's own (``XDG_STATE_HOME`` inside
    ``tmp_path``, as :func:`double_env` sets it): servers that test launched, also those it lost track of (a sweep's
    restarts, a test that failed half-way). Never a process started with another environment."""
    marker = f"XDG_STATE_HOME={tmp_path / 'state'}".encode()
    groups: set[int] = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                continue
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
            if marker in environ:
                groups.add(os.getpgid(int(entry)))
        except (OSError, ProcessLookupError):
            continue
    groups.discard(os.getpgid(0))  # never the test run itself
    return groups


def _print_env(argv: list[str]) -> int:
    """``harness.py --print-env DIR [SCENARIO]``: the lines of :func:`double_env` (state in DIR) for a POSIX shell
    to ``eval``: ``export NAME='value'`` for what it sets, ``unset NAME`` for what it removes. Used by
    ``tools/try_local.sh``."""
    import shlex

    if len(argv) not in (2, 3) or argv[0] != "--print-env":
        print("usage: harness.py --print-env DIR [SCENARIO]", file=sys.stderr)
        return 2
    directory = pathlib.Path(argv[1])
    directory.mkdir(parents=True, exist_ok=True)
    env = double_env(directory, argv[2] if len(argv) == 3 else "default")
    for name in sorted(set(os.environ) | set(env)):
        if name not in env:
            print(f"unset {name}")
        elif os.environ.get(name) != env[name]:
            print(f"export {name}={shlex.quote(env[name])}")
    return 0


if __name__ == "__main__":
    sys.exit(_print_env(sys.argv[1:]))
