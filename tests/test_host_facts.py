"""Host facts: the SGLang version probe and config.json reads, asked once per connection, through a real
LocalHost and a real interpreter stand-in (a script that counts its runs)."""

from __future__ import annotations

import json
import stat

from specdash.hosts.local import LocalHost
from specdash.sglang.host_facts import facts_for, split_model_path


def fake_python(tmp_path, version: str | None):
    """An executable that prints ``version`` like ``python -c 'import sglang; print(sglang.__version__)'`` (or
    fails like a python without SGLang) and appends a line to ``runs`` each time it runs."""
    runs = tmp_path / "runs"
    script = tmp_path / "python"
    body = (f'echo run >> "{runs}"\n' + (f'echo "{version}"\n' if version else
                                           "echo \"ModuleNotFoundError: No module named 'sglang'\" >&2; exit 1\n"))
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script, runs


async def test_version_is_probed_once_per_connection(tmp_path):
    python, runs = fake_python(tmp_path, "0.5.9")
    host = LocalHost()
    await host.connect()
    facts = facts_for(host)
    assert facts is facts_for(host)  # one per host: the builder, validate and pair share it
    assert (await facts.sglang_version(str(python))).version == "0.5.9"
    assert (await facts.sglang_version(str(python))).version == "0.5.9"
    assert runs.read_text().count("run") == 1
    await host.connect()  # a new connection may reach a changed host: ask again
    assert (await facts.sglang_version(str(python))).version == "0.5.9"
    assert runs.read_text().count("run") == 2


async def test_a_python_without_sglang_is_said_and_asked_again(tmp_path):
    python, runs = fake_python(tmp_path, None)
    host = LocalHost()
    await host.connect()
    probe = await facts_for(host).sglang_version(str(python))
    assert probe.version is None and probe.problem == f"SGLang not importable with {python} on {host.name}"
    await facts_for(host).sglang_version(str(python))
    assert runs.read_text().count("run") == 2  # a failure is not kept


async def test_model_config_reads_missing_bad_and_cached(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    host = LocalHost()
    await host.connect()
    facts = facts_for(host)
    read = await facts.model_config(str(model) + "/")
    assert read.value == {"architectures": ["LlamaForCausalLM"]} and read.path == str(model / "config.json")
    (model / "config.json").write_text("{not json")
    assert (await facts.model_config(str(model))).value == {"architectures": ["LlamaForCausalLM"]}  # kept
    facts.forget()
    bad = await facts.model_config(str(model))
    assert bad.value is None and not bad.missing and "is not valid JSON" in bad.problem
    (model / "config.json").write_text("[1, 2]")
    assert "is not a JSON object" in (await facts.model_config(str(model))).problem
    missing = await facts.model_config(str(tmp_path / "nowhere"))
    assert missing.missing and missing.problem.startswith("cannot read the model config")
    assert split_model_path("/m/config.json") == ("/m", "/m/config.json")
