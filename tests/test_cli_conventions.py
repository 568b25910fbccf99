"""Command-line conventions: ``--debug`` / ``--log-file`` logging through the core, shell completion."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support.gpu import FakeGpuState, pid_alive, poll_until, reap_group, spawn_orphans
from support.gpu import run_specdash as specdash


def test_log_file_records_connection_sampling_and_kills(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    pgid, pids = spawn_orphans(1)
    log = tmp_path / "specdash.log"
    try:
        state.add_process(pids[0], 0, 1000)
        out = specdash(state, "--debug", "--log-file", str(log), "clean", "local", "--yes", "--grace-s", "2")
        assert out.returncode == 0, out.stdout + out.stderr
        assert poll_until(lambda: not pid_alive(pids[0]))
    finally:
        reap_group(pgid)
    text = log.read_text()
    assert "specdash.hosts.base: connection local: connected" in text
    assert "DEBUG specdash.gpu.sampler: GPU sample (" in text
    assert f"specdash.gpu.kill: kill on local: SIGTERM group {pgid}" in text


def test_no_log_without_the_switches(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    out = specdash(state, "ps", "local")
    assert out.returncode == 0 and "connection local" not in out.stderr
    debug = specdash(state, "--debug", "ps", "local")  # --debug alone: the headless command logs to stderr
    assert debug.returncode == 0 and "INFO specdash.hosts.base: connection local: connected" in debug.stderr


def test_unwritable_log_file_is_one_line_and_exit_2(tmp_path):
    out = specdash(None, "--log-file", str(tmp_path / "no" / "such" / "dir" / "x.log"), "locate")
    assert out.returncode == 2
    assert out.stderr.startswith("specdash: error: cannot open the log file") and len(out.stderr.splitlines()) == 1


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_completion_script_completes_commands_and_options(tmp_path):
    script = specdash(None, "--print-completion", "bash")
    assert script.returncode == 0
    (tmp_path / "specdash.bash").write_text(script.stdout)
    probe = (f"source {tmp_path}/specdash.bash; "
             "COMP_WORDS=(specdash re); COMP_CWORD=1; COMP_LINE='specdash re'; COMP_POINT=11; "
             "_shtab_specdash specdash re specdash; printf '%s\\n' \"${COMPREPLY[@]}\"; "
             "COMP_WORDS=(specdash replay --s); COMP_CWORD=2; COMP_LINE='specdash replay --s'; COMP_POINT=19; "
             "_shtab_specdash specdash --s replay; printf '%s\\n' \"${COMPREPLY[@]}\"")
    result = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    words = result.stdout.split()
    assert "replay" in words and "--speed" in words and "--summary" in words, result.stdout + result.stderr
