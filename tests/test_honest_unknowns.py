"""No rule turns a missing fact into an error.

Every rule that reads the target's architecture (``advice`` draft-path check, ``backends`` fa4 / intel_xpu /
deterministic-inference rules, ``speculative`` automatic depth and MTP draft, the known-issues architecture filter)
is fed commands whose model config.json cannot be read — with a model name that tells nothing, and with one from
which specdash guesses an architecture. An ``error`` in such a report must hold whatever the architecture turns out
to be: it must also be an error when validating with each real config.json. What cannot be decided is said at info
or warning level, with how to supply the fact.
"""

from __future__ import annotations

import itertools

from specdash.cli import main
from specdash.sglang.validate import validate_command

ARCHITECTURES = ("LlamaForCausalLM", "DeepseekV3ForCausalLM", "GptOssForCausalLM", "Qwen3ForCausalLM",
                 "Glm4MoeForCausalLM", "KimiK25ForConditionalGeneration", "DeepseekV4ForCausalLM")
VERSIONS = ("0.4.7", "0.5.1", "0.5.5", "0.5.9", "0.5.12", "0.5.23")
MODELS = ("/models/unreadable", "deepseek-ai/DeepSeek-V3", "meta-llama/Llama-3.1-8B-Instruct")
ALGORITHMS = ("EAGLE", "EAGLE3", "NEXTN", "STANDALONE")
EXTRAS = ("", "--attention-backend trtllm_mha", "--attention-backend flashinfer --enable-deterministic-inference",
          "--attention-backend fa3 --page-size 16", "--attention-backend flashinfer --page-size 16",
          "--attention-backend fa4", "--attention-backend intel_xpu --page-size 16",
          "--speculative-num-steps 3 --speculative-eagle-topk 4 --speculative-num-draft-tokens 8",
          "--enable-dp-attention --dp-size 8 --tp-size 8", "--pp-size 2")
DRAFTS = ("", "--speculative-draft-model-path /models/draft")

#: Diagnostics that show each architecture-reading rule path was reached by the grid (so the test keeps its reach).
REACHED = {"draft-path-maybe-missing", "fa4-page-size-on-blackwell", "deterministic-backend",
           "deterministic-backend-needs-arch", "auto-depth", "auto-depth-unknown-arch", "mtp-draft-from-target",
           "known-issue:eagle-dp-attention-draft-deadlock"}


def _errors(report) -> set[tuple[str, tuple[str, ...]]]:
    return {(d.code, d.flags) for d in report.diagnostics if d.severity == "error"}


def test_no_error_depends_on_an_unreadable_model_config():
    seen: set[str] = set()
    problems = []
    for version, model, algo, extra, draft in itertools.product(VERSIONS, MODELS, ALGORITHMS, EXTRAS, DRAFTS):
        command = f"python -m sglang.launch_server --model-path {model} --speculative-algorithm {algo} {draft} {extra}"
        report = validate_command(command, version, None)
        seen.update(d.code for d in report.diagnostics)
        errors = _errors(report)
        if not errors:
            continue
        for arch in ARCHITECTURES:
            with_config = validate_command(command, version, {"architectures": [arch]})
            for missing in errors - _errors(with_config):
                problems.append((version, command, arch, missing))
    assert not problems, problems[:5]
    assert REACHED <= seen, REACHED - seen


def test_guessed_architecture_error_becomes_a_warning_that_says_how_to_decide():
    command = ("python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --speculative-algorithm EAGLE "
               "--attention-backend flashinfer --enable-deterministic-inference")
    guessed = validate_command(command, "0.5.5", None)
    diag = guessed.find("deterministic-backend")
    assert diag.severity == "warning"
    assert "guessed from the model name" in diag.message and "config.json" in diag.message
    real = validate_command(command, "0.5.5", {"architectures": ["DeepseekV3ForCausalLM"]})
    assert real.find("deterministic-backend").severity == "error"  # given the fact, SGLang's refusal is certain
    unknown = validate_command(command.replace("deepseek-ai/DeepSeek-V3", "/models/unreadable"), "0.5.5", None)
    assert unknown.find("deterministic-backend") is None
    assert unknown.find("deterministic-backend-needs-arch").severity == "info"


def _validate_json(capsys, model_path) -> tuple[int, dict]:
    import json

    code = main(["validate", "--sglang-version", "0.5.23", "--json", "--", "python", "-m", "sglang.launch_server",
                 "--model-path", str(model_path), "--speculative-algorithm", "EAGLE"])
    return code, json.loads(capsys.readouterr().out)


def test_mtp_family_without_readable_config_is_not_told_it_needs_a_draft(tmp_path, capsys):
    """The issue's example: a family that ships its own MTP layers, validated where its config.json is unreadable."""
    code, out = _validate_json(capsys, tmp_path / "GLM-4.5-Air")  # no such folder: config.json cannot be read
    assert code == 0
    assert not [d for d in out["diagnostics"] if d["severity"] == "error"]
    diag = next(d for d in out["diagnostics"] if d["code"] == "mtp-draft-from-target")
    assert diag["severity"] == "info" and "guessed from the model name" in diag["message"]
    code, out = _validate_json(capsys, tmp_path / "my-finetune")  # nothing to guess from either
    assert code == 0
    assert not [d for d in out["diagnostics"] if d["severity"] == "error"]
    diag = next(d for d in out["diagnostics"] if d["code"] == "draft-path-maybe-missing")
    assert diag["severity"] == "warning" and "config.json" in diag["message"]


def test_every_known_issue_thread_command_without_its_config_adds_no_error_and_says_what_is_missing():
    """The known-issue table's own thread commands (tests/test_known_issues_table.py), validated with config.json
    unreadable: an error must still be an error under every real architecture, and an entry limited to some
    architectures is reported at info level saying the architecture is not known here."""
    from test_known_issues_table import CASES

    from specdash.sglang.known_issues import KNOWN_ISSUES

    limited = {e.id for e in KNOWN_ISSUES if e.command is not None and e.command.architectures}
    problems, checked = [], 0
    for entry_id, case in CASES.items():
        if case.kind != "command":
            continue
        report = validate_command(case.text, case.version, None)
        for arch in ARCHITECTURES:
            with_config = validate_command(case.text, case.version, {"architectures": [arch]})
            problems += [(entry_id, arch, missing) for missing in _errors(report) - _errors(with_config)]
        diag = report.find(f"known-issue:{entry_id}")
        if entry_id in limited and diag is not None:
            checked += 1
            assert diag.severity == "info", entry_id
            assert "architecture" in diag.message, entry_id
    assert not problems, problems[:5]
    assert checked >= 3  # the DeepSeek-V4, Qwen3-VL MoE and MLA-target entries at least
