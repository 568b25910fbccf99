"""`specdash ps NAME` resolves a host named in config.yaml (as connect does); a bad config is one line, exit 2."""

import json
import subprocess
import sys

from support.gpu import FakeGpuState


def ps(env, *args):
    return subprocess.run([sys.executable, "-m", "specdash", "ps", *args], capture_output=True, text=True,
                          timeout=60, env=env)


def test_named_host_from_config_is_used(tmp_path):
    state = FakeGpuState(tmp_path / "gpu.json", gpus=2)
    config = tmp_path / "config.yaml"
    config.write_text("hosts:\n  box:\n    target: local\n")
    env = {**state.env(), "SPECDASH_CONFIG": str(config)}
    result = ps(env, "box", "--json")
    assert result.returncode == 0, result.stderr
    assert [g["index"] for g in json.loads(result.stdout)["gpus"]] == [0, 1]


def test_bad_config_is_one_line_exit_2(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text("hosts:\n  box:\n    targett: local\n")
    result = ps({**FakeGpuState(tmp_path / "gpu.json").env(), "SPECDASH_CONFIG": str(config)}, "box")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert f"{config}:3" in line and "targett" in line
