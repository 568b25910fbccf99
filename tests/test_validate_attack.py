"""Launch scripts as people paste them: unquoted ``$VAR`` expansions are split into words as the shell does."""

from __future__ import annotations

import io
import sys

import pytest

from specdash.cli import main
from specdash.sglang.command import parse_command

LAUNCH = ("python3 -m sglang.launch_server --model-path x --speculative-algorithm EAGLE "
          "--speculative-draft-model-path y --speculative-num-steps 3 --speculative-eagle-topk 1 "
          "--speculative-num-draft-tokens 4")


def validate(script: str, capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    code = main(["validate", "-"])
    return code, capsys.readouterr().out


@pytest.mark.parametrize("setting", ['EXTRA=\n', "EXTRA=''\n", ""])
def test_empty_unquoted_expansion_is_no_argument(setting, capsys, monkeypatch):
    script = setting + LAUNCH + (" $EXTRA\n" if setting else " ${EXTRA:-}\n")
    code, out = validate(script, capsys, monkeypatch)
    assert "stray-argument" not in out and "unrecognized arguments" not in out
    assert code == 0


def test_unquoted_expansion_with_several_flags_is_split(capsys, monkeypatch):
    code, out = validate('EXTRA="--tp-size 2 --port 30000"\n' + LAUNCH + " $EXTRA\n", capsys, monkeypatch)
    assert code == 0 and "stray-argument" not in out
    assert [line.split() for line in out.splitlines() if line.strip().startswith("tp_size")] == [
        ["tp_size", "2", "(typed)"]]


def test_quoted_expansion_stays_one_word():
    command = parse_command('EXTRA="--tp-size 2"\n' + LAUNCH + ' "$EXTRA"\n')
    assert [w.text for w in command.args][-1] == "--tp-size 2"


def test_dropped_last_word_keeps_the_broken_continuation():
    command = parse_command("EXTRA=\n" + LAUNCH + " $EXTRA\n  --tp-size 2\n")
    assert [w.text for w in command.lost_args] == ["--tp-size", "2"]


def test_default_stated_as_fact_is_not_certain_when_extra_args_are_unresolved(capsys, monkeypatch):
    code, out = validate(LAUNCH + " $EXTRA\n", capsys, monkeypatch)
    line = next(x for x in out.splitlines() if "max-running-requests-default" in x)
    assert "not certain ($EXTRA may set --max-running-requests); if it does not: max_running_requests = 48" in line
    assert code == 0


def test_default_stated_when_the_whole_command_is_shown(capsys, monkeypatch):
    code, out = validate(LAUNCH + "\n", capsys, monkeypatch)
    line = next(x for x in out.splitlines() if "max-running-requests-default" in x)
    assert "not certain" not in line and "max_running_requests = 48" in line
