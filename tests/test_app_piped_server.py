"""The header's server state for a server whose output goes to a pipe (``... | tee``, a supervisor), not a file
specdash follows: it comes from the server itself - its process and ``GET /health`` - never from an old log line,
and says so. Real processes (the SGLang double, started the user's way with its output into a pipe) on LocalHost."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import threading

import pytest
from support.double import harness, host_env
from support.guard import guard
from support.pilot import wait_until

from specdash.app import log_liveness
from specdash.app.log_liveness import health_header
from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

pytestmark = pytest.mark.timeout(guard(120))  # a hang guard, scaled like every wait

OLD_LOG = ("[2026-11-30 09:00:00] Load weight end. type=LlamaForCausalLM\n"
           "[2026-11-30 09:00:05] The server is fired up and ready to roll!\n")


def start_piped(tmp_path, env, started_groups) -> tuple[subprocess.Popen, int]:
    """A double whose stdout and stderr go to a pipe (drained here, as ``| tee`` would)."""
    port = harness.free_port()
    proc = subprocess.Popen(shlex.split(harness.launch_command(port)), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    started_groups.append(proc.pid)
    threading.Thread(target=lambda: proc.stdout.read(), daemon=True).start()
    return proc, port


@pytest.fixture(autouse=True)
def quick_poll(monkeypatch):
    monkeypatch.setattr(log_liveness, "LOG_WRITER_POLL_S", 0.3)


def header(app) -> str:
    return f"{app.status_bar.server_state} ({app.status_bar.server_detail})"


async def test_an_old_log_line_never_outlives_the_piped_servers_health(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    proc, port = start_piped(tmp_path, env, started_groups)
    old = tmp_path / "yesterday.log"  # not this server's output: it says "ready" whatever the server does
    old.write_text(OLD_LOG)
    app = SpecdashApp(LocalHost(env=env), log_path=str(old), gpu_interval_s=0.5, server_port=port)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.status_bar.server_detail.startswith("from /health"), timeout_s=60,
                         what="the header from the server's health")
        assert header(app) == (f"ready (from /health on port {port} of PID {proc.pid}; its output goes to a pipe, "
                               f"not {old})")
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        await wait_until(pilot, lambda: app.status_bar.server_state == "stopped", timeout_s=30, what="gone",
                         state=lambda: header(app))
        assert header(app) == f"stopped (PID {proc.pid} is gone (seen with ps; its output goes to a pipe, not {old}))"
        await pilot.pause(1.0)  # further polls: the log's "ready" does not come back
        assert app.status_bar.server_state == "stopped", header(app)


async def test_a_chosen_server_with_no_log_to_follow_gets_its_state_from_its_health(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    proc, port = start_piped(tmp_path, env, started_groups)
    app = SpecdashApp(LocalHost(env=env), log_path=None, gpu_interval_s=0.5, server_pid=proc.pid)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.status_bar.server_state == "ready", timeout_s=60, what="ready")
        assert header(app) == (f"ready (from /health on port {port} of PID {proc.pid}; its output goes to a pipe: "
                               "no log to follow)")


def test_health_header_wording():
    assert health_header(7, 30000, True, False, "/x.log") == (
        "unknown", "PID 7 runs but /health on port 30000 does not answer (starting, or hung); its output goes to a "
        "pipe, not /x.log")
    assert health_header(7, None, True, False, None)[1].startswith("PID 7 runs but /health (port unknown)")
