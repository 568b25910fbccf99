"""What a user configures: the shipped example loads, keymap ids are checked and apply in replay and in help,
``default_host`` stands in for TARGET."""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from specdash.app.keymap import binding_table
from specdash.app.replay import ReplayApp
from specdash.config import ConfigError, load_config
from specdash.config.loader import check_keymap
from specdash.config.schema import Config, HostConfig, LaunchProfile, SweepConfig, SweepPoint, WorkloadConfig
from specdash.session.reader import read_session

REPO = Path(__file__).resolve().parent.parent
STORY = REPO / "tests" / "data" / "session" / "story.yaml"


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SPECDASH_")}
    return subprocess.run([sys.executable, "-m", "specdash", *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env={**clean, **(env or {})})


def test_example_config_loads_and_names_every_setting(tmp_path):
    printed = cli("config", "--example")
    assert printed.returncode == 0
    path = tmp_path / "config.yaml"
    path.write_text(printed.stdout)
    config = load_config(path)
    check_keymap(config, binding_table())  # its keymap ids are real ones
    assert config.theme == "specdash-dark" and config.default_host == "gpu1"
    assert config.hosts["gpu1"].launch_profiles["eagle3-d4"].env == {"CUDA_VISIBLE_DEVICES": "0"}
    assert config.sweeps["depth"].configs[1].flags["speculative_num_draft_tokens"] == 16
    raw = yaml.safe_load(printed.stdout)
    shown = {
        Config: set(raw),
        HostConfig: set(raw["hosts"]["gpu1"]),
        LaunchProfile: set(raw["hosts"]["gpu1"]["launch_profiles"]["eagle3-d4"]),
        WorkloadConfig: set(raw["workloads"]["my-chat"]) | {"file"},  # file is the commented-out alternative
        SweepConfig: set(raw["sweeps"]["depth"]),
        SweepPoint: set().union(*raw["sweeps"]["depth"]["configs"]),
    }
    assert "# file: ~/prompts.jsonl" in printed.stdout
    for cls, keys in shown.items():
        fields = {f.name for f in dataclasses.fields(cls) if not f.metadata.get("internal")}
        assert keys == fields, (cls.__name__, fields ^ keys)
    ok = cli("config", env={"SPECDASH_CONFIG": str(path)})
    assert ok.returncode == 0 and ok.stdout.startswith(f"{path}: ok, 2 host(s)")


def test_unknown_keymap_id_is_one_line_with_did_you_mean(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("theme: specdash-light\nkeymap:\n  log.filter: slash\n  gpus.kil: ctrl+k\n")
    with pytest.raises(ConfigError) as info:
        check_keymap(load_config(path), binding_table())
    assert str(info.value) == f"{path}:4: keymap.gpus.kil: unknown binding id (did you mean 'gpus.kill'?)"
    for command in (["config"], ["replay", str(STORY)]):  # replay refuses it before opening the UI
        out = cli(*command, env={"SPECDASH_CONFIG": str(path)})
        assert out.returncode == 2 and out.stderr.count("\n") == 1
        assert "keymap.gpus.kil: unknown binding id (did you mean 'gpus.kill'?)" in out.stderr


def test_readme_lists_every_binding_id():
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("### Binding ids"):]
    section = section[:section.index("\n## ")]
    rows = "\n".join(line for line in section.splitlines() if line.startswith("| "))
    listed = set(re.findall(r"`([a-z]+\.[a-z_]+)`", rows))
    assert listed == set(binding_table())


def test_readme_command_table_shows_every_connect_option():
    """The README's ``connect`` row names each option ``specdash connect --help`` offers."""
    import argparse

    from specdash.cli import build_parser

    readme = (REPO / "README.md").read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `specdash connect "))
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    spelled = [a.option_strings for a in sub.choices["connect"]._actions if a.option_strings]
    missing = sorted(names[-1] for names in spelled if "--help" not in names
                     and not any(re.search(rf"`[^`]*{re.escape(o)}\b", row) for o in names))
    assert missing == [], f"README's connect row lacks {missing}"


async def test_keymap_applies_in_replay_and_help_shows_the_remapped_key():
    app = ReplayApp(read_session(STORY), 1.0, start_paused=True, keymap={"replay.pause": "z", "app.help": "f9"})
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        assert app.player.paused
        await pilot.press("p")  # the default key no longer pauses
        await pilot.pause()
        assert app.player.paused
        await pilot.press("z")
        await pilot.pause()
        assert not app.player.paused
        await pilot.press("f9")
        await pilot.pause()
        body = str(app.screen.query_one("#help-body").render())
        assert re.search(r"\bz\s+Pause/resume", body) and re.search(r"\bf9\s+Help", body)
        assert not re.search(r"\bp\s+Pause/resume", body)


def test_default_host_stands_in_for_target(tmp_path):
    from support.gpu import FakeGpuState

    state = FakeGpuState(tmp_path / "gpu.json", gpus=1)
    env = {k: v for k, v in state.env().items() if not k.startswith("SPECDASH_")}
    missing = subprocess.run([sys.executable, "-m", "specdash", "ps"], capture_output=True, text=True, timeout=60,
                             env={**env, "SPECDASH_CONFIG": str(tmp_path / "none.yaml")})
    assert missing.returncode == 2
    config = tmp_path / "config.yaml"
    config.write_text("hosts:\n  box: {target: local}\ndefault_host: box\n")
    named = subprocess.run([sys.executable, "-m", "specdash", "ps", "--json"], capture_output=True, text=True,
                           timeout=60, env={**env, "SPECDASH_CONFIG": str(config)})
    assert named.returncode == 0, named.stderr
    assert '"gpus"' in named.stdout
    by_env = subprocess.run([sys.executable, "-m", "specdash", "ps", "--json"], capture_output=True, text=True,
                            timeout=60, env={**env, "SPECDASH_DEFAULT_HOST": "local",
                                             "XDG_CONFIG_HOME": str(tmp_path / "empty")})
    assert by_env.returncode == 0, by_env.stderr
    none = subprocess.run([sys.executable, "-m", "specdash", "clean", "--yes"], capture_output=True, text=True,
                          timeout=60, env={**env, "XDG_CONFIG_HOME": str(tmp_path / "empty")})
    assert none.returncode == 2
    assert "give a TARGET, or set default_host in config.yaml (or SPECDASH_DEFAULT_HOST)" in none.stderr
