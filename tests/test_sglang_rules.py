"""The rule engine per version profile: the two seed stories, the all-or-none depth rule, silent rewrites."""

from __future__ import annotations

import pytest

from specdash.sglang.validate import validate_command

BASE = "python -m sglang.launch_server --model-path /m/target --speculative-draft-model-path /m/draft "
LLAMA = {"architectures": ["LlamaForCausalLM"]}


def run(flags: str, version: str | None = None, config: dict | None = LLAMA, env: str = ""):
    return validate_command(env + BASE + flags, version, config)


def test_seed_story_topk1_and_16_draft_tokens_without_steps_is_an_error():
    report = run("--speculative-algorithm EAGLE --speculative-eagle-topk 1 --speculative-num-draft-tokens 16")
    diag = report.find("steps-missing")
    assert diag.severity == "error" and "--speculative-num-steps" in diag.flags
    assert diag.exception == "AssertionError" and "--speculative-num-steps" in diag.message
    assert report.has_errors
    fixed = diag.fix.apply(report.command.text)
    assert "--speculative-num-steps 15" in fixed
    assert not validate_command(fixed, None, LLAMA).has_errors


def test_seed_story_steps_1_means_16_becomes_2_and_the_fix_is_15_steps():
    report = run("--speculative-algorithm EAGLE --speculative-eagle-topk 1 --speculative-num-draft-tokens 16 "
                 "--speculative-num-steps 1")
    diag = report.find("draft-tokens-adjusted")
    assert diag.severity == "override" and (diag.from_value, diag.to_value) == (16, 2)
    assert report.typed["speculative_num_draft_tokens"] == 16
    assert report.effective["speculative_num_draft_tokens"] == 2
    assert diag.fix.description.startswith("set --speculative-num-steps 15")
    fixed = diag.fix.apply(report.command.text)
    assert "--speculative-num-steps 15" in fixed and "--speculative-num-steps 1 " not in fixed + " "
    again = validate_command(fixed, None, LLAMA)
    assert again.find("draft-tokens-adjusted") is None
    assert again.effective["speculative_num_draft_tokens"] == 16
    assert not report.has_errors


@pytest.mark.parametrize("version", ["0.4.1", "0.4.3"])
def test_early_releases_have_fixed_defaults_and_no_adjustment(version):
    report = run("--speculative-algorithm EAGLE", version)
    expected = {"0.4.1": (5, 8, 64), "0.4.3": (5, 4, 8)}[version]
    e = report.effective
    assert (e["speculative_num_steps"], e["speculative_eagle_topk"], e["speculative_num_draft_tokens"]) == expected
    report = run("--speculative-algorithm EAGLE --speculative-eagle-topk 1 --speculative-num-draft-tokens 16 "
                 "--speculative-num-steps 1", version)
    assert report.find("draft-tokens-adjusted") is None
    assert report.effective["speculative_num_draft_tokens"] == 16


def test_0_4_1_eagle_turns_off_radix_cache_and_chunked_prefill_and_rejects_eagle3():
    report = run("--speculative-algorithm EAGLE --chunked-prefill-size 4096", "0.4.1")
    assert report.effective["disable_radix_cache"] is True
    diag = report.find("eagle-disables-chunked-prefill")
    assert diag.severity == "override" and (diag.from_value, diag.to_value) == (4096, -1)
    bad = run("--speculative-algorithm EAGLE3", "0.4.1").find("bad-value")
    assert bad.severity == "error" and "invalid choice: 'EAGLE3'" in bad.message


def test_0_4_5_page_size_forces_topk_1_without_adjustment():
    report = run("--speculative-algorithm EAGLE --page-size 16 --speculative-num-steps 5 --speculative-eagle-topk 4 "
                 "--speculative-num-draft-tokens 8", "0.4.5")
    assert report.find("page-size-forces-topk-1").severity == "override"
    assert report.effective["speculative_eagle_topk"] == 1
    assert report.effective["speculative_num_draft_tokens"] == 8  # no topk==1 adjustment before 0.4.7
    after = run("--speculative-algorithm EAGLE --page-size 16 --speculative-num-steps 5 --speculative-eagle-topk 4 "
                "--speculative-num-draft-tokens 8", "0.4.7")
    assert after.effective["speculative_num_draft_tokens"] == 6


def test_auto_choice_depends_on_version_and_architecture():
    qwen = {"architectures": ["Qwen2ForCausalLM"]}
    assert run("--speculative-algorithm EAGLE", "0.5.5", qwen).effective["speculative_num_steps"] == 5
    assert run("--speculative-algorithm EAGLE", "0.5.8", qwen).effective["speculative_num_steps"] == 3
    ds = {"architectures": ["DeepseekV3ForCausalLM"]}
    assert run("--speculative-algorithm NEXTN", "0.4.5", ds).effective["speculative_eagle_topk"] == 4
    assert run("--speculative-algorithm NEXTN", "0.4.7", ds).effective["speculative_eagle_topk"] == 1
    unknown = validate_command("--speculative-algorithm EAGLE --speculative-draft-model-path d --model-path /x/abc",
                               "0.5.9")
    info = unknown.find("auto-depth-unknown-arch")
    assert info is not None and "LlamaForCausalLM" in info.message
    assert unknown.effective["speculative_num_steps"] is None


def test_mixed_chunk_and_overlap_by_version():
    flags = "--speculative-algorithm EAGLE --enable-mixed-chunk --speculative-num-steps 3 --speculative-eagle-topk 1 " \
            "--speculative-num-draft-tokens 4"
    assert run(flags, "0.4.5").effective["enable_mixed_chunk"] is True
    old = run(flags, "0.5.9")
    assert old.find("mixed-chunk-disabled").severity == "override"
    assert old.effective["disable_overlap_schedule"] is True
    current = run(flags, "0.5.23")
    assert current.effective["enable_mixed_chunk"] is True  # EAGLE supports mixed chunk from 0.5.20
    assert current.effective["disable_overlap_schedule"] is False
    standalone = run(flags.replace("EAGLE", "STANDALONE"), "0.5.23")
    assert standalone.effective["enable_mixed_chunk"] is False
    v2 = run(flags, "0.5.9", env="SGLANG_ENABLE_SPEC_V2=1 ")
    assert v2.effective["disable_overlap_schedule"] is False


def test_0_5_11_topk_gt_1_falls_back_to_spec_v1():
    report = run("--speculative-algorithm EAGLE --speculative-num-steps 5 --speculative-eagle-topk 4 "
                 "--speculative-num-draft-tokens 8", "0.5.12")
    assert report.find("spec-v1-topk") is not None
    assert report.effective["disable_overlap_schedule"] is True
    assert not report.has_errors


def test_page_size_topk_backend_rule():
    flags = "--speculative-algorithm EAGLE --speculative-num-steps 5 --speculative-eagle-topk 4 " \
            "--speculative-num-draft-tokens 8 --page-size 16 --attention-backend "
    assert run(flags + "triton", "0.5.9").find("page-size-topk-backend").exception == "ValueError"
    assert run(flags + "fa3", "0.5.9").find("page-size-topk-backend") is None
    assert run(flags + "triton", "0.5.23").find("page-size-topk-backend") is None
    assert run(flags + "flashmla", "0.5.23").find("page-size-topk-backend") is not None
    assert run(flags.rsplit(" --attention-backend", 1)[0], "0.5.23").find("page-size-topk-auto-backend") is not None


def test_current_algorithm_names():
    assert run("--speculative-algorithm eagle3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
               "--speculative-num-draft-tokens 4", "0.5.23").effective["speculative_algorithm"] == "EAGLE3"
    diag = run("--speculative-algorithm MTP", "0.5.23").find("unknown-algorithm")
    assert diag.exception == "ValueError" and "Unknown speculative algorithm name: MTP" in diag.message
    assert "NEXTN" in diag.fix.description
    assert run("--speculative-algorithm eagle3", "0.5.9").find("bad-value") is not None


def test_ngram_rewrites():
    report = validate_command("python -m sglang.launch_server --model-path m --speculative-algorithm NGRAM", "0.5.23")
    e = report.effective
    assert (e["speculative_eagle_topk"], e["speculative_num_draft_tokens"], e["speculative_num_steps"]) == (10, 12, 1)
    assert e["max_running_requests"] == 48
    cpu = validate_command("python -m sglang.launch_server --model-path m --speculative-algorithm NGRAM --device cpu",
                           "0.5.9")
    assert cpu.find("ngram-device").exception == "ValueError"


def test_visible_devices_against_tp():
    flags = "--speculative-algorithm EAGLE --tp-size 4"
    assert run(flags, env="CUDA_VISIBLE_DEVICES=0,1 ").find("visible-devices-too-few").severity == "error"
    assert run(flags, env="CUDA_VISIBLE_DEVICES=0,1,2,3,4,5 ").find("visible-devices-unused").severity == "warning"
    assert run(flags, env="CUDA_VISIBLE_DEVICES=0,1,2,3 ").find("visible-devices-unused") is None


def test_no_command_and_depth_without_algorithm():
    assert validate_command("hello world").find("no-launch-command").severity == "error"
    assert validate_command("").diagnostics == []
    report = validate_command("python -m sglang.launch_server --model-path m --speculative-num-steps 3")
    assert report.find("spec-flags-without-algorithm").severity == "warning"


def test_json_shape():
    report = run("--speculative-algorithm EAGLE --speculative-eagle-topk 1 --speculative-num-draft-tokens 16")
    data = report.to_json()
    assert data["sglang_version"] == "0.5.23"
    assert set(data["diagnostics"][0]) >= {"severity", "code", "flags", "message", "fix"}
    assert {"speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
            "speculative_num_draft_tokens", "max_running_requests"} <= set(data["effective"])


def test_0_4_5_auto_depth_reads_config_from_local_disk():
    text = "python -m sglang.launch_server --model meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE " \
           "--speculative-draft-model-path /d"
    diag = validate_command(text, "0.4.5").find("auto-depth-needs-local-config")
    assert diag.severity == "warning" and "config.json is not found" in diag.message
    assert "--speculative-num-steps 5" in diag.fix.apply(text)
    assert validate_command(text, "0.4.7").find("auto-depth-needs-local-config") is None


def test_config_file_is_mentioned():
    report = validate_command("sglang serve --config serve.yaml --model-path m", "0.5.23")
    assert "serve.yaml" in report.find("config-file").message


def test_model_path_is_required_by_argparse():
    # confirmed with SGLang 0.5.23's own parser: "the following arguments are required: --model-path/--model"
    diag = validate_command("python -m sglang.launch_server --speculative-algorithm EAGLE").find("required-flag-missing")
    assert diag.severity == "error" and "--model-path/--model" in diag.message
    assert validate_command("--model m --port 1").find("required-flag-missing") is None


# --speculative-adaptive (0.5.16+; arg_groups/speculative_hook.py and speculative/adaptive_spec_params.py, 0.5.23)

def test_adaptive_without_depth_flags_starts_at_three_steps_of_a_chain():
    report = run("--speculative-algorithm EAGLE3 --speculative-adaptive")
    assert not report.has_errors
    assert (report.effective["speculative_num_steps"], report.effective["speculative_eagle_topk"],
            report.effective["speculative_num_draft_tokens"]) == (3, 1, 4)
    assert "middle of its candidate steps [0, 1, 3, 5, 7]" in report.find("adaptive-steps").message


def test_adaptive_refuses_a_step_count_outside_its_candidates_and_offers_the_nearest():
    report = run("--speculative-algorithm EAGLE --speculative-adaptive --speculative-num-steps 4")
    diag = report.find("adaptive-steps-not-candidate")
    assert diag.severity == "error" and diag.exception == "ValueError"
    assert "--speculative-num-steps=4 is not in the adaptive config candidate_steps [0, 1, 3, 5, 7]" in diag.message
    fixed = diag.fix.apply(report.command.text)
    assert not validate_command(fixed, None, LLAMA).has_errors


@pytest.mark.parametrize("flags, reason", [
    ("--speculative-algorithm NGRAM", "speculative_algorithm=NGRAM (only EAGLE/EAGLE3 are supported)"),
    ("--speculative-algorithm EAGLE --speculative-eagle-topk 4 --speculative-num-steps 3 "
     "--speculative-num-draft-tokens 8", "speculative_eagle_topk=4 (only topk=1 is supported)"),
    ("--speculative-algorithm EAGLE --tp 2 --attn-dp-size 2", "attention DP is not supported"),
])
def test_adaptive_is_switched_off_where_sglang_switches_it_off(flags, reason):
    report = run(flags + " --speculative-adaptive")
    diag = report.find("adaptive-disabled")
    assert diag is not None and diag.severity == "warning"
    assert f"speculative_adaptive disabled: {reason}" in diag.message
    assert report.effective.get("speculative_adaptive") is False


def test_adaptive_switched_off_by_topk_then_hits_the_bare_assert_without_steps():
    report = run("--speculative-algorithm EAGLE3 --speculative-adaptive --speculative-eagle-topk 4 "
                 "--speculative-num-draft-tokens 8")
    assert report.find("adaptive-disabled") is not None
    assert report.find("steps-missing").exception == "AssertionError"


def test_adaptive_with_its_own_config_file_says_the_depth_is_not_known_here():
    report = run("--speculative-algorithm EAGLE3 --speculative-adaptive --speculative-adaptive-config /cfg/a.json")
    assert not report.has_errors
    assert "/cfg/a.json, which is not read here" in report.find("adaptive-config-unread").message
    assert report.effective["speculative_num_steps"] is None


def test_ngram_breadth_zero_is_sglangs_division_by_zero_not_a_traceback():
    report = run("--speculative-algorithm NGRAM --speculative-ngram-max-bfs-breadth 0")
    diag = report.find("ngram-breadth-zero")
    assert diag.severity == "error" and diag.exception == "ZeroDivisionError"
    assert not validate_command(diag.fix.apply(report.command.text), None, LLAMA).has_errors
    # with num_steps given, SGLang does not divide
    assert run("--speculative-algorithm NGRAM --speculative-ngram-max-bfs-breadth 0 --speculative-num-steps 2"
               ).find("ngram-breadth-zero") is None


def test_a_missing_draft_path_is_an_error_only_when_the_targets_config_was_read():
    text = "python -m sglang.launch_server --model-path /data/mymodel --speculative-algorithm EAGLE"
    unread = validate_command(text, "0.5.23", None)
    assert unread.find("draft-path-missing") is None and not unread.has_errors
    diag = unread.find("draft-path-maybe-missing")
    assert diag.severity == "warning" and "cannot tell" in diag.message and "config.json" in diag.message
    read = validate_command(text, "0.5.23", {"architectures": ["Qwen2ForCausalLM"]})
    assert read.find("draft-path-missing").severity == "error"


def test_a_flag_from_another_release_is_not_renamed_into_an_unrelated_one():
    report = validate_command("python -m sglang.launch_server --model-path m --enable-flashinfer-mla", "0.5.23")
    diag = report.find("flag-not-in-version")
    assert "exists only in other SGLang releases" in diag.message
    assert "linker" not in diag.message and diag.fix.description == "remove --enable-flashinfer-mla"
    typo = validate_command("python -m sglang.launch_server --model-path m --speculative-num-stepz 3", "0.5.23")
    assert typo.find("unknown-flag").fix.description == "replace --speculative-num-stepz with --speculative-num-steps"
    far = validate_command("python -m sglang.launch_server --model-path m --enable-magic-turbo", "0.5.23")
    assert far.find("unknown-flag").fix.description.startswith("remove")


# checks read in the 0.5.23 wheel (arg_groups/speculative_hook.py)

@pytest.mark.parametrize("flags, code, exception", [
    ("--speculative-draft-sink-size 4", "draft-sink-without-window", "ValueError"),
    ("--speculative-algorithm EAGLE3 --speculative-draft-sink-size -1 --speculative-draft-window-size 8",
     "draft-sink-negative", "ValueError"),
    ("--speculative-use-block-verification", "block-verification-algorithm", "ValueError"),
    ("--speculative-algorithm NGRAM --speculative-use-block-verification", "block-verification-algorithm",
     "ValueError"),
    ("--speculative-algorithm STANDALONE --speculative-use-rejection-sampling --speculative-num-steps 3 "
     "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4", "rejection-sampling-algorithm",
     "NotImplementedError"),
    ("--speculative-algorithm EAGLE3 --speculative-use-rejection-sampling --speculative-num-steps 3 "
     "--speculative-eagle-topk 4 --speculative-num-draft-tokens 8", "rejection-sampling-topk", "ValueError"),
    ("--speculative-algorithm EAGLE3 --speculative-use-rejection-sampling --speculative-num-steps 3 "
     "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --speculative-accept-threshold-single 0.5",
     "rejection-sampling-thresholds", "ValueError"),
    ("--speculative-algorithm NGRAM --tp 2 --attn-dp-size 2", "ngram-dp-attention", "ValueError"),
])
def test_refusals_of_0523_are_errors_with_sglangs_exception(flags, code, exception):
    report = run(flags, "0.5.23")
    diag = report.find(code)
    assert diag is not None and diag.severity == "error" and diag.exception == exception
    if diag.fix is not None:
        assert validate_command(diag.fix.apply(report.command.text), "0.5.23", LLAMA).find(code) is None


def test_block_verification_switches_rejection_sampling_on_for_eagle3():
    report = run("--speculative-algorithm EAGLE3 --speculative-use-block-verification --speculative-num-steps 3 "
                 "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4", "0.5.23")
    assert not report.has_errors
    assert report.effective.get("speculative_use_rejection_sampling") is True or \
        report.find("block-verification-rejection-sampling").to_value is True


def test_deprecated_dp_attention_flag_at_dp_1_is_no_refusal_for_ngram_in_0523():
    # handle_deprecated_dp_attention turns --enable-dp-attention with dp 1 into attention DP of width 1: off
    assert run("--speculative-algorithm NGRAM --enable-dp-attention", "0.5.23").find("ngram-dp-attention") is None
    assert run("--speculative-algorithm NGRAM --enable-dp-attention --dp-size 2 --tp 2",
               "0.5.23").find("ngram-dp-attention") is not None


# attention backends, parallel sizes and the launch's check_server_args (read in the 0.5.23 and 0.5.5 wheels)

def test_flashmla_forces_page_size_64_and_then_a_tree_draft_is_refused():
    report = run("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 4 "
                 "--speculative-num-draft-tokens 8 --attention-backend flashmla", "0.5.23")
    assert report.find("backend-page-size").to_value == 64
    assert report.find("page-size-topk-backend").exception == "ValueError"


@pytest.mark.parametrize("version", ["0.5.23", "0.5.5"])
def test_tp_must_be_a_multiple_of_the_attention_dp_size(version):
    flags = "--tp-size 2 --attn-dp-size 4" if version == "0.5.23" else "--tp-size 2 --dp-size 4 --enable-dp-attention"
    diag = run(flags, version).find("tp-not-multiple-of-attention-dp")
    assert diag.severity == "error" and diag.exception == "AssertionError" and "bare AssertionError" in diag.message


def test_replicas_with_attention_dp_are_refused_in_0523():
    diag = run("--tp-size 4 --dp-size 2 --attn-dp-size 2", "0.5.23").find("dp-replicas-with-attention-dp")
    assert diag.exception == "ValueError" and "--dp-size 2 with --attn-dp-size 2" in diag.message


def test_deterministic_inference_refuses_other_backends_per_release():
    assert run("--enable-deterministic-inference --attention-backend aiter", "0.5.23").find(
        "deterministic-backend").exception == "ValueError"
    assert run("--enable-deterministic-inference --attention-backend fa4", "0.5.23").find(
        "deterministic-backend") is None
    assert run("--enable-deterministic-inference --attention-backend torch_native", "0.5.5").find(
        "deterministic-backend").exception == "ValueError"


def test_a_backend_the_gpu_decides_is_marked_hardware_dependent_not_predicted():
    report = run("--speculative-algorithm EAGLE --speculative-num-steps 3 --speculative-eagle-topk 1 "
                 "--speculative-num-draft-tokens 4 --attention-backend trtllm_mha", "0.5.23")
    diag = report.find("trtllm-mha-hopper")
    assert diag.hardware_dependent and diag.to_json()["hardware_dependent"] is True and not report.has_errors


def test_page_size_zero_fails_in_the_launch_check_not_in_argument_resolution():
    diag = run("--page-size 0", "0.5.23").find("page-size-zero")
    assert diag.stage == "check_server_args" and diag.exception == "ZeroDivisionError"
    assert run("--page-size 0 --chunked-prefill-size -1", "0.5.23").find("page-size-zero") is None


def test_pipeline_parallel_speculation_needs_eagle_on_prefill_nodes_in_0523():
    eagle3 = run("--speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
                 "--speculative-num-draft-tokens 4 --pp-size 2", "0.5.23")
    assert "only supports EAGLE" in eagle3.find("pp-with-spec").message
    assert eagle3.effective["disable_overlap_schedule"] is True
    nextn = run("--speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 "
                "--speculative-num-draft-tokens 4 --pp-size 2 --disaggregation-mode prefill", "0.5.23")
    assert nextn.find("pp-with-spec") is None


def test_context_length_reads_human_readable_ints_case_sensitively():
    assert run("--context-length 2k", "0.5.23").effective["context_length"] == 2000
    assert run("--context-length 1Ki", "0.5.23").effective["context_length"] == 1024
    diag = run("--context-length 8K", "0.5.23").find("bad-value")
    assert diag.severity == "error" and "Suffixes are case-sensitive" in diag.message


def test_a_retired_valued_flag_takes_its_value():
    report = run("--monokernel-backend amd", "0.5.23")
    assert not report.has_errors and report.find("unknown-flag") is None


def test_bogus_spec_v2_value_only_warns_in_055():
    report = validate_command("SGLANG_ENABLE_SPEC_V2=bogus " + BASE + "--speculative-algorithm EAGLE "
                              "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
                              "0.5.5", LLAMA)
    diag = report.find("bad-env-value")
    assert diag.severity == "warning" and not report.has_errors


@pytest.mark.parametrize("flags, code", [
    ("--speculative-ngram-external-corpus-path /c.jsonl", "ngram-corpus-budget"),
    ("--speculative-ngram-external-corpus-path /c.jsonl --speculative-ngram-external-sam-budget 4 "
     "--speculative-ngram-external-corpus-max-tokens 0", "ngram-corpus-max-tokens"),
    ("--speculative-ngram-external-corpus-path /c.jsonl --speculative-ngram-external-sam-budget 12",
     "ngram-corpus-budget-above-draft"),
])
def test_ngram_external_corpus_budget_rules_of_0523(flags, code):
    report = run("--speculative-algorithm NGRAM " + flags, "0.5.23")
    diag = report.find(code)
    assert diag is not None and diag.exception == "ValueError"
    # a budget without a corpus is not checked by this release
    assert not run("--speculative-algorithm NGRAM --speculative-ngram-external-sam-budget 50", "0.5.23").has_errors
    assert not run("--speculative-algorithm NGRAM --speculative-ngram-external-corpus-path /c.jsonl "
                   "--speculative-ngram-external-sam-budget 4", "0.5.23").has_errors


def test_a_static_memory_fraction_of_095_with_a_draft_is_a_warning():
    report = run("--speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
                 "--speculative-num-draft-tokens 4 --mem-fraction-static 0.95")
    diag = report.find("mem-fraction-high-with-draft")
    assert diag.severity == "warning" and "outside the KV-cache pool" in diag.message
    assert run("--speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
               "--speculative-num-draft-tokens 4 --mem-fraction-static 0.85").find("mem-fraction-high-with-draft") is None


def test_a_wide_tree_on_a_moe_target_suggests_benchmarking_a_chain():
    moe = {"architectures": ["Qwen3MoeForCausalLM"]}
    report = run("--speculative-algorithm EAGLE3 --speculative-num-steps 5 --speculative-eagle-topk 8 "
                 "--speculative-num-draft-tokens 32", config=moe)
    diag = report.find("wide-tree-on-moe")
    assert diag.severity == "info" and "topk 1, 5 steps, 6 draft tokens" in diag.message
    assert validate_command(diag.fix.apply(report.command.text), None, moe).find("wide-tree-on-moe") is None
    assert run("--speculative-algorithm EAGLE3 --speculative-num-steps 5 --speculative-eagle-topk 8 "
               "--speculative-num-draft-tokens 32").find("wide-tree-on-moe") is None  # dense Llama


def test_with_spec_v2_the_depth_fix_is_a_chain():
    text = ("SGLANG_ENABLE_SPEC_V2=1 " + BASE + "--speculative-algorithm EAGLE --speculative-eagle-topk 4 "
            "--speculative-num-draft-tokens 8")
    report = validate_command(text, "0.5.5", LLAMA)
    diag = report.find("steps-missing")
    assert "topk 1" in diag.fix.description
    fixed = validate_command(diag.fix.apply(text), "0.5.5", LLAMA)
    assert not fixed.has_errors and fixed.effective["speculative_eagle_topk"] == 1
    assert fixed.effective["speculative_num_draft_tokens"] == 8


def test_flashinfer_mla_refuses_a_tree_draft_at_start_up_in_044():
    deepseek = {"architectures": ["DeepseekV3ForCausalLM"]}
    text = ("python -m sglang.launch_server --model-path /m/dsv3 --speculative-algorithm EAGLE "
            "--speculative-draft-model-path /m/nextn --speculative-num-steps 3 --speculative-eagle-topk 4 "
            "--speculative-num-draft-tokens 8 --enable-flashinfer-mla")
    diag = validate_command(text, "0.4.4", deepseek).find("flashinfer-mla-topk")
    assert diag.severity == "error" and diag.stage == "startup" and "only supports topk=1" in diag.message
    assert validate_command(text, "0.4.4", None).find("flashinfer-mla-topk") is None  # target unknown: info only
    assert validate_command(text, "0.4.4", None).find("flashinfer-mla-topk-unknown") is not None


def test_a_lora_moe_runner_for_the_draft_is_refused_by_the_launch_check():
    report = run("--speculative-algorithm EAGLE3 --speculative-num-steps 3 --speculative-eagle-topk 1 "
                 "--speculative-num-draft-tokens 4 --speculative-moe-runner-backend lora_triton", "0.5.23")
    diag = report.find("lora-moe-runner-for-draft")
    assert diag.stage == "check_server_args" and diag.exception == "ValueError"
