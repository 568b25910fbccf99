"""Every real case whose input is a launch command (tests/data/cases, reported launches with what a user should see):
the verdict and the effective values a user would see, for the SGLang version of the case's era."""

from __future__ import annotations

from pathlib import Path

from specdash.sglang.validate import validate_command

CASES = Path(__file__).parent / "data" / "cases"


def case_input(name: str) -> str:
    return (CASES / f"{name}.txt").read_text().split("--- expected ---")[0]


#: Cases whose input is a log excerpt, not a launch command (see test_logs_scan_cases.py).
LOG_ONLY = {"prefill-dominated-samples", "draft-capture-dominates-start-up", "draft-cuda-graph-capture-failure"}


def triple(report):
    e = report.effective
    return (e["speculative_num_steps"], e["speculative_eagle_topk"], e["speculative_num_draft_tokens"])


def test_every_launch_case_is_covered():
    covered = {"cuda-graph-max-bs-too-small", "deepseek-r1-decode-line", "eagle3-without-draft-model",
               "gpt-oss-automatic-depth", "large-tree-cuda-graph-memory", "llama2-no-cuda-graph",
               "multimodal-eagle3-draft-tokens-reset", "nextn-changes-backend-and-page-size", "pre-merge-eagle-flags",
               "qwen2-72b-eagle-chain", "qwen3-eagle3-accept-rate", "spec-v2-gpt-oss-topk-4",
               "spec-v2-llama-eagle3-topk-4", "spec-v2-nextn-steps-without-topk", "standalone-two-tokenizers",
               "vllm-flags-argparse-error", "vllm-serve-command", "vllm-v0-underscore-flags"}
    launches = {p.stem for p in CASES.glob("*.txt") if not p.read_text().lstrip().startswith("[")}
    assert covered <= launches and launches - covered <= LOG_ONLY


def test_vllm_flags_in_error_line_are_mapped():
    report = validate_command(case_input("vllm-flags-argparse-error"))
    foreign = {d.flags[0]: d for d in report.diagnostics if d.code == "foreign-flag"}
    assert set(foreign) == {"--speculative-model", "--num-speculative-tokens", "--ngram-prompt-lookup-max",
                            "--use-v2-block-manager"}
    assert all(d.severity == "error" for d in foreign.values())
    assert "--speculative-algorithm NGRAM" in foreign["--speculative-model"].fix.description
    # NGRAM: the vLLM token count maps to the verify width
    assert "--speculative-num-draft-tokens 3" in foreign["--num-speculative-tokens"].fix.description
    assert foreign["--use-v2-block-manager"].fix.description.startswith("remove")
    # --tensor-parallel-size is accepted by current SGLang as an alias of --tp-size
    assert report.typed["tp_size"] == 1
    assert report.find("from-error-line") is not None


def test_on_a_release_without_speculative_decoding():
    report = validate_command(case_input("vllm-flags-argparse-error"), "0.2.5")
    diag = report.find("no-speculative-support")
    assert diag is not None and "speculative support" in diag.message


def test_pre_merge_branch_names_renamed_then_consistent_tree():
    report = validate_command(case_input("pre-merge-eagle-flags"), "0.4.1")
    renames = {d.flags[0]: d.fix.description for d in report.diagnostics if d.code == "foreign-flag"}
    assert renames == {
        "--draft-model-path": "replace --draft-model-path with --speculative-draft-model-path",
        "--num-speculative-steps": "replace --num-speculative-steps with --speculative-num-steps",
        "--eagle-topk": "replace --eagle-topk with --speculative-eagle-topk",
        "--num-draft-tokens": "replace --num-draft-tokens with --speculative-num-draft-tokens",
    }
    repeated = report.find("repeated-flag")
    assert repeated.severity == "warning" and "--mem-frac 0.8" in repeated.message and "no effect" in repeated.message
    abbreviations = {d.flags[0] for d in report.diagnostics if d.code in ("abbreviation", "alias")}
    assert {"--model-path", "--tp-size", "--dp-size"} <= abbreviations
    # after renaming: 5 / 8 / 64 is kept as typed (no override)
    assert triple(report) == (5, 8, 64)
    assert not report.by_severity("override")


def test_steps_alone_is_a_type_error_with_two_fixes():
    report = validate_command(case_input("spec-v2-nextn-steps-without-topk"), "0.5.9")
    diag = report.find("topk-missing")
    assert diag.severity == "error" and diag.exception == "TypeError"
    assert "'>' not supported between instances of 'NoneType' and 'int'" in diag.message
    assert "--speculative-eagle-topk 1 --speculative-num-draft-tokens 2" in diag.fix.description
    fixed = diag.fix.apply(case_input("spec-v2-nextn-steps-without-topk"))
    assert "--speculative-eagle-topk 1" in fixed and "--speculative-num-draft-tokens 2" in fixed
    assert validate_command(fixed, "0.5.9").find("topk-missing") is None
    assert report.find("placeholder-path").severity == "error"


def test_topk1_resets_draft_tokens_2_to_3():
    report = validate_command(case_input("qwen2-72b-eagle-chain"), "0.4.10")
    diag = report.find("draft-tokens-adjusted")
    assert diag.severity == "override" and (diag.from_value, diag.to_value) == (2, 3)
    assert triple(report) == (2, 1, 3)
    assert report.typed["speculative_num_draft_tokens"] == 2
    assert any(d.code == "abbreviation" and "--mem-fraction" in d.message for d in report.diagnostics)
    assert not report.has_errors


def test_24_draft_tokens_become_5_and_small_cuda_graph_bs():
    report = validate_command(case_input("multimodal-eagle3-draft-tokens-reset"), "0.5.2")
    diag = report.find("draft-tokens-adjusted")
    assert (diag.from_value, diag.to_value) == (24, 5)
    assert "If a 24-token tree was intended, raise --speculative-eagle-topk above 1" in diag.message
    assert triple(report) == (4, 1, 5)
    assert report.find("cuda-graph-max-bs-small") is not None
    assert not report.has_errors


def test_in_current_sglang_cuda_graph_max_bs_is_ambiguous():
    # 0.5.23 has --cuda-graph-max-bs-decode and --cuda-graph-max-bs-prefill, and no --cuda-graph-max-bs: argparse
    # refuses the old spelling (confirmed with the real SGLang 0.5.23 parser).
    report = validate_command(case_input("multimodal-eagle3-draft-tokens-reset"), "0.5.23")
    diag = report.find("ambiguous-flag")
    assert diag.severity == "error" and "--cuda-graph-max-bs-decode" in diag.fix.description


def test_no_depth_flags_gpt_oss_gets_3_1_4_and_48_requests():
    report = validate_command(case_input("gpt-oss-automatic-depth"), "0.5.1")
    assert not report.has_errors
    assert triple(report) == (3, 1, 4)
    assert report.find("auto-depth") is not None and "3/1/4" in report.find("auto-depth").message
    assert report.effective["max_running_requests"] == 48
    # with the real config.json the same answer, labelled as such
    report = validate_command(case_input("gpt-oss-automatic-depth"), "0.5.1", {"architectures": ["GptOssForCausalLM"]})
    assert report.architecture_source == "config.json" and triple(report) == (3, 1, 4)


def test_followups_one_depth_flag_and_trtllm_topk():
    base = case_input("gpt-oss-automatic-depth").strip()
    report = validate_command(base + " --speculative-eagle-topk 4", "0.5.9")
    assert report.find("steps-missing").exception == "AssertionError"
    report = validate_command(base + " --speculative-num-steps 3 --speculative-eagle-topk 4 "
                              "--speculative-num-draft-tokens 8 --attention-backend trtllm_mha", "0.5.9")
    diag = report.find("trtllm-mha-topk")
    assert diag.severity == "error" and "trtllm_mha backend only supports topk = 1" in diag.message


def test_picks_the_speculative_run_and_warns_about_auto_backend():
    report = validate_command(case_input("nextn-changes-backend-and-page-size"), "0.5.23")
    assert report.typed["speculative_algorithm"] == "NEXTN"
    assert report.effective["speculative_algorithm"] == "EAGLE"
    assert report.find("more-commands") is not None
    assert report.find("auto-backend-with-spec") is not None
    assert report.find("nextn-is-eagle") is not None


def test_spec_v2_with_topk4_is_refused():
    report = validate_command(case_input("spec-v2-gpt-oss-topk-4"), "0.5.9")
    diag = report.find("spec-v2-topk")
    assert diag.severity == "error" and diag.exception == "ValueError"
    assert "Spec v2 currently only supports topk = 1" in diag.message
    assert report.typed["tp_size"] == 8 and report.typed["port"] == 7080  # --flag=value forms parsed
    fixed = diag.fix.apply(case_input("spec-v2-gpt-oss-topk-4"))
    assert "SGLANG_ENABLE_SPEC_V2" not in fixed
    assert validate_command(fixed, "0.5.9").find("spec-v2-topk") is None


def test_spec_v2_topk4_fails_at_run_time_in_055_and_cuda_graph_warning():
    report = validate_command(case_input("spec-v2-llama-eagle3-topk-4"), "0.5.5")
    diag = report.find("spec-v2-topk")
    assert diag.severity == "error" and diag.stage == "runtime"
    assert report.find("cuda-graph-off").severity == "warning"


def test_eagle3_without_draft_for_qwen2():
    report = validate_command(case_input("eagle3-without-draft-model"), "0.5.23", {"architectures": ["Qwen2ForCausalLM"]})
    diag = report.find("draft-path-missing")
    assert diag.severity == "error" and "Qwen2ForCausalLM" in diag.message
    # DeepSeek V3 carries its own MTP head: NEXTN without a draft path is fine there
    report = validate_command("python -m sglang.launch_server --model-path /m/DeepSeek-V3 --speculative-algorithm NEXTN",
                              "0.5.23", {"architectures": ["DeepseekV3ForCausalLM"]})
    assert not report.has_errors
    assert report.effective["speculative_draft_model_path"] == "/m/DeepSeek-V3"


def test_standalone_tokenizer_mismatch_and_auto_depth():
    report = validate_command(case_input("standalone-two-tokenizers"), "0.5.9", {"architectures": ["Gemma2ForCausalLM"], "vocab_size": 256000},
                              draft_config={"architectures": ["GPTBigCodeForCausalLM"], "vocab_size": 49152})
    diag = report.find("standalone-vocab-mismatch")
    assert diag.severity == "error" and "256000" in diag.message and "49152" in diag.message
    assert triple(report) == (3, 1, 4)


def test_no_speculation_cuda_graph_off():
    report = validate_command(case_input("deepseek-r1-decode-line"), "0.4.3")
    assert not report.has_errors
    assert report.find("cuda-graph-off").severity == "warning"
    assert report.effective["speculative_algorithm"] is None
    # the same command with EAGLE shows the lowered request cap
    spec = case_input("deepseek-r1-decode-line").splitlines()[0] + " --speculative-algorithm EAGLE --speculative-draft-model-path /d"
    assert validate_command(spec, "0.4.3").effective["max_running_requests"] == 32
    assert validate_command(spec, "0.5.9").effective["max_running_requests"] == 48


def test_consistent_chain_no_override():
    report = validate_command(case_input("qwen3-eagle3-accept-rate"), "0.5.3.post3")
    assert not report.has_errors and not report.by_severity("override")
    assert triple(report) == (3, 1, 4)


def test_vllm_speculative_config_translated():
    report = validate_command(case_input("vllm-serve-command"))
    diag = report.find("not-sglang")
    assert diag.severity == "error"
    translated = diag.fix.apply(case_input("vllm-serve-command"))
    assert translated.startswith("python -m sglang.launch_server --model-path /models/Qwen3-8B-W8A8")
    assert "--speculative-algorithm STANDALONE" in translated
    assert "--speculative-draft-model-path /models/qwen3_8b_eagle3" in translated
    assert "--speculative-num-steps 5 " in translated and "--speculative-num-draft-tokens 6" in translated
    assert "--speculative-config" not in translated and "--gpu-memory-utilization" not in translated
    assert triple(report) == (5, 1, 6)


def test_small_cuda_graph_bs_with_wide_tree():
    report = validate_command(case_input("cuda-graph-max-bs-too-small"), "0.5.2")
    assert report.find("cuda-graph-max-bs-small").severity == "warning"
    assert triple(report) == (6, 10, 32)
    assert not report.has_errors


def test_abbreviations_accepted_then_ambiguous():
    early = validate_command(case_input("large-tree-cuda-graph-memory"), "0.4.1")
    assert not early.has_errors
    assert early.typed["speculative_draft_model_path"] == "yuhuili/EAGLE-Qwen2-7B-Instruct-sglang"
    assert early.find("large-tree-cuda-graph-memory").severity == "warning"
    assert {d.flags[0] for d in early.diagnostics if d.code == "abbreviation"} >= {
        "--speculative-algorithm", "--speculative-draft-model-path", "--mem-fraction-static"}
    late = validate_command(case_input("large-tree-cuda-graph-memory"), "0.5.9")
    diag = late.find("ambiguous-flag")
    assert diag.severity == "error" and diag.flags == ("--speculative-draft",)
    assert diag.fix.description == "replace --speculative-draft with --speculative-draft-model-path"
    assert late.effective["speculative_draft_model_path"] == "yuhuili/EAGLE-Qwen2-7B-Instruct-sglang"


def test_vllm_command_mapped_to_standalone_chain():
    report = validate_command(case_input("vllm-v0-underscore-flags"))
    translated = report.find("not-sglang").fix.apply(case_input("vllm-v0-underscore-flags"))
    assert "--speculative-algorithm STANDALONE" in translated
    assert "--speculative-draft-model-path Qwen2.5-7B-Instruct" in translated
    assert "--tp-size 4" in translated and "--mem-fraction-static 0.9" in translated
    assert "--use-v2-block-manager" not in translated and "OutOfMemoryError" not in translated
    assert triple(report) == (5, 1, 6)
    assert report.effective["tp_size"] == 4


def test_short_forms_normalised_in_043():
    report = validate_command(case_input("llama2-no-cuda-graph"), "0.4.3")
    assert not report.has_errors
    typed = {d.flags[0] for d in report.diagnostics if d.code == "abbreviation"}
    assert {"--disable-radix-cache", "--speculative-algorithm", "--speculative-draft-model-path",
            "--mem-fraction-static"} <= typed
    assert report.find("cuda-graph-off") is not None
    assert report.effective["max_running_requests"] == 32
