"""One rule, one wording: what `specdash validate` and `specdash scan` print for SGLang's topk-1 chain reset
(draft tokens > num_steps + 1 with topk 1) comes from the same text and offers the same two choices; the article
before a token count reads right ("an 8-token tree")."""

from __future__ import annotations

from pathlib import Path

import pytest

from specdash.cli import main
from specdash.text.article import indefinite_article, with_article

COMMAND = ("python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct --speculative-algorithm "
           "EAGLE3 --speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B "
           "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens {draft}")
LOG_LINE = "speculative_num_draft_tokens is adjusted to speculative_num_steps + 1 when speculative_eagle_topk == 1\n"


def validate_lines(capsys, draft: int) -> list[str]:
    main(["validate", "--sglang-version", "0.5.9", "--", COMMAND.format(draft=draft)])
    return capsys.readouterr().out.splitlines()


def override_and_fix(lines: list[str]) -> tuple[str, str]:
    at = next(i for i, line in enumerate(lines) if line.startswith("OVERRIDE draft-tokens-adjusted"))
    return lines[at], lines[at + 1].strip()


def scan_fix(tmp_path: Path, capsys) -> str:
    log = tmp_path / "server.log"
    log.write_text(LOG_LINE, encoding="utf-8")
    main(["scan", str(log)])
    lines = capsys.readouterr().out.splitlines()
    at = next(i for i, line in enumerate(lines) if "num_draft_tokens overridden" in line)
    return next(line.strip() for line in lines[at:] if line.strip().startswith("fix:"))


def test_validate_and_scan_offer_the_same_two_choices(tmp_path, capsys):
    override, fix = override_and_fix(validate_lines(capsys, 16))
    scanned = scan_fix(tmp_path, capsys)
    # before: validate "set --speculative-num-steps 15 (a chain of 15 draft steps)" and scan "set
    # --speculative-num-draft-tokens to --speculative-num-steps + 1, or raise --speculative-eagle-topk"
    assert fix == "fix: set --speculative-num-steps 15 (a chain of 15 draft steps)"
    assert override.endswith("If a 16-token tree was intended, raise --speculative-eagle-topk above 1 instead")
    assert scanned == ("fix: set --speculative-num-steps to the number of draft tokens wanted - 1 (a chain of "
                       "num_steps draft steps); if a tree of --speculative-num-draft-tokens tokens was intended, "
                       "raise --speculative-eagle-topk above 1 instead")
    # the same choice first in both, the same tree alternative in both
    assert fix.startswith("fix: set --speculative-num-steps ") and scanned.startswith("fix: set --speculative-num-steps ")
    assert "was intended, raise --speculative-eagle-topk above 1 instead" in override
    assert "was intended, raise --speculative-eagle-topk above 1 instead" in scanned


@pytest.mark.parametrize(("draft", "phrase"), [(8, "If an 8-token tree"), (11, "If an 11-token tree"),
                                               (18, "If an 18-token tree"), (16, "If a 16-token tree"),
                                               (80, "If an 80-token tree")])
def test_the_override_detail_reads_right(capsys, draft, phrase):
    override, fix = override_and_fix(validate_lines(capsys, draft))
    assert f"{phrase} was intended" in override  # before: "If a 8-token tree was intended"
    assert fix == f"fix: set --speculative-num-steps {draft - 1} (a chain of {draft - 1} draft steps)"


def test_article_over_1_to_100():
    an = {8, 11, 18, *range(80, 90)}  # eight, eleven, eighteen, eighty...: a vowel sound
    for n in range(1, 101):
        assert indefinite_article(n) == ("an" if n in an else "a"), n
    assert with_article(8) == "an 8" and with_article(16) == "a 16" and with_article(100) == "a 100"


@pytest.mark.parametrize(("n", "article"), [(0, "a"), (-8, "a"), (800, "an"), (8000, "an"), (11000, "an"),
                                            (18500, "an"), (1100, "a"), (110, "a"), (180, "a"), (8_000_000, "an")])
def test_article_beyond_100(n, article):
    assert indefinite_article(n) == article
