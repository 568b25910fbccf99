"""Hostile config values: `.nan` as an interval, a self-referencing alias, an alias bomb — one clear line each,
never a RecursionError; the `python:` value reaches the host's shell as one quoted word."""

from __future__ import annotations

import textwrap

import pytest

from specdash.config import ConfigError, load_config
from specdash.hosts.local import LocalHost
from specdash.sglang.versions import version_command


@pytest.mark.parametrize("value", [".nan", ".NaN", ".inf", "-.inf"])
def test_non_finite_interval_is_refused(tmp_path, value):
    path = tmp_path / "config.yaml"
    path.write_text(f"theme: dark\ngpu_interval_s: {value}\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}:2: gpu_interval_s: expected a finite number, got ")


@pytest.mark.parametrize("text", ["hosts: &h {a: *h}\n", "workloads: &w [*w]\n",
                                  "hosts:\n  gpu1: &x\n    target: local\n    more: *x\n"])
def test_self_referencing_alias_is_one_clear_line(tmp_path, text):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message and "recursive alias" in message and message.startswith(str(path))


def test_alias_bomb_is_one_clear_line(tmp_path):
    path = tmp_path / "config.yaml"
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    path.write_text("x-anchors:\n" + textwrap.indent("\n".join(lines), "  ") + "\n")
    with pytest.raises(ConfigError, match="values .YAML aliases expanding"):
        load_config(path)


async def test_python_value_is_one_quoted_word_on_the_host(tmp_path):
    marker = tmp_path / "pwned"
    python = f"python3; touch {marker}"
    host = LocalHost()
    await host.connect()
    result = await host.run(version_command(python), timeout_s=30)
    assert not result.ok  # no program of that name
    assert not marker.exists()
    assert version_command("/opt/my env/bin/python") == \
        "'/opt/my env/bin/python' -c 'import sglang; print(sglang.__version__)'"
