"""A pasted launch command is a shell script: variables, broken continuations, wrappers, fused flags, HF cache
paths. Every assertion is on what `specdash validate` shows (diagnostics and effective values)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.sglang.command import parse_command
from specdash.sglang.expansion import expand
from specdash.sglang.flags import load_table
from specdash.sglang.validate import validate_command
from specdash.sglang.versions import FLAG_TABLE_RELEASES

SCRIPT = """#!/bin/bash
# DeepSeek-V3 with MTP on one node
model_path=/data/DeepSeek-V3
tp=8
export SGLANG_LOG_LEVEL=info
nohup python3 -m sglang.launch_server \\
  --model-path ${model_path} \\
  --tp ${tp} \\
  --speculative-algorithm EAGLE \\
  --speculative-num-steps ${STEPS:-3} \\
  --speculative-eagle-topk 1 \\
  --speculative-num-draft-tokens 4 \\
  --trust-remote-code \\
  --context-length $((16384 * 4)) \\
  --mem-fraction-static 0.8 > server.log 2>&1 &
"""


def test_variables_set_earlier_in_the_script_are_expanded():
    report = validate_command(SCRIPT, "0.5.9")
    assert not report.has_errors, [d.message for d in report.diagnostics]
    assert report.effective["model_path"] == "/data/DeepSeek-V3"
    assert report.effective["tp_size"] == 8
    assert report.effective["speculative_num_steps"] == 3
    assert report.effective["context_length"] == 65536
    note = report.find("shell-default")
    assert note is not None and "STEPS" in note.message and "'3'" in note.message
    assert report.find("placeholder-path") is None and report.find("draft-path-missing") is None


def test_unset_variables_are_unknown_not_errors():
    text = SCRIPT.replace("model_path=/data/DeepSeek-V3\ntp=8\n", "")
    report = validate_command(text, "0.5.9")
    assert not report.has_errors, [d.message for d in report.diagnostics if d.severity == "error"]
    notes = {d.flags[0]: d.message for d in report.diagnostics if d.code == "unresolved-value"}
    assert set(notes) == {"--model-path", "--tp-size"}
    assert "$model_path is not set in the pasted text" in notes["--model-path"]
    assert report.effective["model_path"] == "${model_path}"
    assert report.find("placeholder-path") is None
    assert all(d.severity == "info" for d in report.diagnostics if "--tp-size" in d.flags)


def test_a_line_without_its_backslash_loses_the_flags_after_it():
    text = ("python -m sglang.launch_server \\\n  --model-path m \\\n  --speculative-algorithm EAGLE3 \\\n"
            "  --speculative-draft-model-path d\n  --port 30001 \\\n  --host 0.0.0.0\n")
    report = validate_command(text, "0.5.9")
    diag = report.find("broken-continuation")
    assert diag is not None and diag.severity == "error"
    assert diag.message.startswith("line 4 ends the command: the 2 flags after it (--port --host) run as a "
                                   "separate command and are lost")
    assert report.find("more-commands") is None
    assert "port" not in report.typed
    fixed = diag.fix.apply(text)
    assert "--speculative-draft-model-path d \\\n  --port 30001" in fixed
    assert validate_command(fixed, "0.5.9").find("broken-continuation") is None
    assert validate_command(fixed, "0.5.9").typed["port"] == 30001


def test_a_real_second_command_is_not_a_lost_continuation():
    text = "python -m sglang.launch_server --model-path m\necho started\n"
    assert validate_command(text, "0.5.9").find("broken-continuation") is None


def test_docker_srun_and_torchrun_wrappers():
    docker = ("docker run --gpus all --shm-size 32g -e CUDA_VISIBLE_DEVICES=0,1 --ipc=host -v /m:/m "
              "lmsysorg/sglang:latest python3 -m sglang.launch_server --model-path /m/x --tp 2 "
              "--speculative-algorithm NGRAM")
    cmd = parse_command(docker)
    assert cmd.found and cmd.launcher == "python3 -m sglang.launch_server"
    assert cmd.env_dict() == {"CUDA_VISIBLE_DEVICES": "0,1"}
    assert [w.text for w in cmd.args][:2] == ["--model-path", "/m/x"]
    report = validate_command(docker, "0.5.9")
    assert report.typed["tp_size"] == 2 and report.find("visible-devices-unused") is None
    srun = "srun -N1 --gres=gpu:8 python -m sglang.launch_server --model-path m --speculative-algorithm NGRAM"
    assert parse_command(srun).launcher == "python -m sglang.launch_server"
    torch = "torchrun --nproc_per_node 1 -m sglang.launch_server --model-path m"
    assert [w.text for w in parse_command(torch).args] == ["--model-path", "m"]


def test_unresolved_environment_is_not_counted():
    report = validate_command("CUDA_VISIBLE_DEVICES=$GPUS python -m sglang.launch_server --model-path m --tp 4",
                              "0.5.9")
    assert not report.has_errors
    assert report.find("unresolved-env") is not None
    assert report.find("visible-devices-too-few") is None


def test_fused_flags_are_split_never_removed():
    text = ("python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
            "--speculative-draft-model-path d --trust-remote-code--speculative-num-steps 3 "
            "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
    report = validate_command(text, "0.5.9")
    diag = report.find("fused-flags")
    assert diag is not None and diag.severity == "error"
    assert diag.fix.description == ("split --trust-remote-code--speculative-num-steps into --trust-remote-code "
                                    "--speculative-num-steps")
    fixed = diag.fix.apply(text)
    assert "--trust-remote-code --speculative-num-steps 3" in fixed
    again = validate_command(fixed, "0.5.9")
    assert not again.has_errors and again.typed["speculative_num_steps"] == 3
    assert report.find("steps-missing") is None  # resolved as fixed


def test_hugging_face_cache_path_names_the_repo():
    path = "/root/.cache/huggingface/hub/models--Qwen--Qwen3-8B/snapshots/9c925d64d72725edaf899c6cb9c377fd0709d9c5"
    report = validate_command(f"python -m sglang.launch_server --model-path {path}", "0.5.9")
    diag = report.find("hf-cache-path")
    assert diag is not None and diag.severity == "info" and "Qwen/Qwen3-8B" in diag.message


def test_separator_lines_and_trim_markers_are_not_arguments():
    text = ("python -m sglang.launch_server \\\n  --model-path m \\\n[... 3 lines trimmed]\n"
            "  --speculative-algorithm NGRAM\n-----------------\n")
    report = validate_command(text, "0.5.9")
    assert not report.has_errors, [d.message for d in report.diagnostics]
    assert report.typed["speculative_algorithm"] == "NGRAM"


def test_expansion_shapes():
    variables = {"tp": "8", "m": "/x", "unknown": None}
    assert expand("${tp}", variables).text == "8"
    assert expand("$((16384 * 4))", {}).text == "65536"
    assert expand("$(( tp * 2 ))", variables).text == "16"
    assert expand("$((-7 / 2))", {}).text == "-3"  # bash truncates toward zero
    assert expand("$((x * 2))", {}).unresolved == ("$((x * 2))",)
    assert expand("${N:-${tp}}", variables).text == "8"
    assert expand("$unknown", variables).unresolved == ("$unknown",)
    assert expand("$(hostname)", variables).unresolved == ("$(hostname)",)
    assert parse_command("python -m sglang.launch_server --model-path '$m'").args[1].text == "$m"


_EXAMPLES = int(os.environ.get("SPECDASH_FUZZ_EXAMPLES", "300"))


@st.composite
def _unresolved_flag(draw):
    release = draw(st.sampled_from(FLAG_TABLE_RELEASES))
    table = load_table(release)
    spec = draw(st.sampled_from([s for s in table.specs if s.takes_value and s.options]))
    form = draw(st.sampled_from(["${X}", "$X", "${X:+y}", "$(cat f)", '"${X}"', "${X}x"]))
    option = draw(st.sampled_from(sorted(spec.options)))
    joined = draw(st.booleans())
    base = draw(st.sampled_from([
        "python -m sglang.launch_server --model-path m --speculative-algorithm EAGLE3 "
        "--speculative-draft-model-path d",
        "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3 --speculative-algorithm NEXTN "
        "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
        "CUDA_VISIBLE_DEVICES=0,1 python -m sglang.launch_server --model-path m --tp 2"]))
    word = f"{option}={form}" if joined else f"{option} {form}"
    return release, spec, f"{base} {word}"


@settings(max_examples=_EXAMPLES, derandomize=True, deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(_unresolved_flag())
def test_an_unresolved_value_never_gives_an_error_about_that_value(case):
    release, spec, text = case
    report = validate_command(text, release)
    mine = set(spec.options) | {spec.canonical}
    bad = [d for d in report.diagnostics if d.severity in ("error", "warning") and mine & set(d.flags)]
    assert not bad, (text, [(d.code, d.message) for d in bad])
    assert report.find("unresolved-value") is not None


def test_a_comment_inside_a_continuation_ends_the_command():
    text = "python -m sglang.launch_server \\\n  --model-path m \\\n  # --tp 2 \\\n  --port 3000 \\\n  --host h\n"
    report = validate_command(text, "0.5.9")
    diag = report.find("broken-continuation")
    assert diag is not None and diag.message.startswith(
        "line 3 (a # comment inside the continuation, which swallows its backslash) ends the command: the 2 flags "
        "after it (--port --host)")
    fixed = diag.fix.apply(text)
    assert "# --tp" not in fixed and validate_command(fixed, "0.5.9").typed["port"] == 3000


TRIMMED = """python3 -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct \\
  --speculative-algorithm EAGLE3 --speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B \\
  --speculative-num-steps 3 [... 4 more flags trimmed]
"""


def test_a_trim_marker_inside_a_line_is_not_arguments_and_hides_flags():
    report = validate_command(TRIMMED, "0.5.9")
    codes = {d.code: d for d in report.diagnostics}
    assert "stray-argument" not in codes  # "[..." and "trimmed]" are not arguments
    assert codes["trimmed-command"].severity == "info"
    assert "line 3: [... 4 more flags trimmed]" in codes["trimmed-command"].message
    # topk may be among the trimmed flags: a missing-flag finding is only what holds if it is not
    topk = codes["topk-missing"]
    assert topk.severity == "info" and topk.fix is None
    assert topk.message.startswith("not certain ([... 4 more flags trimmed] may set --speculative-eagle-topk)")
    assert not report.has_errors


def test_an_unresolved_expansion_may_hold_the_missing_flag():
    script = TRIMMED.replace("[... 4 more flags trimmed]", "$EXTRA_ARGS")
    report = validate_command(script, "0.5.9")
    topk = next(d for d in report.diagnostics if d.code == "topk-missing")
    assert topk.severity == "info"
    assert "$EXTRA_ARGS may set --speculative-eagle-topk" in topk.message
    # without anything hidden the same command is an error, as SGLang stops on it
    plain = validate_command(TRIMMED.replace(" [... 4 more flags trimmed]", ""), "0.5.9")
    assert next(d for d in plain.diagnostics if d.code == "topk-missing").severity == "error"


def test_an_error_about_flags_the_text_shows_stays_an_error_when_something_is_hidden():
    script = TRIMMED.replace("--speculative-num-steps 3", "--num-speculative-tokens 3")
    report = validate_command(script, "0.5.9")
    foreign = next(d for d in report.diagnostics if d.code == "foreign-flag")
    assert foreign.severity == "error"  # the vLLM flag is typed: hiding other flags does not make it valid


def test_effective_values_not_typed_are_conditional_when_part_of_the_command_is_hidden():
    import subprocess
    import sys

    script = TRIMMED.replace("--speculative-num-steps 3", "--speculative-num-steps 3 --speculative-eagle-topk 1 "
                             "--speculative-num-draft-tokens 4 $EXTRA_ARGS")
    out = subprocess.run([sys.executable, "-m", "specdash", "validate", "--sglang-version", "0.5.9", "-"],
                         input=script, capture_output=True, text=True, timeout=60)
    lines = {line.split()[0]: line for line in out.stdout.splitlines() if line.startswith("  ")}
    assert lines["max_running_requests"].rstrip().endswith("48 (unless $EXTRA_ARGS, [... 4 more flags trimmed] sets it)")
    assert lines["speculative_num_steps"].rstrip().endswith("3 (typed)")
    report = validate_command(script, "0.5.9")
    assert report.to_json()["hidden"] == ["$EXTRA_ARGS", "[... 4 more flags trimmed]"]
    assert validate_command(TRIMMED.replace(" [... 4 more flags trimmed]", ""), "0.5.9").to_json()["hidden"] == []
