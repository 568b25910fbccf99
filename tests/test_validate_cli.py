"""``specdash validate``: exit codes, --json shape, stdin, and config.json read through a Host."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys

from specdash.cli import main

SEED = ["python", "-m", "sglang.launch_server", "--model-path", "/m/t", "--speculative-algorithm", "EAGLE",
        "--speculative-draft-model-path", "/m/d", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens",
        "16"]


def test_error_exits_1_and_names_the_missing_flag(capsys):
    assert main(["validate", "--"] + SEED) == 1
    out = capsys.readouterr().out
    assert "ERROR" in out and "steps-missing" in out and "fix: add --speculative-num-steps 15" in out


def test_override_only_exits_0_and_shows_typed_vs_effective(capsys):
    assert main(["validate", "--"] + SEED + ["--speculative-num-steps", "1"]) == 0
    out = capsys.readouterr().out
    assert "OVERRIDE" in out and "speculative_num_draft_tokens" in out and "16 -> 2" in out


def test_json_output(capsys):
    assert main(["validate", "--json", "--sglang-version", "0.5.9", "--"] + SEED) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["sglang_version"] == "0.5.9"
    first = data["diagnostics"][0]
    assert first["severity"] == "error" and first["code"] == "steps-missing"
    assert set(first) >= {"severity", "code", "flags", "message", "fix"}
    assert data["effective"]["speculative_eagle_topk"] == 1


def test_quoted_single_argument_and_stdin(capsys, monkeypatch):
    assert main(["validate", "--", " ".join(SEED) + " --speculative-num-steps 15"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(sys, "stdin", io.StringIO("export SGLANG_ENABLE_SPEC_V2=1\n" + " ".join(SEED) +
                                                  " --speculative-num-steps 3 --speculative-eagle-topk 4\n"))
    assert main(["validate", "--sglang-version", "0.5.9", "--json", "-"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert "spec-v2-topk" in [d["code"] for d in data["diagnostics"]]


def test_usage_errors_exit_2(capsys):
    assert main(["validate"]) == 2
    assert "no launch command" in capsys.readouterr().err
    assert main(["validate", "--sglang-version", "newest", "--", "--port", "1"]) == 2
    assert "not an SGLang version" in capsys.readouterr().err


def test_host_local_reads_config_json(tmp_path, capsys):
    model = tmp_path / "gpt-oss-like"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"]}))
    cmd = f"python -m sglang.launch_server --model-path {model} --speculative-algorithm EAGLE " \
          "--speculative-draft-model-path /m/d"
    assert main(["validate", "--host", "local", "--sglang-version", "0.5.9", "--json", "--", cmd]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["architecture"] == "LlamaForCausalLM" and data["architecture_source"] == "config.json"
    assert (data["effective"]["speculative_num_steps"], data["effective"]["speculative_eagle_topk"]) == (5, 4)


def test_console_script_runs_headless():
    proc = subprocess.run([sys.executable, "-m", "specdash", "validate", "--", "--speculative-algorithm", "NGRAM",
                           "--model-path", "m"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "speculative_num_draft_tokens" in proc.stdout


def test_host_over_ssh_reads_config_json_remotely(sshd_server, tmp_path, capsys):
    model = tmp_path / "target"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"]}))
    cmd = f"python -m sglang.launch_server --model-path {model} --speculative-algorithm NEXTN"
    target = f"{sshd_server.user}@127.0.0.1:{sshd_server.port}"
    ssh = ["--host", target, "-i", str(sshd_server.client_key), "--known-hosts", str(sshd_server.known_hosts),
           "--ssh-config", str(sshd_server.ssh_config)]
    # the version is detected on the host (the test sshd puts the SGLang test double on PYTHONPATH): the report
    # uses what `import sglang` answers there
    main(["validate", *ssh, "--json", "--", cmd])
    data = json.loads(capsys.readouterr().out)
    assert data["sglang_version"] == asyncio.run(_remote_version(sshd_server))
    code = main(["validate", *ssh, "--sglang-version", "0.5.9", "--json", "--", cmd])
    data = json.loads(capsys.readouterr().out)
    assert code == 0, data
    assert data["architecture"] == "DeepseekV3ForCausalLM" and data["architecture_source"] == "config.json"
    # DeepSeek V3 carries its MTP head: the target is its own draft, and 0.5.x chooses 3/1/4
    assert data["effective"]["speculative_draft_model_path"] == str(model)
    assert (data["effective"]["speculative_num_steps"], data["effective"]["speculative_eagle_topk"]) == (3, 1)


async def _remote_version(sshd_server) -> str:
    host = sshd_server.make_host()
    await host.connect()
    try:
        result = await host.run("python3 -c 'import sglang; print(sglang.__version__)'", timeout_s=60)
        return result.stdout.strip().splitlines()[-1]
    finally:
        await host.close()
