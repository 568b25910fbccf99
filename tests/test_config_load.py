"""The config file: a full example loads into typed settings; every mistake is one line with file, line and key;
SPECDASH_* environment variables override; the XDG location is used by default."""

from __future__ import annotations

import textwrap

import pytest

from specdash.config import ConfigError, load_config
from specdash.config.schema import HostConfig, LaunchProfile, SweepPoint

FULL = textwrap.dedent("""\
    # specdash config
    theme: high-contrast
    default_host: gpu1
    gpu_interval_s: 1.5
    record: false
    hosts:
      gpu1:
        target: alice@gpu1.example.com:2222
        log_path: /var/log/sglang/server.log
        python: /opt/sglang/bin/python
        server_url: http://127.0.0.1:30000
        sglang_version: 0.5.6
        launch_profiles:
          eagle3-d4:
            command: python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3
            env: {CUDA_VISIBLE_DEVICES: "0,1"}
            description: EAGLE-3 depth 4
      box: {target: local}
    workloads:
      my-chat: {file: ~/prompts.jsonl, api: completions, num_requests: 64, concurrency: 8, seed: 7}
      quick: {preset: batch1-latency}
    sweeps:
      depth:
        workload: my-chat
        repeats: 5
        configs:
          - {label: baseline, baseline: true}
          - label: d16
            flags: {speculative_num_steps: 15, speculative_eagle_topk: 1, speculative_num_draft_tokens: 16}
    keymap:
      gpus.kill: K,ctrl+k
      log.filter: slash
    """)


def write(tmp_path, text: str):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for var in ("SPECDASH_CONFIG", "SPECDASH_THEME", "SPECDASH_RECORD", "SPECDASH_GPU_INTERVAL_S",
                "SPECDASH_DEFAULT_HOST"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_full_example_loads_typed(tmp_path):
    config = load_config(write(tmp_path, FULL))
    assert config.theme == "high-contrast" and config.record is False and config.gpu_interval_s == 1.5
    gpu1 = config.host("gpu1")
    assert isinstance(gpu1, HostConfig) and gpu1.target == "alice@gpu1.example.com:2222"
    assert gpu1.sglang_version == "0.5.6" and gpu1.python == "/opt/sglang/bin/python"
    assert gpu1.launch_profiles["eagle3-d4"] == LaunchProfile(
        command="python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3",
        env={"CUDA_VISIBLE_DEVICES": "0,1"}, description="EAGLE-3 depth 4")
    assert config.host("box").python == "python3"  # default
    assert config.workloads["my-chat"].api == "completions" and config.workloads["my-chat"].num_requests == 64
    assert config.workloads["quick"].concurrency == 4  # default
    sweep = config.sweeps["depth"]
    assert sweep.repeats == 5 and sweep.configs[1] == SweepPoint(
        label="d16", flags={"speculative_num_steps": 15, "speculative_eagle_topk": 1,
                            "speculative_num_draft_tokens": 16})
    assert config.keys_for("gpus.kill") == ["K", "ctrl+k"] and config.keys_for("bench.run") is None
    assert config.source == tmp_path / "config.yaml"


def test_default_location_is_xdg_and_may_be_absent(tmp_path):
    config = load_config()
    assert config.hosts == {} and config.theme is None and config.source is None
    (tmp_path / "xdg" / "specdash").mkdir(parents=True)
    (tmp_path / "xdg" / "specdash" / "config.yaml").write_text("theme: light\n")
    assert load_config().theme == "light"


@pytest.mark.parametrize("text, line, key, problem", [
    ("hosts:\n  gpu1:\n    target: x\n    port: twenty\n", 4, "hosts.gpu1.port", "expected an integer, got 'twenty'"),
    ("theme: dark\nhots: {}\n", 2, "hots", "unknown key (did you mean 'hosts'?)"),
    ("hosts:\n  gpu1:\n    log_path: /x\n", 2, "hosts.gpu1", "missing required key 'target'"),
    ("workloads:\n  w:\n    api: grpc\n", 3, "workloads.w.api", "expected one of chat, completions, generate"),
    ("workloads:\n  w:\n    num_requests: 0\n", 3, "workloads.w.num_requests", "must be at least 1"),
    ("sweeps:\n  d:\n    configs:\n      - label: a\n      - flagz: {}\n", 5, "sweeps.d.configs[1].flagz",
     "unknown key (did you mean 'flags'?)"),
    ("record: maybe\n", 1, "record", "expected true or false, got 'maybe'"),
    ("theme: a\ntheme: b\n", 2, "theme", "duplicate key"),
    ("hosts: [a, b]\n", 1, "hosts", "expected a mapping, got a list"),
    ("default_host: gpu9\nhosts:\n  gpu1: {target: x}\n", 1, "default_host", "no host named 'gpu9'"),
])
def test_mistake_is_one_line_with_file_line_and_key(tmp_path, text, line, key, problem):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: {key}: {problem}")
    assert "\n" not in message
    assert (info.value.line, info.value.key) == (line, key)


def test_invalid_yaml_names_the_line(tmp_path):
    path = write(tmp_path, "theme: dark\nhosts:\n  gpu1: {target: x\n  other: 1\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:") and "invalid YAML" in str(info.value)
    assert info.value.line in (3, 4, 5)


def test_top_level_must_be_a_mapping(tmp_path):
    with pytest.raises(ConfigError, match=r":1: expected a mapping of settings"):
        load_config(write(tmp_path, "- theme\n"))


def test_named_file_must_exist(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "missing.yaml")
    monkeypatch.setenv("SPECDASH_CONFIG", str(tmp_path / "also-missing.yaml"))
    with pytest.raises(ConfigError, match="also-missing.yaml: no such config file"):
        load_config()


def test_environment_overrides(tmp_path, monkeypatch):
    path = write(tmp_path, FULL)
    monkeypatch.setenv("SPECDASH_THEME", "light")
    monkeypatch.setenv("SPECDASH_RECORD", "yes")
    monkeypatch.setenv("SPECDASH_GPU_INTERVAL_S", "0.5")
    config = load_config(path)
    assert (config.theme, config.record, config.gpu_interval_s) == ("light", True, 0.5)
    assert sorted(config.env_overrides) == ["SPECDASH_GPU_INTERVAL_S", "SPECDASH_RECORD", "SPECDASH_THEME"]
    monkeypatch.setenv("SPECDASH_GPU_INTERVAL_S", "fast")
    with pytest.raises(ConfigError, match=r"^environment SPECDASH_GPU_INTERVAL_S='fast': expected a number$"):
        load_config(path)
    monkeypatch.setenv("SPECDASH_GPU_INTERVAL_S", "0")
    with pytest.raises(ConfigError, match=r"^environment SPECDASH_GPU_INTERVAL_S: must be at least 0.1"):
        load_config(path)
