"""Command parsing: pasted forms, environment, continuations, argparse-style option matching, fixes in place."""

from __future__ import annotations

import pytest

from specdash.sglang.arguments import parse_arguments
from specdash.sglang.command import parse_command, tokenize
from specdash.sglang.diagnostics import Edit
from specdash.sglang.fixes import apply_edits
from specdash.sglang.flags import load_table
from specdash.sglang.versions import parse_version, profile_for


def test_launcher_forms_and_env_prefix():
    for launcher in ("python -m sglang.launch_server", "python3 -m sglang.launch_server", "sglang serve",
                     "/usr/bin/python3.11 -m sglang.launch_server", "nohup python -m sglang.launch_server"):
        cmd = parse_command(f"CUDA_VISIBLE_DEVICES=0,1 HF_TOKEN=x {launcher} --model-path m --tp-size 2")
        assert cmd.engine == "sglang", launcher
        assert [w.text for w in cmd.args] == ["--model-path", "m", "--tp-size", "2"]
        assert cmd.env_dict() == {"CUDA_VISIBLE_DEVICES": "0,1", "HF_TOKEN": "x"}


def test_export_lines_continuations_quotes_comments_and_redirections():
    text = ("export SGLANG_ENABLE_SPEC_V2=1\n"
            "# launch\n"
            "python -m sglang.launch_server \\\n"
            "  --model-path '/models/My Model' \\\n"
            "  --served-model-name=\"a b\" \\\n"
            "  --port 30000 > server.log 2>&1 &\n"
            "curl localhost:30000/health\n")
    cmd = parse_command(text)
    assert cmd.env_dict() == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert [w.text for w in cmd.args] == ["--model-path", "/models/My Model", "--served-model-name=a b",
                                          "--port", "30000"]
    assert text[cmd.args[1].start:cmd.args[1].end] == "'/models/My Model'"


def test_placeholder_in_angle_brackets_is_a_word():
    cmd = parse_command("python -m sglang.launch_server --model-path <any-MTP-model> --port 1")
    assert [w.text for w in cmd.args] == ["--model-path", "<any-MTP-model>", "--port", "1"]


def test_argparse_matching_exact_prefix_ambiguous_unknown_and_values():
    table = load_table("0.5.9")
    words = tokenize("--mem-frac 0.8 --speculative-draft d --speculative-num-steps=3 --tp 2 --foo bar "
                     "--chunked-prefill-size -1 --trust-remote-code --page-size x --disable-radix-cache=1")
    parsed = parse_arguments(words, table)
    kinds = [(o.typed, o.lookup.kind) for o in parsed.occurrences]
    assert ("--mem-frac", "prefix") in kinds and ("--tp", "prefix") in kinds
    assert ("--speculative-draft", "ambiguous") in kinds and ("--foo", "unknown") in kinds
    assert parsed.typed["mem_fraction_static"] == 0.8
    assert parsed.typed["speculative_num_steps"] == 3
    assert parsed.typed["tp_size"] == 2
    assert parsed.typed["chunked_prefill_size"] == -1  # a negative number is a value, as in argparse
    assert parsed.typed["trust_remote_code"] is True
    errors = {o.typed: o.error for o in parsed.errors}
    assert errors["--page-size"] == "argument --page-size: invalid int value: 'x'"
    assert "ignored explicit argument '1'" in errors["--disable-radix-cache"]
    assert parsed.unknown[0].values == ["bar"]


def test_missing_value_and_invalid_choice_use_argparse_words():
    parsed = parse_arguments(tokenize("--speculative-algorithm eagle --speculative-num-steps --port 1"),
                             load_table("0.5.9"))
    errors = {o.typed: o.error for o in parsed.errors}
    assert errors["--speculative-algorithm"].startswith("argument --speculative-algorithm: invalid choice: 'eagle'")
    assert errors["--speculative-num-steps"] == "argument --speculative-num-steps: expected one argument"


def test_repeated_flag_last_wins():
    parsed = parse_arguments(tokenize("--port 1 --port 2"), load_table("0.5.23"))
    assert parsed.typed["port"] == 2 and len(parsed.by_dest["port"]) == 2


def test_fix_edits_keep_continuations():
    text = ("python -m sglang.launch_server \\\n"
            "  --model-path m \\\n"
            "  --speculative-num-steps=1 \\\n"
            "  --disable-cuda-graph \\\n"
            "  --port 1\n")
    out = apply_edits(text, [Edit("set", option="--speculative-num-steps", value=15, dest="speculative_num_steps"),
                             Edit("remove", dest="disable_cuda_graph"),
                             Edit("set", option="--speculative-eagle-topk", value=1, dest="speculative_eagle_topk"),
                             Edit("set_env", option="SGLANG_ENABLE_SPEC_V2", value="0")], "0.5.23")
    assert out == ("SGLANG_ENABLE_SPEC_V2=0 python -m sglang.launch_server \\\n"
                   "  --model-path m \\\n"
                   "  --speculative-num-steps=15 \\\n"
                   "  --port 1 --speculative-eagle-topk 1\n")
    assert apply_edits(out, [Edit("unset_env", option="SGLANG_ENABLE_SPEC_V2")], "0.5.23").startswith("python -m")


def test_versions_and_profiles():
    assert parse_version("0.5.3.post3") > parse_version("0.5.3") > parse_version("0.5.2.post9")
    assert parse_version("0.5.0rc0") < parse_version("0.5.0")
    # pre-releases and source builds sit between the releases around them (PEP 440)
    assert parse_version("0.5.23") < parse_version("0.5.24.dev3+gabc") < parse_version("0.5.24rc0") \
        < parse_version("0.5.24")
    assert profile_for("0.5.18rc1").name == "0.5.16" and profile_for("0.5.12rc1").name == "0.5.11"
    assert profile_for("0.4.10.post2").name == "0.4.7"
    assert profile_for("0.5.9").name == "0.5.5" and profile_for("0.5.9").flag_release == "0.5.9"
    assert profile_for("0.5.20").flag_release == "0.5.23"
    assert profile_for(None).version == "0.5.23"
    with pytest.raises(ValueError):
        profile_for("latest")
