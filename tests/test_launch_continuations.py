"""A launch command written over several lines (backslash continuations, comments, quoting) keeps its exact argv
through every command edit (the sweep's no-speculation baseline, a changed depth, an added or removed flag) and
through the launch wrapper: a real ``sh`` runs the wrapper on the edited text and a stand-in program prints the
argv it got. A continuation left dangling (``--port 3 \\`` as the last line) must never become an argument."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.server.launch import launch_wrapper
from specdash.sglang.command import parse_command
from specdash.sglang.command_edit import remove_speculative_flags, set_flag
from specdash.sglang.diagnostics import Edit, Fix
from specdash.sglang.fixes import close_final_continuation
from specdash.sglang.versions import profile_for

#: a stand-in for python3 / sglang: writes the argv it got (after its own name) to $ARGV_OUT as one JSON line
STAND_IN = "#!{python}\nimport json, os, sys\nopen(os.environ['ARGV_OUT'], 'a').write(json.dumps(sys.argv[1:]) + '\\n')\n"


@pytest.fixture(scope="module")
def stand_ins(tmp_path_factory) -> Path:
    bin_dir = tmp_path_factory.mktemp("bin")
    for name in ("python", "python3", "sglang"):
        path = bin_dir / name
        path.write_text(STAND_IN.format(python=sys.executable))
        path.chmod(0o755)
    return bin_dir


def run_wrapper(command: str, bin_dir: Path, run_dir: Path) -> list[list[str]]:
    """Run the launch wrapper (as :func:`specdash.server.launch.launch` does: the command stored in command.sh
    with a final newline) under a real ``sh``; the argv lines the stand-ins wrote."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for name in ("command.sh", "argv", "exit_status", "leader.pid"):
        (run_dir / name).unlink(missing_ok=True)
    (run_dir / "command.sh").write_text(command + "\n")
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", SPECDASH_RUN_DIR=str(run_dir),
               SPECDASH_UMASK="022", ARGV_OUT=str(run_dir / "argv"))
    subprocess.run(["sh", "-c", launch_wrapper(), "specdash-run"], env=env, stdin=subprocess.DEVNULL,
                   capture_output=True, timeout=60, check=False)
    out = run_dir / "argv"
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


# (typed text, argv words) of each flag; one of each, in any order
PATHS = [("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"),
         ("'/models/my model'", "/models/my model"), ('"/m/with space"', "/m/with space")]
SEPARATORS = st.sampled_from([" ", "  ", " \\\n    ", "\t", " \\\n\t", " \\\n"])
PREFIXES = st.sampled_from(["", "CUDA_VISIBLE_DEVICES=0,1 ", "HF_HOME='/data/hf cache' ", "export A=1\n",
                            "# launch it\n", "# two \\\n"])
LAUNCHERS = st.sampled_from([("python3 -m sglang.launch_server", ["-m", "sglang.launch_server"]),
                             ("python -m sglang.launch_server", ["-m", "sglang.launch_server"]),
                             ("sglang serve", ["serve"])])
#: how the text ends after the last flag: nothing, a comment, a newline, or a continuation onto nothing
ENDINGS = st.sampled_from(["", "  # the server", "\n", " \\", " \\\n", " \\\n\n", "  \\\n   \n", " \\\n\n# next\n"])
STEPS = ["--speculative-num-steps {}", "--speculative-num-steps={}", "--speculative-num-st {}"]


@st.composite
def commands(draw):
    """(text, launcher argv, flags): flags a list of [typed option, value or None for a switch, '=' joined]."""
    path_text, path_value = draw(st.sampled_from(PATHS))
    steps = draw(st.integers(1, 9))
    steps_form = draw(st.sampled_from(STEPS))
    flags = [
        ["--model-path", (path_text, path_value), False],
        ["--speculative-algorithm", ("EAGLE3", "EAGLE3"), False],
        [steps_form.split()[0].split("=")[0], (str(steps), str(steps)), "=" in steps_form],
        ["--speculative-draft-model-path", ("'/d/eagle 3'", "/d/eagle 3"), False],
        ["--tp", ("2", "2"), False],
        ["--port", (str(draw(st.integers(1024, 65000))),) * 2, False],
        ["--enable-metrics", None, False],
    ]
    flags = draw(st.permutations(flags))
    launcher, launcher_argv = draw(LAUNCHERS)
    text = draw(PREFIXES) + launcher
    for option, value, joined in flags:
        if value is None:
            word = option
        else:
            word = f"{option}={value[0]}" if joined else f"{option} {value[0]}"
        text += draw(SEPARATORS) + word
    return text + draw(ENDINGS), launcher_argv, [list(f) for f in flags]


def argv_of(flags) -> list[str]:
    out: list[str] = []
    for option, value, joined in flags:
        if value is None:
            out.append(option)
        elif joined:
            out.append(f"{option}={value[1]}")
        else:
            out += [option, value[1]]
    return out


EDITS = st.sampled_from(["baseline", "steps", "add", "drop_port", "switch_off", "builder_fix"])


def edited(text: str, flags, edit: str, number: int) -> tuple[str, list]:
    """The edit applied to the text, and the flags argparse should then see."""
    if edit == "baseline":
        return remove_speculative_flags(text), [f for f in flags if not f[0].startswith("--speculative")]
    if edit == "steps":
        out = [[o, (str(number), str(number)), j] if o.startswith("--speculative-num-st") else [o, v, j]
               for o, v, j in flags]
        return set_flag(text, "--speculative-num-steps", number), out
    if edit == "add":
        return set_flag(text, "--mem-fraction-static", 0.8), [*flags, ["--mem-fraction-static", ("0.8", "0.8"), False]]
    if edit == "drop_port":
        return set_flag(text, "--port", None), [f for f in flags if f[0] != "--port"]
    if edit == "builder_fix":  # a builder fix's edits (specdash.sglang.fixes), as the builder applies them
        fix = Fix("remove --tp", (Edit("remove", dest="tp_size"),), profile_for(None).flag_release)
        return fix.apply(text), [f for f in flags if f[0] != "--tp"]
    return set_flag(text, "--enable-metrics", False), [f for f in flags if f[0] != "--enable-metrics"]


def shell_words(text: str) -> list[str]:
    """The words a POSIX shell reads from ``text`` (comments dropped, continuations joined), by shlex: it keeps
    an escaped newline as a newline character, which the shell removes (the generated values hold none)."""
    words = (word.replace("\n", "") for word in shlex.split(text, comments=True))
    return [word for word in words if word]


def assert_whole(text: str) -> None:
    """No continuation of the command runs onto nothing, no line is a lone backslash."""
    command = parse_command(text)
    assert close_final_continuation(text, command.end) == text, f"dangling continuation in {text!r}"
    assert all(line.strip() != "\\" for line in text.splitlines()), text


@given(commands(), EDITS, st.integers(1, 20))
@settings(max_examples=150, deadline=None)
def test_every_edit_gives_a_whole_command_with_exactly_the_expected_arguments(generated, edit, number):
    text, launcher_argv, flags = generated
    new_text, new_flags = edited(text, flags, edit, number)
    assert_whole(new_text)
    expected = argv_of(new_flags)
    assert [w.text for w in parse_command(new_text).args] == expected
    words = shell_words(new_text)
    assert words[len(words) - len(expected):] == expected
    assert words[len(words) - len(expected) - len(launcher_argv):len(words) - len(expected)] == launcher_argv


@given(generated=commands(), edit=EDITS, number=st.integers(1, 20))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_the_launch_wrapper_runs_the_edited_and_the_typed_command_with_exactly_their_arguments(
        generated, edit, number, stand_ins, tmp_path):
    text, launcher_argv, flags = generated
    # the text as typed, dangling final backslash and all: the program gets the flags, never a "\" argument
    assert run_wrapper(text, stand_ins, tmp_path / "typed") == [launcher_argv + argv_of(flags)]
    new_text, new_flags = edited(text, flags, edit, number)
    assert run_wrapper(new_text, stand_ins, tmp_path / "edited") == [launcher_argv + argv_of(new_flags)]


def test_try_locals_multi_line_command_keeps_its_baseline(stand_ins, tmp_path):
    text = ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 "
            "--port 43111 \\\n  --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3 \\\n"
            "  --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 8\n")
    baseline = remove_speculative_flags(text)
    assert baseline == ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct "
                        "--host 127.0.0.1 --port 43111\n")
    assert run_wrapper(baseline, stand_ins, tmp_path) == [
        ["-m", "sglang.launch_server", "--model-path", "/models/Llama-3.1-8B-Instruct", "--host", "127.0.0.1",
         "--port", "43111"]]


def test_a_backslash_typed_last_never_reaches_the_program(stand_ins, tmp_path):
    assert run_wrapper("python3 -m sglang.launch_server --port 3 \\", stand_ins, tmp_path) == [
        ["-m", "sglang.launch_server", "--port", "3"]]


@given(st.sampled_from([" ", "  ", "\t"]), st.sampled_from(["--port 3", "--port 3 \\\n  --tp 2"]))
@settings(max_examples=20, deadline=None)
def test_the_builder_names_a_backslash_that_ends_the_text_and_its_fix_removes_it(blanks, flags):
    from specdash.sglang.validate import validate_command

    text = f"python3 -m sglang.launch_server --model-path m {flags}{blanks}\\"
    (diagnostic,) = [d for d in validate_command(text).diagnostics if d.severity == "error"]
    assert diagnostic.message == ("argparse error: unrecognized arguments: \\ (the command ends in a backslash, a line "
                                  "continuation with nothing after it: the shell passes a backslash that ends a file "
                                  "as a literal argument)")
    fixed = diagnostic.fix.apply(text)
    assert fixed == f"python3 -m sglang.launch_server --model-path m {flags}"
    assert not [d for d in validate_command(fixed).diagnostics if d.severity == "error"]


@given(st.text(alphabet=st.sampled_from(list(" \t\n\r\\ab'\"#-")), max_size=60), st.integers(0, 70))
@settings(max_examples=300, deadline=None)
def test_closing_any_text_never_raises_and_only_removes(text, end):
    closed = close_final_continuation(text, min(end, len(text)))
    assert len(closed) <= len(text) and closed.count("\\") >= text.count("\\") - 1
    if closed != text:  # only a backslash at the end of a line whose next line is blank or missing went
        assert text.count("\\") - closed.count("\\") == 1
        assert close_final_continuation(closed, min(end, len(closed))) == closed


@given(commands())
@settings(max_examples=150, deadline=None)
def test_a_command_shown_on_one_line_has_the_shells_same_words(generated):
    from specdash.sglang.command import on_one_line

    text = generated[0]
    shown = on_one_line(text)
    assert "\\\n" not in shown
    if text.rstrip(" \t").endswith("\\"):  # a backslash typed last (no newline after it) is shown as typed
        assert shown.endswith("\\")
    elif "#" not in text:  # a comment would swallow the joined lines after it: such text is not compared
        assert shell_words(shown) == shell_words(text)
