"""Every pairing check with a failing and a passing pair."""

from __future__ import annotations

import copy

import pytest
from support.pairing import eagle3_tensors, header_of, load

from specdash.sglang.pairing import analyze_pairing


def codes(report, severity=None):
    return {d.code for d in report.diagnostics if severity is None or d.severity == severity}


def llama_pair():
    return load("llama31_8b_target"), load("llama31_8b_draft_trainer_ids")


# -- the field report: [3, 31, 59] instead of what training used --------------------------------------------------


def test_field_report_case_is_explained_before_launch():
    """Kimi-K2.5 + a TorchSpec --vllm export (ids [2,30,58] nested and top level, layers.0.* tensors) on an SGLang
    without the first-id rule: SGLang feeds [3, 31, 59]; the draft was trained on [2, 30, 58]."""
    header = header_of(eagle3_tensors(7168, 7168, vllm_names=True))
    report = analyze_pairing(
        load("kimi_k25_target"), load("kimi_k25_draft_vllm_export"), sglang_version="0.5.12",
        draft_safetensors_header=header,
    )
    (diag,) = report.by_code("id-convention")
    assert diag.severity == "error"
    assert report.captured_boundaries == [3, 31, 59]
    assert "[3, 31, 59]" in diag.message and "[2, 30, 58]" in diag.message  # which layers
    assert "adds 1 to every id" in diag.message and "layers.0" in diag.message  # why
    assert '"eagle_aux_hidden_state_layer_ids": [1, 29, 57]' in diag.fix.description  # the ids to write
    assert report.suggested_ids == [1, 29, 57]
    assert report.has_errors
    # the suggested ids give the trained boundaries on this version and on the newest one
    for version in ("0.5.12", "0.5.23"):
        fixed = copy.deepcopy(load("kimi_k25_draft_vllm_export"))
        fixed["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = report.suggested_ids
        del fixed["eagle_aux_hidden_state_layer_ids"]
        after = analyze_pairing(load("kimi_k25_target"), fixed, sglang_version=version, draft_safetensors_header=header)
        assert after.captured_boundaries == [2, 30, 58]
        assert "id-convention" not in codes(after, "error")


def test_field_report_case_without_vllm_tensor_names_is_a_warning():
    report = analyze_pairing(load("kimi_k25_target"), load("kimi_k25_draft_vllm_export"), sglang_version="0.5.12")
    (diag,) = report.by_code("id-convention")
    assert diag.severity == "warning"
    assert report.suggested_ids == [1, 29, 57]


def test_field_report_pair_is_fine_on_an_sglang_with_the_first_id_rule():
    header = header_of(eagle3_tensors(7168, 7168, vllm_names=True))
    report = analyze_pairing(
        load("kimi_k25_target"), load("kimi_k25_draft_vllm_export"), sglang_version="0.5.23",
        draft_safetensors_header=header,
    )
    assert report.captured_boundaries == [2, 30, 58]
    assert not report.has_errors
    assert report.by_code("id-convention")[0].severity == "info"


def test_trainer_ids_on_a_plus_one_target_are_fine():
    report = analyze_pairing(*llama_pair(), sglang_version="0.5.23")
    assert not report.has_errors
    assert report.by_code("id-convention")[0].severity == "info"


def test_vllm_style_ids_on_llama_warn_with_both_readings():
    report = analyze_pairing(load("llama31_8b_target"), load("llama31_8b_draft_vllm_ids"), sglang_version="0.5.23")
    (diag,) = report.by_code("id-convention")
    assert diag.severity == "warning"
    assert report.captured_boundaries == [3, 17, 30]
    assert "[2, 16, 29]" in diag.message
    assert report.suggested_ids == [1, 15, 28]


def test_unknown_convention_warns_and_offers_the_other_reading():
    draft = load("llama31_8b_draft_trainer_ids")
    draft["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = [3, 17, 27]
    report = analyze_pairing(load("llama31_8b_target"), draft, sglang_version="0.5.23")
    (diag,) = report.by_code("id-convention")
    assert diag.severity == "warning" and "do not record their convention" in diag.message
    assert "[2, 16, 26]" in diag.fix.description  # ids that would capture boundaries [3, 17, 27]


# -- algorithm / architecture -------------------------------------------------------------------------------------


@pytest.mark.parametrize("algorithm", ["EAGLE", "NEXTN", "eagle"])
def test_eagle3_draft_served_as_eagle_is_an_error(algorithm):
    report = analyze_pairing(*llama_pair(), algorithm=algorithm, sglang_version="0.5.23")
    (diag,) = report.by_code("eagle3-draft-as-eagle")
    assert diag.severity == "error" and "exactly 1.0" in diag.message
    assert "EAGLE3" in diag.fix.description
    assert report.captured_boundaries == []


def test_eagle3_head_detected_from_fc_width_alone():
    draft = {"architectures": ["LlamaForCausalLMEagle"], "hidden_size": 4096, "vocab_size": 128256}
    header = header_of(eagle3_tensors(4096, 4096))
    report = analyze_pairing(load("llama31_8b_target"), draft, algorithm="EAGLE", draft_safetensors_header=header)
    assert "eagle3-draft-as-eagle" in codes(report, "error")


def test_eagle_draft_with_eagle_is_fine():
    draft = {"architectures": ["LlamaForCausalLMEagle"], "hidden_size": 4096, "vocab_size": 128256,
             "torch_dtype": "bfloat16"}
    header = header_of({"fc.weight": ("BF16", [4096, 8192], b"\0\0")})  # EAGLE-2: fc over [embed, hidden]
    report = analyze_pairing(load("llama31_8b_target"), draft, algorithm="EAGLE", draft_safetensors_header=header)
    assert not report.has_errors
    assert "eagle3-draft-as-eagle" not in codes(report)


def test_eagle2_draft_under_eagle3_is_an_error():
    draft = {"architectures": ["LlamaForCausalLMEagle"], "hidden_size": 4096, "vocab_size": 128256}
    report = analyze_pairing(load("llama31_8b_target"), draft, algorithm="EAGLE3")
    assert "draft-arch-not-eagle3" in codes(report, "error")


@pytest.mark.parametrize("arch", ["Eagle3LlamaForCausalLM", "Eagle3Speculator", "LlamaForCausalLM"])
def test_unregistered_draft_architecture_is_an_error(arch):
    draft = load("llama31_8b_draft_trainer_ids")
    draft["architectures"] = [arch]
    report = analyze_pairing(load("llama31_8b_target"), draft, sglang_version="0.5.23")
    (diag,) = report.by_code("draft-arch-unregistered")
    assert diag.severity == "error" and "LlamaForCausalLMEagle3" in diag.fix.description


def test_registered_draft_architecture_passes():
    report = analyze_pairing(*llama_pair(), sglang_version="0.5.23")
    assert not codes(report) & {"draft-arch-unregistered", "draft-arch-unknown", "draft-arch-not-eagle3"}


def test_target_without_eagle3_hook_is_an_error():
    target = {"architectures": ["MixtralForCausalLM"], "model_type": "mixtral", "hidden_size": 4096,
              "num_hidden_layers": 32, "vocab_size": 32000}
    draft = load("llama31_8b_draft_noids")
    draft["vocab_size"] = 32000
    report = analyze_pairing(target, draft, sglang_version="0.5.23")
    (diag,) = report.by_code("target-no-eagle3")
    assert diag.severity == "error" and "does not implement set_eagle3_layers_to_capture" in diag.message


def test_mla_draft_with_two_layers_is_an_error():
    draft = load("kimi_k25_draft_torchspec")
    report_ok = analyze_pairing(load("kimi_k25_target"), draft, sglang_version="0.5.23")
    draft["num_hidden_layers"] = 2
    report = analyze_pairing(load("kimi_k25_target"), draft, sglang_version="0.5.23")
    assert "draft-layers" in codes(report, "error") and "draft-layers" not in codes(report_ok)


# -- shapes --------------------------------------------------------------------------------------------------------


def test_hidden_size_mismatch():
    target, draft = llama_pair()
    draft["target_hidden_size"] = 5120
    report = analyze_pairing(target, draft)
    (diag,) = report.by_code("hidden-size")
    assert diag.severity == "error" and "5120" in diag.message and "4096" in diag.message
    assert not analyze_pairing(*llama_pair()).by_code("hidden-size")


def test_hidden_size_taken_from_text_config_of_a_multimodal_target():
    draft = load("kimi_k25_draft_torchspec")
    assert not analyze_pairing(load("kimi_k25_target"), draft).by_code("hidden-size")
    draft["hidden_size"] = 4096
    assert analyze_pairing(load("kimi_k25_target"), draft).by_code("hidden-size")


def test_fc_width_must_match_the_number_of_captured_layers():
    target, draft = llama_pair()
    bad = analyze_pairing(target, draft, draft_safetensors_header=header_of(eagle3_tensors(4096, 4096, k=2)))
    assert "fc-width" in codes(bad, "error")
    assert any("2 x 4096" in d.message for d in bad.by_code("fc-width"))
    good = analyze_pairing(target, draft, draft_safetensors_header=header_of(eagle3_tensors(4096, 4096, k=3)))
    assert not good.by_code("fc-width") and not good.has_errors


def test_fc_width_not_a_multiple_of_target_hidden():
    target, draft = llama_pair()
    report = analyze_pairing(target, draft, draft_safetensors_header=header_of(eagle3_tensors(4096, 5120)))
    assert any("not a multiple" in d.message for d in report.by_code("fc-width"))


def test_gpt_oss_v3_draft_crashes_before_the_boundary_rule():
    """nvidia Eagle3-v3 [24,30,36] on 0.5.16: +1 gives 37, never reached -> 2 states for an fc of 3 x 2880."""
    header = header_of(eagle3_tensors(2880, 2880, k=3))
    old = analyze_pairing(load("gpt_oss_120b_target"), load("gpt_oss_draft_nvidia_v3"), sglang_version="0.5.16",
                          draft_safetensors_header=header)
    assert {"boundary-range", "fc-width", "id-convention"} <= codes(old, "error")
    assert old.captured_boundaries == [25, 31, 37]
    new = analyze_pairing(load("gpt_oss_120b_target"), load("gpt_oss_draft_nvidia_v3"), sglang_version="0.5.23",
                          draft_safetensors_header=header)
    assert not new.has_errors and new.captured_boundaries == [24, 30, 36]


# -- boundaries ------------------------------------------------------------------------------------------------------


def test_boundary_zero_is_an_error():
    draft = load("deepseek_v3_draft_specforge")
    draft["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = [0, 29, 57]  # first id != 1: used as-is on 0.5.23
    report = analyze_pairing(load("deepseek_v3_target"), draft, sglang_version="0.5.23")
    (diag,) = report.by_code("boundary-range")
    assert diag.severity == "error" and "embedding" in diag.message
    assert report.captured_boundaries == [0, 29, 57]


def test_boundary_past_the_last_layer_is_an_error():
    draft = load("llama31_8b_draft_trainer_ids")
    draft["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = [1, 15, 31]  # 31 + 1 = 32 = N
    report = analyze_pairing(load("llama31_8b_target"), draft, sglang_version="0.5.23")
    (diag,) = report.by_code("boundary-range")
    assert diag.severity == "error" and "32" in diag.message and "never reaches" in diag.message
    assert not analyze_pairing(*llama_pair()).by_code("boundary-range")


def test_duplicate_boundaries_are_an_error():
    draft = load("llama31_8b_draft_trainer_ids")
    draft["eagle_config"]["eagle_aux_hidden_state_layer_ids"] = [1, 15, 15]
    report = analyze_pairing(load("llama31_8b_target"), draft)
    assert "boundary-duplicate" in codes(report, "error")


# -- where the ids live ---------------------------------------------------------------------------------------------


def test_top_level_ids_that_differ_from_the_default_are_an_error():
    draft = load("llama31_8b_draft_noids")
    draft["eagle_aux_hidden_state_layer_ids"] = [4, 12, 24]
    report = analyze_pairing(load("llama31_8b_target"), draft, sglang_version="0.5.23")
    (diag,) = report.by_code("ids-top-level-only")
    assert diag.severity == "error"
    assert report.captured_boundaries == [2, 16, 29]  # the default: SGLang ignored them
    assert "eagle_config" in diag.fix.description and report.suggested_ids is not None
    assert report.layer_map.rows[1].label.startswith("draft top-level ids")


def test_top_level_ids_matching_the_default_warn():
    draft = load("llama31_8b_draft_noids")
    draft["eagle_aux_hidden_state_layer_ids"] = [2, 16, 29]  # vLLM boundaries == SGLang default
    report = analyze_pairing(load("llama31_8b_target"), draft, sglang_version="0.5.23")
    (diag,) = report.by_code("ids-top-level-only")
    assert diag.severity == "warning"


def test_nested_ids_raise_no_location_finding():
    assert not analyze_pairing(*llama_pair()).by_code("ids-top-level-only")


def test_no_ids_reports_the_default_as_info():
    report = analyze_pairing(load("llama31_8b_target"), load("llama31_8b_draft_noids"), sglang_version="0.5.23")
    (diag,) = report.by_code("ids-default")
    assert diag.severity == "info" and "[2, 16, 29]" in diag.message
    assert report.declared_ids is None


# -- vocabulary -------------------------------------------------------------------------------------------------------


def test_small_draft_vocab_without_d2t_is_an_error():
    target, draft = llama_pair()
    report = analyze_pairing(target, draft, draft_safetensors_header=header_of(eagle3_tensors(4096, 4096, d2t_len=0)))
    assert "d2t-missing" in codes(report, "error")
    ok = analyze_pairing(target, draft, draft_safetensors_header=header_of(eagle3_tensors(4096, 4096)))
    assert not codes(ok) & {"d2t-missing", "d2t-shape"}


def test_d2t_of_the_wrong_length_is_an_error():
    target, draft = llama_pair()
    report = analyze_pairing(target, draft, draft_safetensors_header=header_of(eagle3_tensors(4096, 4096, d2t_len=16000)))
    assert "d2t-shape" in codes(report, "error")


def test_d2t_presence_from_a_weight_index():
    target, draft = llama_pair()
    index = {"weight_map": {"fc.weight": "a.safetensors", "lm_head.weight": "a.safetensors"}}
    assert "d2t-missing" in codes(analyze_pairing(target, draft, weight_index=index), "error")
    index["weight_map"]["d2t"] = "a.safetensors"
    assert not analyze_pairing(target, draft, weight_index=index).by_code("d2t-missing")


def test_full_vocab_draft_needs_no_d2t():
    target, draft = llama_pair()
    draft["draft_vocab_size"] = None
    report = analyze_pairing(target, draft, draft_safetensors_header=header_of(eagle3_tensors(4096, 4096, draft_vocab=None)))
    assert not codes(report) & {"d2t-missing", "d2t-shape", "d2t-unchecked"}


def test_tied_embeddings_with_a_small_draft_vocab_warn():
    target, draft = llama_pair()
    assert not analyze_pairing(target, draft).by_code("tie-embeddings-vocab")
    draft["tie_word_embeddings"] = True
    (diag,) = analyze_pairing(target, draft).by_code("tie-embeddings-vocab")
    assert diag.severity == "warning" and "false" in diag.fix.description


def test_missing_embedding_when_target_hidden_differs():
    target = load("llama31_8b_target")
    draft = load("llama31_8b_draft_trainer_ids")
    draft["hidden_size"] = 2048
    draft["target_hidden_size"] = 4096
    no_embed = analyze_pairing(target, draft, draft_safetensors_header=header_of(eagle3_tensors(2048, 4096)))
    assert no_embed.by_code("embed-missing")[0].severity == "warning"
    with_embed = analyze_pairing(
        target, draft, draft_safetensors_header=header_of(eagle3_tensors(2048, 4096, embed_vocab=128256))
    )
    assert not with_embed.by_code("embed-missing")


# -- STANDALONE, NEXTN -----------------------------------------------------------------------------------------------


def test_standalone_with_another_vocabulary():
    """The standalone-two-tokenizers case: gemma-2-9b + tiny_starcoder_py under STANDALONE: vocab 256000 vs 49152."""
    report = analyze_pairing(load("gemma2_9b_target"), load("tiny_starcoder_draft"), algorithm="STANDALONE")
    (diag,) = report.by_code("standalone-vocab")
    assert diag.severity == "error" and "256000" in diag.message and "49152" in diag.message
    assert report.captured_boundaries == []


def test_standalone_same_family_passes_and_tokenizer_fingerprints_are_compared():
    target = load("llama31_8b_target")
    draft = dict(target, num_hidden_layers=16, hidden_size=2048)
    assert not analyze_pairing(target, draft, algorithm="STANDALONE").has_errors
    same = analyze_pairing(target, draft, algorithm="STANDALONE", tokenizer_fingerprints=("abc", "abc"))
    assert not same.has_errors
    other = analyze_pairing(target, draft, algorithm="STANDALONE", tokenizer_fingerprints=("abc", "def"))
    assert "standalone-tokenizer" in codes(other, "error")


def test_nextn_without_mtp_layers_is_an_error():
    target = load("llama31_8b_target")
    report = analyze_pairing(target, target, algorithm="NEXTN")
    assert "nextn-missing" in codes(report, "error")
    kimi = analyze_pairing(load("kimi_k25_target"), load("kimi_k25_target"), algorithm="NEXTN")
    assert "nextn-missing" in codes(kimi, "error")  # num_nextn_predict_layers: 0


def test_nextn_on_deepseek_v3_passes_and_checks_the_weight_index():
    target = load("deepseek_v3_target")
    index = {"weight_map": {"model.layers.61.eh_proj.weight": "model-00163.safetensors"}}
    assert not analyze_pairing(target, target, algorithm="NEXTN", weight_index=index).has_errors
    missing = analyze_pairing(target, target, algorithm="NEXTN", weight_index={"weight_map": {"lm_head.weight": "x"}})
    assert "nextn-weights" in codes(missing, "error")
    two = dict(target, num_nextn_predict_layers=2)
    assert "nextn-count" in codes(analyze_pairing(two, two, algorithm="NEXTN"), "error")


# -- soft differences ------------------------------------------------------------------------------------------------


def test_dtype_context_and_special_tokens_differences_warn():
    target, draft = llama_pair()
    clean = analyze_pairing(target, draft)
    assert not codes(clean) & {"dtype", "context-length", "special-tokens", "vocab-size"}
    draft.update(torch_dtype="float16", max_position_embeddings=2048, bos_token_id=1, eos_token_id=2, vocab_size=32000)
    report = analyze_pairing(target, draft)
    for code in ("dtype", "context-length", "special-tokens", "vocab-size"):
        assert report.by_code(code) and all(d.severity == "warning" for d in report.by_code(code)), code
    assert "--dtype bfloat16" in report.by_code("dtype")[0].fix.description
    assert not report.has_errors


def test_speculators_verifier_naming_another_model_warns():
    target, draft = llama_pair()
    draft["speculators_config"] = {"verifier": {"name_or_path": "Qwen/Qwen3-8B"}}
    assert analyze_pairing(target, draft).by_code("verifier-name")
    draft["speculators_config"]["verifier"]["name_or_path"] = "meta-llama/Llama-3.1-8B-Instruct"
    assert not analyze_pairing(target, draft).by_code("verifier-name")


def test_use_aux_hidden_state_false_is_reported():
    target, draft = llama_pair()
    draft["eagle_config"]["use_aux_hidden_state"] = False
    report = analyze_pairing(target, draft)
    assert report.by_code("aux-off") and report.captured_boundaries == []


def test_json_shape_matches_the_issue():
    report = analyze_pairing(load("kimi_k25_target"), load("kimi_k25_draft_vllm_export"), sglang_version="0.5.12")
    data = report.to_json()
    assert {"diagnostics", "captured_boundaries", "declared_ids", "source"} <= set(data)
    assert all(set(d) == {"severity", "code", "message", "fix"} for d in data["diagnostics"])
    assert data["declared_ids"] == [2, 30, 58] and data["source"] == "rules:0.5.12"
    assert analyze_pairing(*llama_pair()).to_json()["declared_ids"] == [1, 15, 28]
    assert analyze_pairing(load("llama31_8b_target"), load("llama31_8b_draft_noids")).to_json()["declared_ids"] is None


def test_errors_come_first():
    report = analyze_pairing(load("kimi_k25_target"), load("kimi_k25_draft_vllm_export"), sglang_version="0.5.12",
                             draft_safetensors_header=header_of(eagle3_tensors(7168, 7168, vllm_names=True)))
    order = [d.severity for d in report.diagnostics]
    assert order == sorted(order, key=["error", "warning", "info"].index)
