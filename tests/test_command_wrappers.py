"""A launch command pasted inside the wrappers users run it with: ``docker run`` / ``docker compose run`` /
``docker exec ... bash -c "..."``, ``kubectl exec POD -- ...``, ``oc exec``, a YAML ``command:`` line. The
command model (:func:`specdash.sglang.command.parse_command`) finds the same flags as for the bare command, at
offsets of the pasted text (fixes edit it in place)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from specdash.sglang.command import parse_command
from specdash.sglang.validate import validate_command

FLAGS = ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--speculative-algorithm", "EAGLE3",
         "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
LAUNCH = "python3 -m sglang.launch_server " + " ".join(FLAGS)

WRAPPERS = [
    "docker run --gpus all -p 30000:30000 --ipc=host lmsysorg/sglang:latest {cmd}",
    "docker compose run --rm sglang {cmd}",
    "docker-compose run sglang {cmd}",
    "kubectl exec -it pod/sglang-0 -c server -- {cmd}",
    "oc exec sglang-0 -- {cmd}",
    "docker exec -it sglang bash -c \"{cmd}\"",
    "docker exec -it sglang bash -lc '{cmd}'",
    "kubectl exec -it sglang-0 -- sh -c 'cd /workspace && {cmd}'",
    "bash -c '{cmd} 2>&1 | tee server.log'",
    "    command: {cmd}",
    "  - command: {cmd}",
]


def assert_found_in_place(text: str) -> None:
    cmd = parse_command(text)
    assert cmd.found and cmd.engine == "sglang", text
    assert cmd.launcher.endswith("sglang.launch_server")
    assert [w.text for w in cmd.args] == FLAGS
    for word in cmd.args:  # offsets of the pasted text: a fix edits the user's text in place
        assert text[word.start:word.end] == word.raw
    assert cmd.text == text


def test_every_wrapper_gives_the_bare_commands_flags_in_place():
    for wrapper in WRAPPERS:
        assert_found_in_place(wrapper.format(cmd=LAUNCH))


def test_a_fix_inside_bash_c_edits_the_pasted_text():
    text = "docker exec -it c bash -c \"python3 -m sglang.launch_server --model-path m --speculative-algorithm " \
           "EAGLE3 --speculative-num-steps 3\""
    report = validate_command(text, "0.5.9")
    diag = report.find("topk-missing")
    assert diag is not None and diag.fix is not None
    fixed = diag.fix.apply(text)
    assert fixed.startswith("docker exec -it c bash -c \"python3 -m sglang.launch_server --model-path m")
    assert fixed.endswith("\"") and "--speculative-eagle-topk 1" in fixed
    assert validate_command(fixed, "0.5.9").find("topk-missing") is None


def test_scripts_whose_characters_move_are_not_read():
    # inside double quotes a backslash or $ changes what the shell runs: the words would not be where they are
    assert not parse_command('bash -c "python3 -m sglang.launch_server --model-path \\"$M\\""').found
    assert not parse_command("bash -c 'python3 -m sglang.launch_server --model-path m'\"x\"").found


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(WRAPPERS), st.sampled_from(["", "export HF_TOKEN=x\n", "# launch\n", "cd /w\n"]),
       st.sampled_from(["", " > log 2>&1 &", "\necho done"]))
def test_wrapped_commands_with_script_lines_around(wrapper, before, after):
    text = before + wrapper.format(cmd=LAUNCH) + after
    cmd = parse_command(text)
    assert cmd.found and [w.text for w in cmd.args][:len(FLAGS)] == FLAGS
    for word in cmd.args:
        assert text[word.start:word.end] == word.raw


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["bash", "sh", "-c", "-lc", "'", '"', "\\", "$X", "kubectl", "exec", "--",
                                 "docker", "command:", "python3", "-m", "sglang.launch_server", "--tp", "2", "\n",
                                 ";", "&&", "|", "x"]), max_size=30))
def test_any_wrapper_soup_never_raises(words):
    text = " ".join(words)
    cmd = parse_command(text)
    for word in cmd.args:
        assert 0 <= word.start <= word.end <= len(text)
    validate_command(text, "0.5.9")
