"""Reading and editing one flag of a launch command (specdash.sglang.command_edit) on generated commands: any
text never raises, the value read is argparse's, and an edit changes the edited value and nothing else of the
user's text (continuations, comments, quoting, spacing, environment prefixes)."""

from __future__ import annotations

import argparse
import shlex

from hypothesis import given, settings
from hypothesis import strategies as st

from specdash.sglang.command_edit import (
    DEFAULT_PORT,
    CommandEditError,
    flag_value,
    known_launch_port,
    launch_port,
    remove_flags,
    remove_speculative_flags,
    set_flag,
)
from specdash.sglang.flags import load_table
from specdash.sglang.versions import FLAG_TABLE_RELEASES

SEPARATORS = st.sampled_from([" ", "  ", " \\\n    ", "\t", " \\\n\t"])
PREFIXES = st.sampled_from(["", "CUDA_VISIBLE_DEVICES=0,1 ", "HF_HOME='/data/hf cache' ", "export A=1\n",
                            "# launch\n", "nohup "])
LAUNCHERS = st.sampled_from(["python -m sglang.launch_server", "python3 -m sglang.launch_server", "sglang serve"])
SUFFIXES = st.sampled_from(["", "  # the server", " > server.log 2>&1 &", "\n"])
PATHS = st.sampled_from(["meta-llama/Llama-3.1-8B-Instruct", "'/models/my model'", '"/m/with space"', "/m"])


@st.composite
def commands(draw):
    """(text, steps word index) — a launch command with the user's own formatting and one --speculative-num-steps
    value somewhere among other flags."""
    steps = draw(st.integers(1, 20))
    steps_spelling = draw(st.sampled_from(["--speculative-num-steps {}", "--speculative-num-steps={}",
                                           "--speculative-num-st {}"]))
    words = [f"--model-path {draw(PATHS)}", "--speculative-algorithm EAGLE3", steps_spelling.format(steps),
             "--tp 2", f"--port {draw(st.integers(1024, 65000))}"]
    words = draw(st.permutations(words))
    text = draw(PREFIXES) + draw(LAUNCHERS)
    for word in words:
        text += draw(SEPARATORS) + word
    return text + draw(SUFFIXES), steps


@given(commands(), st.integers(1, 99))
@settings(max_examples=200, deadline=None)
def test_an_edit_changes_only_the_edited_value(generated, new):
    text, steps = generated
    assert flag_value(text, "--speculative-num-steps") == steps
    edited = set_flag(text, "--speculative-num-steps", new)
    assert flag_value(edited, "--speculative-num-steps") == new
    # exactly the value's characters differ: same text before and after it
    prefix = 0
    while prefix < min(len(text), len(edited)) and text[prefix] == edited[prefix]:
        prefix += 1
    suffix = 0
    while suffix < min(len(text), len(edited)) - prefix and text[-1 - suffix] == edited[-1 - suffix]:
        suffix += 1
    assert text[prefix:len(text) - suffix].strip("0123456789") == ""
    assert edited[prefix:len(edited) - suffix].strip("0123456789") == ""


@given(commands())
@settings(max_examples=100, deadline=None)
def test_removing_speculative_flags_keeps_every_other_word(generated):
    text, _ = generated
    baseline = remove_flags(text, lambda name: name.startswith("--speculative"))
    assert "speculative" not in baseline
    for kept in ("--model-path", "--tp 2", "--port"):
        assert kept in baseline
    assert baseline.count("\n") <= text.count("\n")


def _argparse_port(args: list[str], release: str) -> int:
    """What a parser built from ``release``'s table (argparse with allow_abbrev, as SGLang builds it) gives."""
    parser = argparse.ArgumentParser(add_help=False)
    table = load_table(release)
    for spec in table.specs:
        kwargs = {"dest": spec.dest}
        if spec.takes_value:
            kwargs["nargs"] = spec.nargs
        else:
            kwargs["action"] = "store_true"
        parser.add_argument(*spec.options, **kwargs)
    known, _ = parser.parse_known_args(args)
    value = getattr(known, "port", None)
    return int(value) if value is not None and str(value).isdigit() else DEFAULT_PORT


@given(st.sampled_from(["--port", "--po", "--por", "--port="]), st.integers(1024, 65000),
       st.sampled_from(FLAG_TABLE_RELEASES))
@settings(max_examples=60, deadline=None)
def test_the_launch_port_is_the_one_argparse_gives(spelling, port, release):
    args = ["--model-path", "m", f"{spelling}{port}"] if spelling.endswith("=") else ["--model-path", "m", spelling,
                                                                                     str(port)]
    text = "python -m sglang.launch_server " + shlex.join(args)
    assert launch_port(text, release) == _argparse_port(args, release) == port


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_any_text_never_raises(text):
    port = launch_port(text)
    assert isinstance(port, int) and 0 < port < 65536
    flag_value(text, "--speculative-num-steps")
    try:
        set_flag(text, "--speculative-num-steps", 3)
        remove_flags(text, lambda name: name.startswith("--speculative"))
    except CommandEditError:
        pass


def _as_the_launch_wrapper_runs_it(command: str) -> list[str]:
    """The words a POSIX shell gives the command when the launch wrapper ``eval``s it (its text read back with
    ``$(cat ...)``, which drops the trailing newlines)."""
    import subprocess

    out = subprocess.run(["sh", "-c", 'c=$(printf "%s\\n" "$1"); eval "printf \'[%s]\' $c"', "sh", command],
                         capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    return out.stdout[1:-1].split("][")


def test_the_baseline_of_a_multi_line_command_runs_without_a_dangling_backslash():
    """The depth sweep's baseline of a command whose speculative flags sit on its last lines (the way
    tools/try_local.sh and most READMEs write it) used to end in ``--port 54565 \\``: the shell passed a literal
    ``\\`` word and SGLang refused the command ("unrecognized arguments: \\"), so the baseline always failed."""
    command = ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --host 127.0.0.1 "
               "--port 54565 \\\n  --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/EAGLE3 \\\n"
               "  --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 8\n")
    baseline = remove_speculative_flags(command)
    assert baseline.rstrip("\n") == ("python3 -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct "
                                     "--host 127.0.0.1 --port 54565")
    assert _as_the_launch_wrapper_runs_it(baseline)[-2:] == ["--port", "54565"]
    middle = "python3 -m sglang.launch_server \\\n  --speculative-num-steps 3 \\\n  --port 1 \\\n  --speculative-eagle-topk 1"
    assert _as_the_launch_wrapper_runs_it(remove_speculative_flags(middle))[-2:] == ["--port", "1"]
    kept = "python3 -m sglang.launch_server --model-path 'C:\\models\\' --port 1"  # a backslash that is a value's
    assert remove_speculative_flags(kept) == kept


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["--port 1", "--speculative-num-steps 3", "--speculative-eagle-topk 1", "--tp 2"]),
                max_size=5), st.sampled_from([" ", " \\\n  ", " \\\n"]))
def test_removing_speculative_flags_never_leaves_a_backslash_word(flags, joint):
    command = joint.join(["python3 -m sglang.launch_server --model-path m", *flags])
    words = _as_the_launch_wrapper_runs_it(remove_speculative_flags(command))
    assert "\\" not in words and not any(w.startswith("--speculative") for w in words), words


def test_a_port_that_is_no_tcp_port_is_not_known_never_the_default():
    base = "python -m sglang.launch_server --model-path m"
    assert known_launch_port(base) == DEFAULT_PORT and known_launch_port(f"{base} --port=31000") == 31000
    assert known_launch_port(f"{base} --po 31000") == 31000
    for flags in ("--port 0", "--port=70000", "--port -1", "--port abc", "--port"):
        assert known_launch_port(f"{base} {flags}") is None, flags
