"""A launch that argparse rejects with ``unrecognized arguments: ...`` is explained with every rejected word counted
and named - flags, their values, and a lone ``\\`` left by a line continuation onto nothing - from the message a
real argparse parser writes; "0 arguments" is never said."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from specdash.cli import main
from specdash.logs.explain import explain_crash
from specdash.logs.parser import LogParser


def argparse_error(argv: list[str]) -> str | None:
    """The ``error:`` line a parser built like SGLang's (argparse, ``allow_abbrev`` on, options only) writes for
    ``argv``; None when it accepts ``argv``."""
    parser = argparse.ArgumentParser(prog="launch_server.py")
    parser.add_argument("--model-path", type=str)
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--speculative-num-steps", type=int)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
        try:
            parser.parse_args(argv)
        except SystemExit:
            return stderr.getvalue().strip().splitlines()[-1]
    return None


def explained(error_line: str):
    (parsed,) = LogParser().feed_many([error_line])
    assert parsed.info["exception"] == "argparse"
    return explain_crash("argparse", parsed.info["detail"], [])


WORDS = st.one_of(st.sampled_from(["\\", "--speculative-model", "[ngram]", "--use-v2-block-manager", "3", "-x",
                                   "--tensor-parallel-size", "x y", "", "EAGLE3", "--model-path", "m"]),
                  st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=8))


@given(st.lists(WORDS, max_size=6))
@settings(max_examples=200, deadline=None)
def test_every_rejected_word_is_counted_and_named(argv):
    line = argparse_error(["--model-path", "m", *argv])
    if line is None or "unrecognized arguments:" not in line:
        return
    listed = line.split("unrecognized arguments:", 1)[1].split()
    explanation = explained(line)
    assert not re.search(r"\b0 (unrecognized|argument|flag)", explanation.title + explanation.detail)
    if listed:
        assert f"rejected {len(listed)} argument" in explanation.detail
        for word in listed:
            assert word in explanation.detail
    else:
        assert "names none" in explanation.title


def test_a_lone_backslash_is_named_with_its_cause(tmp_path, capsys):
    line = argparse_error(["--model-path", "m", "--port", "3", "\\"])
    assert line == "launch_server.py: error: unrecognized arguments: \\"
    log = tmp_path / "server.log"
    log.write_text("usage: launch_server.py [-h] [--model-path MODEL_PATH]\n" + line + "\n")
    assert main(["scan", "--json", str(log)]) == 1
    (crash,) = [f for f in json.loads(capsys.readouterr().out)["findings"] if f["kind"] == "crash"]
    assert crash["message"] == "launch failed: 1 unrecognized argument: \\"
    assert "rejected 1 argument: \\." in crash["explanation"]
    assert "the command's last line ends in a backslash" in crash["explanation"]


def test_flags_and_their_values_are_told_apart():
    explanation = explained("launch_server.py: error: unrecognized arguments: --speculative-model [ngram] --foo")
    assert explanation.title == "launch failed: 2 unrecognized flags (and 1 other argument): --speculative-model, --foo"
    assert "rejected 3 arguments: --speculative-model [ngram] --foo." in explanation.detail
    assert "Not flags: [ngram]" in explanation.detail
    assert explanation.flag == "--speculative-model"


@given(st.text(max_size=200))
@settings(max_examples=200, deadline=None)
def test_any_message_is_explained_without_a_traceback(text):
    explanation = explain_crash("argparse", "unrecognized arguments: " + text, [])
    assert explanation.title.startswith("launch failed: ")
    assert " 0 " not in explanation.title
