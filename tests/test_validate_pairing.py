"""`specdash validate` includes the draft/target pairing check when both model folders are readable."""

from __future__ import annotations

import json

from support.pairing import eagle3_tensors, load, write_model_dir

from specdash.cli import main


def command(target, draft) -> list[str]:
    return ["validate", "--sglang-version", "0.5.12", "--json", "--", "python", "-m", "sglang.launch_server",
            "--model-path", str(target), "--tp", "8", "--speculative-algorithm", "EAGLE3",
            "--speculative-draft-model-path", str(draft), "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def test_field_report_pairing_error_fails_validate(tmp_path, capsys):
    target = write_model_dir(tmp_path / "Kimi-K2.5", load("kimi_k25_target"))
    draft = write_model_dir(tmp_path / "draft", load("kimi_k25_draft_vllm_export"),
                            eagle3_tensors(7168, 7168, vllm_names=True))
    code = main(command(target, draft))
    out = json.loads(capsys.readouterr().out)
    assert code == 1  # the flags alone are fine: the pairing error makes it fail
    assert not [d for d in out["diagnostics"] if d["severity"] == "error"]
    assert out["pairing"]["captured_boundaries"] == [3, 31, 59]
    assert [d["code"] for d in out["pairing"]["diagnostics"] if d["severity"] == "error"] == ["id-convention"]


def test_no_pairing_section_when_the_draft_is_not_readable(tmp_path, capsys):
    target = write_model_dir(tmp_path / "Kimi-K2.5", load("kimi_k25_target"))
    code = main(command(target, tmp_path / "absent-draft"))
    out = json.loads(capsys.readouterr().out)
    assert "pairing" not in out
    assert code == 0


def _eagle3_pair(tmp_path):
    target = write_model_dir(tmp_path / "Llama-3.1-8B-Instruct", load("llama31_8b_target"))
    draft = write_model_dir(tmp_path / "eagle3-draft", load("llama31_8b_draft_noids"), eagle3_tensors(4096, 4096))
    return target, draft


def _served_as(target, draft, algorithm: str, *extra: str) -> list[str]:
    return ["validate", "--sglang-version", "0.5.9", *extra, "--", "python", "-m", "sglang.launch_server",
            "--model-path", str(target), "--speculative-algorithm", algorithm,
            "--speculative-draft-model-path", str(draft), "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def test_eagle3_draft_served_as_eagle_is_caught_by_validate(tmp_path, capsys):
    """Both config.json files are readable: validate runs the pairing check itself (no `specdash pair` needed)."""
    target, draft = _eagle3_pair(tmp_path)
    assert main(_served_as(target, draft, "EAGLE", "--json")) == 1
    out = json.loads(capsys.readouterr().out)
    errors = [d["code"] for d in out["pairing"]["diagnostics"] if d["severity"] == "error"]
    assert "eagle3-draft-as-eagle" in errors
    assert main(_served_as(target, draft, "EAGLE")) == 1
    text = capsys.readouterr().out
    assert "draft/target pairing" in text and "EAGLE-3 head" in text
    assert main(_served_as(target, draft, "NEXTN", "--json")) == 1  # NEXTN runs as EAGLE
    out = json.loads(capsys.readouterr().out)
    assert "eagle3-draft-as-eagle" in [d["code"] for d in out["pairing"]["diagnostics"]]
    assert main(_served_as(target, draft, "EAGLE3", "--json")) == 0  # the right algorithm: no pairing error
    out = json.loads(capsys.readouterr().out)
    assert not [d for d in out["pairing"]["diagnostics"] if d["severity"] == "error"]
