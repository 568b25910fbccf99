"""``specdash pair``: text and JSON output, exit codes, the probe path, the field report's case."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from support.pairing import DATA, eagle3_tensors, load, write_model_dir

from specdash.cli import main


@pytest.fixture
def kimi_field_case(tmp_path):
    """Kimi-K2.5 target + a TorchSpec --vllm export draft (ids [2,30,58], layers.0.* tensors)."""
    target = write_model_dir(tmp_path / "Kimi-K2.5", load("kimi_k25_target"))
    draft = write_model_dir(tmp_path / "kimi-k2.5-eagle3-vllm", load("kimi_k25_draft_vllm_export"),
                            eagle3_tensors(7168, 7168, vllm_names=True))
    return str(target), str(draft)


def test_field_report_explained_in_text(kimi_field_case, capsys):
    target, draft = kimi_field_case
    code = main(["pair", "--target", target, "--draft", draft, "--sglang-version", "0.5.12"])
    out = capsys.readouterr().out
    assert code == 1
    assert "SGLang captures boundaries [3, 31, 59]" in out
    assert "id-convention" in out and "[2, 30, 58]" in out
    assert '"eagle_aux_hidden_state_layer_ids": [1, 29, 57]' in out
    assert "layer map" in out and "SpecForge/TorchSpec/ModelOpt default" in out
    assert "rules:0.5.12" in out


def test_json_output_shape(kimi_field_case, capsys):
    target, draft = kimi_field_case
    code = main(["pair", "--target", target, "--draft", draft, "--sglang-version", "0.5.12", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert data["captured_boundaries"] == [3, 31, 59]
    assert data["declared_ids"] == [2, 30, 58]
    assert data["source"] == "rules:0.5.12"
    assert any(d["severity"] == "error" and d["code"] == "id-convention" for d in data["diagnostics"])
    assert all(set(d) == {"severity", "code", "message", "fix"} for d in data["diagnostics"])


def test_good_pair_exits_zero_with_config_json_paths(tmp_path, capsys):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    draft = write_model_dir(tmp_path / "d", load("llama31_8b_draft_trainer_ids"), eagle3_tensors(4096, 4096))
    code = main(["pair", "--target", str(target / "config.json"), "--draft", str(draft / "config.json"),
                 "--no-probe", "--json", "--host", "local"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["captured_boundaries"] == [2, 16, 29] and data["source"] == "rules:0.5.23"


def test_probe_is_used_when_sglang_is_installed(kimi_field_case, capsys, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(DATA / "fake_sglang"))
    target, draft = kimi_field_case
    code = main(["pair", "--target", target, "--draft", draft, "--python", sys.executable, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["source"] == "probe"
    assert data["captured_boundaries"] == [2, 30, 58]
    assert code == 0


def test_algorithm_option(tmp_path, capsys):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    draft = write_model_dir(tmp_path / "d", load("llama31_8b_draft_trainer_ids"))
    assert main(["pair", "--target", str(target), "--draft", str(draft), "--algorithm", "eagle"]) == 1
    assert "eagle3-draft-as-eagle" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--sglang-version", "latest"], "not an SGLang version"),
        (["--algorithm", "MEDUSA"], "unknown --algorithm"),
    ],
)
def test_usage_errors_are_one_line(tmp_path, capsys, extra, message):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    code = main(["pair", "--target", str(target), "--draft", str(target), *extra])
    err = capsys.readouterr().err
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_missing_draft_is_one_line(tmp_path, capsys):
    target = write_model_dir(tmp_path / "t", load("llama31_8b_target"))
    code = main(["pair", "--target", str(target), "--draft", str(tmp_path / "nope"), "--no-probe"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot read the draft config" in err and "Traceback" not in err


def test_runs_as_a_real_command(tmp_path):
    target = write_model_dir(tmp_path / "t", load("deepseek_v3_target"))
    draft = write_model_dir(tmp_path / "d", load("deepseek_v3_draft_vllm_ids"))
    proc = subprocess.run(
        [sys.executable, "-m", "specdash", "pair", "--target", str(target), "--draft", str(draft),
         "--sglang-version", "0.5.12", "--json"],
        capture_output=True, text=True, timeout=60, env=dict(os.environ),
    )
    data = json.loads(proc.stdout)
    assert data["captured_boundaries"] == [3, 31, 59]
    # ids [2,30,58] without export markers: the convention is only likely, so a warning, exit 0
    assert proc.returncode == 0
    assert any(d["code"] == "id-convention" and d["severity"] == "warning" for d in data["diagnostics"])
