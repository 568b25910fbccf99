"""Never a traceback: ``validate`` over arbitrary launch commands, for every shipped SGLang release and for version
strings a host may report.

The commands are built from the real flag tables (every option of the release, abbreviated, with ``=`` or a
separate value, with values of the wrong type, zero, negative, huge, empty or hostile), mixed with the launcher,
environment prefixes, shell operators and random text. Each report must render as text and JSON, and each fix it
offers must apply and validate again without an exception.

Deterministic in CI (``derandomize``); ``SPECDASH_FUZZ_EXAMPLES=20000 SPECDASH_FUZZ_RANDOM=1`` runs a longer random
search.
"""

from __future__ import annotations

import json
import os

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from specdash.commands.validate import _render  # noqa: E402
from specdash.sglang.flags import load_table  # noqa: E402
from specdash.sglang.validate import validate_command  # noqa: E402
from specdash.sglang.versions import FLAG_TABLE_RELEASES  # noqa: E402

VERSIONS = (*FLAG_TABLE_RELEASES, None, "unknown", "", "0.5.24rc0", "0.5.18rc1", "0.5.24.dev3+gabc", "0.3.0",
            "9.9", "v0.5.9", "0.4.10.post2", "0.5.0rc0")
LAUNCHERS = ("python -m sglang.launch_server", "python3 -m sglang.launch_server", "sglang serve", "",
             "vllm serve m", "HF_TOKEN=x SGLANG_ENABLE_SPEC_V2=1 python3 -m sglang.launch_server",
             "nohup python3 -m sglang.launch_server", "export SGLANG_ENABLE_SPEC_V2=bogus\npython -m sglang.launch_server")
VALUES = st.one_of(
    st.sampled_from(["0", "1", "-1", "2", "3", "4", "5", "8", "16", "64", "1e309", "nan", "inf", "-0", "2k", "1.5",
                     "", "EAGLE", "EAGLE3", "NEXTN", "NGRAM", "STANDALONE", "DFLASH", "MTP", "eagle", "true",
                     "flashinfer", "fa3", "triton", "trtllm_mha", "flashmla", "cutlass_mla", "torch_native", "cpu",
                     "cuda", "npu", "/models/x", "meta-llama/Llama-3.1-8B-Instruct", "deepseek-ai/DeepSeek-V3",
                     "Qwen/Qwen3-30B-A3B", "'quoted value'", '"dq"', "$VAR", "${X:-3}", "[/b]", "\x1b[2J",
                     "99999999999999999999999", "0x10", " ", "--", "-"]),
    st.integers(min_value=-3, max_value=300).map(str),
    st.text(max_size=12),
)


def _flag_words(release: str):
    table = load_table(release)
    options = sorted(table.by_option)

    @st.composite
    def word(draw):
        option = draw(st.sampled_from(options))
        form = draw(st.integers(min_value=0, max_value=5))
        if form == 1 and len(option) > 6:  # an abbreviation argparse may accept or call ambiguous
            option = option[: draw(st.integers(min_value=4, max_value=len(option) - 1))]
        if form == 2:
            return f"{option}={draw(VALUES)}"
        if form == 3:
            return option
        if form == 4:
            return option.replace("-", "_", draw(st.integers(min_value=0, max_value=3)))
        return f"{option} {draw(VALUES)}"

    return word()


def _quote(word: str) -> str:
    if word and all(ch.isalnum() or ch in "-_=./:+" for ch in word):
        return word
    return "'" + word.replace("'", "'\"'\"'") + "'"


@st.composite
def _command(draw):
    version = draw(st.sampled_from(VERSIONS))
    release = draw(st.sampled_from(FLAG_TABLE_RELEASES))
    words = draw(st.lists(st.one_of(_flag_words(release), VALUES.map(_quote),
                                    st.sampled_from(["&", "|", ";", "\\\n", "# c", "2>&1", "> log", "&&"])),
                          max_size=14))
    launcher = draw(st.sampled_from(LAUNCHERS))
    model = draw(st.sampled_from(["", "--model-path m ", "--model-path deepseek-ai/DeepSeek-V3 ",
                                  "--model meta-llama/Llama-3.1-8B-Instruct "]))
    return version, f"{launcher} {model}" + " ".join(words)


_EXAMPLES = int(os.environ.get("SPECDASH_FUZZ_EXAMPLES", "400"))
_RANDOM = bool(os.environ.get("SPECDASH_FUZZ_RANDOM"))


@settings(max_examples=_EXAMPLES, derandomize=not _RANDOM, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(_command())
def test_validate_never_raises_and_its_fixes_apply(case):
    version, text = case
    report = validate_command(text, version)
    rendered = _render(report, [])
    assert rendered.startswith("SGLang ")
    json.dumps(report.to_json())
    for diag in report.diagnostics:
        if diag.fix is not None:
            fixed = diag.fix.apply(text)
            validate_command(fixed, version)


@settings(max_examples=_EXAMPLES // 2, derandomize=not _RANDOM, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(st.text(max_size=300), st.sampled_from(VERSIONS))
def test_validate_never_raises_on_any_text(text, version):
    report = validate_command(text, version)
    json.dumps(report.to_json())
    _render(report, [])


@pytest.mark.parametrize("version", ["unknown", "", "  ", "nightly", "0.5", "x.y.z"])
def test_a_version_that_cannot_be_read_applies_the_newest_rules_and_says_so(version):
    report = validate_command("python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
                              "--speculative-draft-model-path d --speculative-num-steps 3 "
                              "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4", version)
    if version.strip() == "0.5":
        assert report.version_notice is None  # "0.5" is a version: 0.5.0 rules
        return
    assert report.profile.name == "0.5.16"
    assert "not a release number specdash can read" in report.version_notice
    assert "newest rules" in report.version_notice
