"""BuilderPane in a tiny App: live validation while typing, form <-> command sync, fixes, copy, version."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

from support.double import empty_log
from support.pilot import screen_text
from textual.app import App, ComposeResult
from textual.widgets import DataTable, Input, TextArea

from specdash.app.builder import BuilderPane
from specdash.app.builder.clipboard import osc52_sequence
from specdash.hosts.local import LocalHost

SEED = ("python -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct \\\n"
        "  --speculative-algorithm EAGLE3 --speculative-draft-model-path /models/eagle3-llama \\\n"
        "  --speculative-eagle-topk 1 --speculative-num-draft-tokens 16 --port 30000\n")


class PaneApp(App):
    def __init__(self, command: str = SEED, version: str | None = "0.5.9", readonly: bool = False) -> None:
        super().__init__()
        self.command_text, self.version, self.readonly = command, version, readonly
        self.changes: list[BuilderPane.CommandChanged] = []

    def compose(self) -> ComposeResult:
        yield BuilderPane(self.command_text, self.version, self.readonly)

    def on_builder_pane_command_changed(self, message: BuilderPane.CommandChanged) -> None:
        self.changes.append(message)


def diagnostic_rows(pane: BuilderPane) -> list[str]:
    table = pane.query_one("#builder-diagnostics", DataTable)
    return [str(table.get_row_at(i)[1]) for i in range(table.row_count)]


async def test_missing_steps_is_shown_then_typing_fixes_it_live():
    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        assert pane.report.has_errors
        assert diagnostic_rows(pane)[0].startswith("steps-missing")
        area = pane.query_one("#builder-command", TextArea)
        area.focus()
        area.move_cursor(area.document.end)
        await pilot.press("left")  # before the final newline
        area.insert(" --speculative-num-steps ")
        await pilot.pause()
        assert pane.report.find("steps-missing") is not None  # a value is still missing
        await pilot.press("1")  # the keystroke that completes the flag
        await pilot.pause()
        assert "--speculative-num-steps 1" in pane.command
        assert not pane.report.has_errors
        assert pane.report.effective["speculative_num_draft_tokens"] == 2
        assert diagnostic_rows(pane)[0].startswith("draft-tokens-adjusted")
        # the form followed the editor
        assert pane.query_one("#f-steps", Input).value == "1"
        # one CommandChanged per change, the last one carrying the current report
        assert app.changes and app.changes[-1].command == pane.command
        assert app.changes[-1].report is pane.report


async def test_apply_fix_key_edits_the_command():
    app = PaneApp(SEED.replace("--port 30000", "--speculative-num-steps 1 --port 30000"))
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        table = pane.query_one("#builder-diagnostics", DataTable)
        table.focus()
        table.move_cursor(row=0)
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert "--speculative-num-steps 15" in pane.command
        assert pane.report.find("draft-tokens-adjusted") is None
        assert pane.query_one("#builder-command", TextArea).text == pane.command


async def test_form_field_edits_the_command():
    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        steps = pane.query_one("#f-steps", Input)
        steps.focus()
        await pilot.press("1", "5")
        await pilot.pause()
        assert "--speculative-num-steps 15" in pane.command
        assert not pane.report.has_errors
        port = pane.query_one("#f-port", Input)
        port.focus()
        await pilot.press("ctrl+a", "ctrl+k")  # clear the field: the flag goes away
        await pilot.pause()
        assert "--port" not in pane.command


async def test_version_override_changes_the_rules():
    app = PaneApp(SEED.replace("--port 30000", "--speculative-num-steps 1"), version=None)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        assert pane.report.sglang_version == "0.5.23"
        assert pane.report.effective["speculative_num_draft_tokens"] == 2
        pane.set_sglang_version("0.4.3")
        await pilot.pause()
        assert pane.report.sglang_version == "0.4.3"
        assert pane.query_one("#f-version", Input).value == "0.4.3"
        # 0.4.3 has no EAGLE3 choice and no topk==1 adjustment
        assert pane.report.find("bad-value") is not None
        assert pane.report.effective["speculative_num_draft_tokens"] == 16


async def test_copy_writes_the_state_file(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("ctrl+o")
        await pilot.pause()
        written = list(Path(tmp_path).rglob("launch-command.sh"))
        assert written and written[0].read_text() == SEED.strip() + "\n"


def test_osc52_plain_and_tmux_wrapped():
    plain = osc52_sequence("ls -l", tmux=False)
    assert plain == "\x1b]52;c;" + base64.b64encode(b"ls -l").decode() + "\x07"
    wrapped = osc52_sequence("ls -l", tmux=True)
    assert wrapped.startswith("\x1bPtmux;\x1b\x1b]52;c;") and wrapped.endswith("\x07\x1b\\")


async def test_readonly_refuses_fixes():
    app = PaneApp(readonly=True)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        before = pane.command
        pane.query_one("#builder-diagnostics", DataTable).focus()
        await pilot.press("ctrl+f")
        await pilot.pause()
        assert pane.command == before


async def test_host_without_sglang_keeps_newest_rules():
    app = PaneApp(version=None)
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        pane.python = sys.executable  # this interpreter has no sglang
        pane.host = LocalHost()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.sglang_version is None
        assert "not importable" in str(pane.query_one("#builder-status").render())


def test_snapshot_builder_pane(snap_compare):
    command = SEED.replace("--port 30000", "--speculative-num-steps 1 --mem-frac 0.8 --disable-cuda-graph --port 30000")
    assert snap_compare(PaneApp(command, "0.5.9"), terminal_size=(160, 48))


async def test_model_config_is_read_on_the_host(tmp_path):
    import json

    model = tmp_path / "target"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["DeepseekV3ForCausalLM"]}))
    app = PaneApp(f"python -m sglang.launch_server --model-path {model} --speculative-algorithm NEXTN", "0.5.9")
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(BuilderPane)
        assert pane.report.architecture is None
        pane.host = LocalHost()
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert pane.report.architecture == "DeepseekV3ForCausalLM"
        assert pane.report.architecture_source == "config.json"
        # DeepSeek V3 carries its MTP head: the target is its own draft; 0.5.9 chooses 3/1/4
        assert pane.report.effective["speculative_draft_model_path"] == str(model)
        assert pane.report.effective["speculative_num_steps"] == 3


async def test_ctrl_a_selects_the_whole_command_and_a_paste_replaces_it():
    """A user replacing the command: ctrl+a (the help lists it), then paste; nothing of the old command is left."""
    from textual import events

    from specdash.app.keymap import binding_table

    assert binding_table()["builder.select_all"][0] == "ctrl+a"
    new = "python -m sglang.launch_server --model-path /models/Qwen3-8B --port 31000"
    app = PaneApp()
    async with app.run_test(size=(80, 24)) as pilot:
        pane = app.query_one(BuilderPane)
        area = pane.query_one("#builder-command", TextArea)
        area.focus()
        area.move_cursor(area.document.end)
        await pilot.press("ctrl+a")
        await pilot.pause()
        assert area.selected_text == SEED
        app.post_message(events.Paste(new))  # as the terminal driver delivers a paste
        await pilot.pause()
        assert area.text == new and pane.command == new
        assert "Llama" not in pane.command
        # from the diagnostics list too: ctrl+a goes to the editor with everything selected, a keystroke replaces
        pane.query_one("#builder-diagnostics", DataTable).focus()
        await pilot.press("ctrl+a", "x")
        await pilot.pause()
        assert area.text == "x"


async def test_typed_and_effective_columns_use_the_width_at_80x24(tmp_path):
    """At 80x24 the typed -> effective table spans the screen: a draft model path of 20 characters is shown
    whole in the typed column (it was cut to 9 beside empty space)."""
    from specdash.app.main import SpecdashApp

    app = SpecdashApp(LocalHost(), log_path=empty_log(tmp_path), gpu_interval_s=5)  # no server chooser in the way
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f3")
        await pilot.pause(0.3)
        app.builder_pane.set_command(SEED)
        await pilot.pause(0.3)
        eff = app.query_one("#builder-effective", DataTable)
        widths = {str(k.value): c.width for k, c in eff.columns.items()}
        assert widths["typed"] >= 20 and widths["effective"] >= 20, widths
        assert 20 + widths["typed"] + widths["effective"] + 6 <= eff.content_size.width
        row = eff.get_row("speculative_draft_model_path")
        assert str(row[1]) == "/models/eagle3-llama" and len(str(row[1])) <= widths["typed"]


async def test_a_command_set_between_compose_and_mount_is_in_the_editor_on_screen():
    # the app hands the followed server's command to a builder it has just mounted: set_command can run after the
    # editor was composed (with the old text) and before the pane is mounted; the editor must show it, not only the
    # form (a blank editor, and typing in it then wiped the command)
    followed = "python3 -m sglang.launch_server --model-path /models/followed --port 41000"

    class LateCommand(BuilderPane):
        def compose(self) -> ComposeResult:
            yield from super().compose()
            self.set_command(followed)

    class LateApp(PaneApp):
        def compose(self) -> ComposeResult:
            yield LateCommand("", self.version)

    app = LateApp()
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        pane = app.query_one(BuilderPane)
        assert pane.command == followed
        assert pane.query_one("#builder-command", TextArea).text == followed
        assert "--model-path /models/followed --port 41000" in screen_text(app)
        assert pane.query_one("#f-port", Input).value == "41000"
