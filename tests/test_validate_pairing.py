"""`specdash validate` includes the draft/target pairing check when both model folders are readable."""

from __future__ import annotations

import json

from specdash.cli import main
from support.pairing import eagle3_tensors, load, write_model_dir


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
