"""Captured boundaries for the worked examples of docs/pairing.md, per SGLang rule version.

Rule versions: 0.5.12 (before the DeepSeek first-id rule, PR #25454), 0.5.16 (first-id rule, before the gpt-oss
boundary rule, PR #32334), 0.5.23 (both; read from the 0.5.23 wheel).
"""

from __future__ import annotations

import pytest
from support.pairing import ALL, WORKED, load

from specdash.sglang.pairing import analyze_pairing, parse_version, rule_for
from specdash.sglang.pairing.layer_rules import is_newer_than_known


@pytest.mark.parametrize("target, draft, expected", WORKED, ids=[w[1] for w in WORKED])
@pytest.mark.parametrize("version", ALL)
def test_worked_example_boundaries(target, draft, expected, version):
    report = analyze_pairing(load(f"{target}_target"), load(draft), sglang_version=version)
    assert report.captured_boundaries == expected[version]
    assert report.source == f"rules:{version}"
    assert report.layer_map is not None and report.layer_map.rows[0].boundaries == tuple(expected[version])


def test_version_thresholds_follow_the_wheels():
    # deepseek_v2.py first-id rule: absent from 0.5.12.post1, present in 0.5.13
    assert not rule_for("first_id", "0.5.12.post1").first_id_rule
    assert rule_for("first_id", "0.5.13").first_id_rule
    # gpt_oss.py boundary rule: absent from 0.5.16, present in 0.5.17
    assert not rule_for("gpt_oss", "0.5.16").boundary_rule
    assert rule_for("gpt_oss", "0.5.17").boundary_rule
    assert rule_for("gpt_oss", "0.5.17").capturable_range(36) == (0, 36)
    assert rule_for("plus_one", "0.5.23").capturable_range(32) == (1, 31)


def test_version_parsing():
    assert parse_version("0.5.15.post1") > parse_version("0.5.15")
    assert parse_version("v0.5.9") == parse_version("0.5.9")
    assert parse_version("0.5.23") < parse_version("0.5.24.dev3+gabcdef") < parse_version("0.5.24")


def test_pre_releases_get_the_rules_of_their_place_in_the_release_order():
    # a pre-release of a release after the rule change has the new rule, not the oldest one
    assert rule_for("gpt_oss", "0.5.18rc1").boundary_rule
    assert rule_for("first_id", "0.5.14rc0").first_id_rule
    assert not rule_for("first_id", "0.5.13rc0").first_id_rule  # before the release that brought it
    assert is_newer_than_known("0.5.24rc0") and not is_newer_than_known("0.5.23.post1")
    with pytest.raises(ValueError, match="not an SGLang version"):
        parse_version("latest")


def test_multimodal_target_uses_text_config_layer_count():
    report = analyze_pairing(load("kimi_k25_target"), load("kimi_k25_draft_noids"), sglang_version="0.5.23")
    assert report.layer_map.num_layers == 61
    assert report.captured_boundaries == [2, 30, 58]


def test_ids_for_returns_ids_that_reproduce_the_boundaries():
    for family in ("plus_one", "first_id", "gpt_oss"):
        for version in ALL:
            rule = rule_for(family, version)
            ids = rule.ids_for([2, 30, 58], 61)
            assert rule.boundaries_for(ids, 61) == [2, 30, 58]
    # boundary N is capturable only by gpt-oss >= 0.5.17
    assert rule_for("gpt_oss", "0.5.16").ids_for([24, 30, 36], 36) is None
    assert rule_for("gpt_oss", "0.5.23").ids_for([24, 30, 36], 36) == [23, 29, 35]


def test_unknown_version_warns_when_the_answer_depends_on_it():
    report = analyze_pairing(load("kimi_k25_target"), load("kimi_k25_draft_vllm_export"))
    (diag,) = report.by_code("version-dependent")
    assert diag.severity == "warning"
    assert "[3, 31, 59]" in diag.message and "[2, 30, 58]" in diag.message
    assert "[1, 29, 57]" in diag.fix.description  # ids that work on every version
    assert report.source == "rules:0.5.23"
    # a pair whose answer is the same on every version gets no such warning
    steady = analyze_pairing(load("llama31_8b_target"), load("llama31_8b_draft_trainer_ids"))
    assert not steady.by_code("version-dependent")
    assert steady.by_code("capture-source")[0].severity == "info"


def test_version_newer_than_rules_is_flagged():
    report = analyze_pairing(load("deepseek_v3_target"), load("deepseek_v3_draft_specforge"), sglang_version="0.6.1")
    assert report.by_code("version-newer-than-rules")
    assert report.captured_boundaries == [2, 30, 58]
