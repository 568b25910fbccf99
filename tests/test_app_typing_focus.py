"""Focus owns keys: a launch command typed into any text-entry or selection widget of any pane runs no action.

The typed text holds every single-letter key the console binds (``l L x r b S K q`` and the log keys): before the
rule, typing into the builder's algorithm dropdown launched the server and ``x``/``r`` stopped/restarted it.
"""

from __future__ import annotations

from support.double import harness, host_env
from support.pilot import wait_until
from textual import events
from textual.keys import _character_to_key
from textual.widgets import Input, Select, TextArea

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

#: a launch command's words holding every printable key the console binds: l L x r b S K q n w e f y p g ? /
TYPED = "Launch_server --model /m/Sxr-bKq --log-level fwy? pg"


async def _burst(pilot, text: str) -> None:
    """Type ``text`` as a terminal delivers a fast typist's (or an un-bracketed paste's) keys: one key event per
    character, posted back to back, then let the app handle them."""
    for character in text:
        key = character if character.isalnum() else _character_to_key(character)
        pilot.app.post_message(events.Key(key, character))
    await pilot.pause()
    await pilot.pause(0.1)  # a worker an action started (a launch, a benchmark) gets to report


def _toasts(app) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _type_into(pilot, widget) -> None:
    widget.focus()
    await wait_until(pilot, lambda: widget.has_focus or (isinstance(widget, Select) and widget.has_focus_within),
                     what=f"focus on {widget!r}", state=lambda: pilot.app.focused)
    await _burst(pilot, TYPED)


def _nothing_ran(app, before: list[str], where: str) -> None:
    assert app.is_running and app.return_code is None, f"{where}: the app quit"
    assert app.run_handle is None, f"{where}: a server was launched"
    assert _toasts(app) == before, f"{where}: an action answered: {_toasts(app)[len(before):]}"
    bench = app.bench_pane
    if bench is not None:
        assert not bench.results, f"{where}: a benchmark ran"


async def test_typing_in_every_input_of_every_pane_runs_no_action(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    port = harness.free_port()
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 10:00:00] server_args=ServerArgs(model_path='/m')\n")
    app = SpecdashApp(LocalHost(env=env), log_path=str(log), gpu_interval_s=0.3)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.builder_pane is not None, what="builder")
        builder = app.builder_pane
        builder.set_command(harness.launch_command(port))  # a valid command: l would really launch it
        await pilot.pause(0.3)
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.bench_pane is not None, what="bench pane")
        await pilot.press("f2")
        await pilot.pause(0.2)
        before = _toasts(app)
        typed_somewhere = 0

        # the log pane's filter box
        await pilot.press("slash")
        box = app.log_pane.query_one("#log-filter", Input)
        await wait_until(pilot, lambda: box.has_focus, what="filter box focused")
        await _burst(pilot, TYPED)
        assert box.value == TYPED
        _nothing_ran(app, before, "log filter")
        box.value = ""
        await pilot.press("escape")
        typed_somewhere += 1

        # the builder: the command editor and every form field (the algorithm dropdown included)
        await pilot.press("f3")
        await pilot.pause(0.2)
        editor = builder.query_one("#builder-command", TextArea)
        editor.text = ""
        await _type_into(pilot, editor)
        assert editor.text == TYPED
        _nothing_ran(app, before, "command editor")
        typed_somewhere += 1
        builder.set_command(harness.launch_command(port))
        await pilot.pause(0.2)
        for widget in builder.query("#builder-form Input, #builder-form Select"):
            if isinstance(widget, Input):
                widget.value = ""
            await _type_into(pilot, widget)
            if isinstance(widget, Input):
                assert widget.value == TYPED, widget.id
            await pilot.press("escape")  # closes an open dropdown list; leaves the editor field
            _nothing_ran(app, before, f"builder field {widget.id}")
            builder.set_command(harness.launch_command(port))
            await pilot.pause(0.1)
            typed_somewhere += 1

        # the bench pane's selectors
        await pilot.press("f4")
        await pilot.pause(0.2)
        for select in app.bench_pane.query(Select):
            await _type_into(pilot, select)
            await pilot.press("escape")
            _nothing_ran(app, before, f"bench {select.id}")
            typed_somewhere += 1
        assert typed_somewhere >= 13  # filter, editor, 9 form fields, 2 bench selectors

        _nothing_ran(app, before, "all panes")
        # the keys still work once focus leaves the widgets: l launches the builder's command
        app.set_focus(None)
        await pilot.press("l")
        await wait_until(pilot, lambda: app.run_handle is not None, what="launch with l outside the inputs")
        started_groups.append(app.run_handle.pgid)

