"""A version newer than every release the rules were checked against is said so (text, --json, launch builder);
a launch command without --model-path is an error (SGLang's server_args declares it ``required=True``: argparse
exits 2 before anything starts)."""

from __future__ import annotations

import json

from textual.app import App, ComposeResult
from textual.widgets import Static

from specdash.app.builder import BuilderPane
from specdash.cli import main
from specdash.sglang.versions import CURRENT_RELEASE

COMMAND = ["python", "-m", "sglang.launch_server", "--model-path", "/m/t", "--speculative-algorithm", "EAGLE",
           "--speculative-draft-model-path", "/m/d", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
           "--speculative-num-draft-tokens", "4"]


def test_newer_version_gets_a_notice_naming_the_newest_checked_release(capsys):
    assert main(["validate", "--sglang-version", "9.9", "--"] + COMMAND) == 0  # a notice is not an error
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("SGLang 9.9 (rules of profile 0.5.16")
    notice = lines[1]
    assert notice.startswith("notice: ") and "9.9 is newer than" in notice and CURRENT_RELEASE in notice


def test_known_versions_get_no_notice(capsys):
    for version in (CURRENT_RELEASE, "0.5.9", f"{CURRENT_RELEASE}.post1"):  # a post release is the same release
        assert main(["validate", "--sglang-version", version, "--"] + COMMAND) == 0
        assert "newer than" not in capsys.readouterr().out, version
    assert main(["validate", "--"] + COMMAND) == 0  # no version: the newest known rules, nothing to say
    assert "newer than" not in capsys.readouterr().out


def test_json_carries_the_notice_and_the_newest_known_release(capsys):
    assert main(["validate", "--json", "--sglang-version", "0.6.0rc1", "--"] + COMMAND) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["newest_known_release"] == CURRENT_RELEASE
    assert "0.6.0rc1 is newer than" in data["version_notice"] and CURRENT_RELEASE in data["version_notice"]
    assert main(["validate", "--json", "--sglang-version", "0.5.9", "--"] + COMMAND) == 0
    assert json.loads(capsys.readouterr().out)["version_notice"] is None


def test_a_version_that_does_not_parse_is_still_a_usage_error(capsys):
    assert main(["validate", "--sglang-version", "nine", "--"] + COMMAND) == 2
    err = capsys.readouterr().err
    assert "not an SGLang version" in err and len(err.strip().splitlines()) == 1


def test_missing_model_path_is_an_error_and_the_table_says_missing(capsys):
    without = [w for w in COMMAND if w not in ("--model-path", "/m/t")]
    assert main(["validate", "--"] + without) == 1
    out = capsys.readouterr().out
    error = next(line for line in out.splitlines() if line.startswith("ERROR"))
    assert "required-flag-missing" in error and "--model-path" in error
    row = next(line for line in out.splitlines() if line.strip().startswith("model_path"))
    assert "missing" in row and "auto" not in row
    assert main(["validate", "--json", "--"] + without) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["diagnostics"][0]["severity"] == "error"
    assert data["diagnostics"][0]["code"] == "required-flag-missing"


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield BuilderPane(" ".join(COMMAND), "0.5.9")


async def test_builder_shows_the_notice_while_a_newer_version_is_chosen():
    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        notice = pane.query_one("#builder-version-notice", Static)
        assert not notice.display and "newer than" not in str(pane.border_title)
        pane.set_sglang_version("1.0")
        await pilot.pause()
        assert notice.display
        assert "1.0 is newer than" in str(notice.render()) and CURRENT_RELEASE in str(notice.render())
        assert "SGLang 1.0" in str(pane.border_title) and f"newer than {CURRENT_RELEASE}" in str(pane.border_title)
        pane.set_sglang_version("0.5.9")
        await pilot.pause()
        assert not notice.display and "newer than" not in str(pane.border_title)


def test_without_a_release_the_header_says_it_is_assumed_as_the_known_issue_lines_do(capsys):
    """No --sglang-version: the rules are the newest known release's, and the first line says that release is an
    assumption, not the host's; the known-issue lines below say "the release is not known here" (no contradiction)."""
    main(["validate", "--"] + COMMAND + ["--speculative-algorithm", "EAGLE3"])
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("SGLang release not known (pass --sglang-version or --host): rules of the newest known, ")
    assert "the release is not known here" in out
    main(["validate", "--sglang-version", "0.5.9", "--"] + COMMAND)
    assert capsys.readouterr().out.splitlines()[0].startswith("SGLang 0.5.9 (rules of profile ")


def test_unknown_flag_names_the_release_given_not_only_the_flag_table_read_for_it(capsys):
    """0.5.0rc0 is read with an older flag table: the error names the user's release (and the table), never a
    release the header does not show."""
    typo = ["python", "-m", "sglang.launch_server", "--model-path", "/m/t", "--speculative-eagle-top-k", "1"]
    main(["validate", "--sglang-version", "0.5.0rc0", "--"] + typo)
    out = capsys.readouterr().out
    assert out.startswith("SGLang 0.5.0rc0 ")
    assert "SGLang 0.5.0rc0 (flag table 0.4.10) has no --speculative-eagle-top-k" in out
    main(["validate", "--sglang-version", "0.5.1", "--"] + typo)
    assert "SGLang 0.5.1 has no --speculative-eagle-top-k" in capsys.readouterr().out


def test_replay_summary_says_the_release_was_not_known_instead_of_a_question_mark():
    from specdash.session.events import HeaderEvent
    from specdash.session.reader import SessionLog
    from specdash.session.summary import summary_lines

    def first(version):
        header = HeaderEvent(specdash_version="0.1.0", host="local", sglang_version=version, started_at="2026-12-01")
        return summary_lines(SessionLog(path="s.yaml", header=header, events=[], problems=[]))[1]

    assert first(None) == "recorded: 2026-12-01 on local, SGLang release not known at the start, specdash 0.1.0"
    assert first("0.5.1") == "recorded: 2026-12-01 on local, SGLang 0.5.1, specdash 0.1.0"
