"""The command palette (ctrl+p) offers every pane's key actions, shows the configured key, runs the same action
as the key, and leaves out the mutating actions in a read-only session."""

from __future__ import annotations

from support.double import host_env
from support.pilot import wait_until
from textual.command import CommandPalette

from specdash.app.main import SpecdashApp
from specdash.app.palette import palette_entries
from specdash.hosts.local import LocalHost


def _console(tmp_path, *, readonly: bool = False, keymap: dict[str, str] | None = None) -> SpecdashApp:
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 10:00:00] The server is fired up and ready to roll!\n"
                   "[2026-01-01 10:00:01] WARNING some warning\n")
    return SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), readonly=readonly,
                       gpu_interval_s=0.3, keymap=keymap)


async def _palette_titles(app, pilot) -> list[tuple[str, str]]:
    return [(entry.title, entry.key) for entry in palette_entries(app)]


async def test_every_pane_action_is_in_the_palette_with_its_key(tmp_path):
    app = _console(tmp_path, keymap={"log.findings": "ctrl+f"})
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        entries = dict(await _palette_titles(app, pilot))
        sections = {title.split(":")[0] for title in entries}
        assert {"Console", "Log", "Builder", "Benchmarks", "GPUs"} <= sections, sections
        assert entries["Log: Filter"] == "slash"
        assert entries["Log: Findings"] == "ctrl+f"  # the remapped key, not the default F
        assert "GPUs: Kill tagged/focused" in entries
        assert any(title.startswith("Console: ") and "Restart" in title for title in entries), entries
        assert any(title.startswith("Benchmarks: ") for title in entries)


async def test_readonly_palette_leaves_out_mutating_actions(tmp_path):
    app = _console(tmp_path, readonly=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        titles = [title for title, _ in await _palette_titles(app, pilot)]
        assert titles
        actions = [title.split(": ", 1)[1].lower() for title in titles]
        for word in ("kill", "launch", "restart", "stop", "benchmark", "sweep"):
            assert not any(word in action for action in actions), (word, titles)
        assert "Log: Filter" in titles


async def test_choosing_an_entry_runs_the_key_action(tmp_path):
    app = _console(tmp_path)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.3)
        await pilot.press("f3")  # away from the log: the entry must bring the log pane forward
        await pilot.pause(0.2)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette",
                         state=lambda: type(app.screen).__name__)
        await pilot.press(*"log: filter")
        from textual.command import CommandList
        from textual.widgets import Input, TabbedContent

        commands = app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count > 0 and commands.highlighted is not None
                         and "Filter" in str(commands.get_option_at_index(commands.highlighted).prompt),
                         what="'Log: Filter' offered", state=lambda: commands.option_count)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.focused, Input), what="the filter input focused",
                         state=lambda: app.focused)
        assert app.query_one(TabbedContent).active == "log"
        focused = app.focused
        assert isinstance(focused, Input), focused  # the log filter's input, as "/" opens it


async def test_palette_shows_keys_as_the_footer_does(tmp_path):
    """Each entry's key reads as the footer shows keys (``f1 or ?``, ``/``, ``^f``), never Textual's raw names."""
    app = _console(tmp_path, keymap={"log.findings": "ctrl+f"})
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(0.2)
        await pilot.press("ctrl+p")
        await wait_until(pilot, lambda: isinstance(app.screen, CommandPalette), what="the palette",
                         state=lambda: type(app.screen).__name__)
        from textual.command import CommandList

        commands = app.screen.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count > 10, what="the palette's entries",
                         state=lambda: commands.option_count)
        shown = [str(commands.get_option_at_index(i).prompt) for i in range(commands.option_count)]
        text = "\n".join(shown)
        help_entry = next(p for p in shown if "Console: Help" in p)
        assert "key: f1 or ?" in help_entry, help_entry
        assert "key: /" in next(p for p in shown if "Log: Filter" in p)
        assert "key: ^f" in next(p for p in shown if "Log: Findings" in p)
        for raw in ("question_mark", "slash", "ctrl+", ",", "escape", "bracket"):
            for prompt in shown:
                assert raw not in prompt.split("key: ", 1)[-1], (raw, prompt)
        ours = [p for p in shown if p.split(":")[0] in ("Console", "Log", "Builder", "Benchmarks", "GPUs")]
        assert len(ours) > 20 and all("\nkey: " in p for p in ours), text
