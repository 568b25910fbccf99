"""``specdash validate FILE``: a single argument naming a file is read as ``validate - < FILE`` reads it; a path
that cannot be read is one clear line (exit 2), never flag diagnostics about the file name."""

from __future__ import annotations

import argparse
import io
import json
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from specdash.cli import UsageError, main
from specdash.commands.validate import _command_text

SCRIPT = ("#!/bin/bash\nexport CUDA_VISIBLE_DEVICES=0\npython3 -m sglang.launch_server \\\n"
          "  --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm EAGLE3 \\\n"
          "  --speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B \\\n"
          "  --speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4\n")


def test_a_file_argument_is_read_like_stdin(tmp_path, capsys, monkeypatch):
    path = tmp_path / "launch.sh"
    path.write_text(SCRIPT)
    assert main(["validate", "--sglang-version", "0.5.9", "--json", str(path)]) == 0
    from_file = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(sys, "stdin", io.StringIO(SCRIPT))
    assert main(["validate", "--sglang-version", "0.5.9", "--json", "-"]) == 0
    from_stdin = json.loads(capsys.readouterr().out)
    assert from_file.pop("notes") == [f"launch command read from the file {path}"]
    assert from_file == from_stdin
    assert from_file["effective"]["speculative_num_steps"] == 3
    assert main(["validate", "--sglang-version", "0.5.9", "--", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == f"note: launch command read from the file {path}"
    assert "no-launch-command" not in out


@pytest.mark.parametrize("name, message", [
    ("missing.sh", "missing.sh: no such file; give the file of a launch command (specdash validate FILE, or "
                   "specdash validate - < FILE) or the command itself after --"),
    ("sub/dir/cmd", "no such file"),
    (".", "is a directory, not a file holding a launch command"),
])
def test_a_path_that_cannot_be_read_is_one_line_exit_2(tmp_path, capsys, monkeypatch, name, message):
    monkeypatch.chdir(tmp_path)
    assert main(["validate", name]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and len(captured.err.splitlines()) == 1 and message in captured.err


def test_binary_and_empty_files_are_refused(tmp_path, capsys):
    binary, empty = tmp_path / "a.out", tmp_path / "empty.txt"
    binary.write_bytes(b"\x7fELF\x00\x01\x02--model-path")
    empty.write_text("  \n")
    assert main(["validate", str(binary)]) == 2
    assert "is a binary file, not a launch command" in capsys.readouterr().err
    assert main(["validate", str(empty)]) == 2
    assert "is empty: no launch command in it" in capsys.readouterr().err
    assert main(["validate", "/dev/null"]) == 2  # never read: a device could block
    assert "/dev/null is not a regular file" in capsys.readouterr().err


def test_a_quoted_command_and_bare_flags_are_still_commands(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "--tp-size").write_text("not read")  # a flag is never taken for a file name
    args = argparse.Namespace(launch=["--tp-size"])
    assert _command_text(args) == "--tp-size"
    command = "python -m sglang.launch_server --model-path /m/t"
    assert _command_text(argparse.Namespace(launch=["--", command])) == command


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), min_size=1, max_size=40))
def test_any_single_argument_is_a_command_a_file_or_one_usage_line(tmp_path, word):
    args = argparse.Namespace(launch=[word])
    try:
        text = _command_text(args)
    except UsageError as exc:
        assert "\n" not in str(exc).strip() or "\n" in word
        return
    assert text == word or getattr(args, "read_from", None) == word
