"""Hints that tell the user which key to press name the key actually bound: with config.yaml's keymap remapping
``b`` to ``B``, the bench pane says ``B benchmarks it``, never ``b``."""

from __future__ import annotations

from support.double import harness, host_env
from support.pilot import screen_text, wait_until

from specdash.app.keymap import bound_key
from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

KEYMAP = {"bench.run": "B", "bench.sweep": "D", "builder.apply_fix": "ctrl+g", "builder.dry_run": "ctrl+t"}


def _flat(app) -> str:
    return " ".join(screen_text(app).split())


async def test_pane_hints_name_the_remapped_keys(tmp_path):
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 10:00:00] The server is fired up and ready to roll!\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=0.3,
                      keymap=KEYMAP)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("f4")
        hint = "no server yet - B benchmarks it once one is running; D runs the depth sweep"
        await wait_until(pilot, lambda: hint in _flat(app), what="the bench pane's hint", state=lambda: _flat(app))
        assert "b benchmarks" not in _flat(app) and "S runs" not in _flat(app)
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.builder_pane is not None, what="the builder")
        app.builder_pane.set_command(harness.launch_command(harness.free_port()))
        await wait_until(pilot, lambda: "ctrl+g fix" in _flat(app), what="the builder's status line",
                         state=lambda: _flat(app))
        assert "ctrl+t dry run" in _flat(app) and "ctrl+f fix" not in _flat(app)


def test_bound_key_names_the_first_key_as_a_hint_writes_it():
    assert bound_key("bench.run") == "b" and bound_key("bench.run", {"bench.run": "B,ctrl+b"}) == "B"
    assert bound_key("app.help") == "F1" and bound_key("log.filter") == "/" and bound_key("bench.cancel") == "esc"


DIALOG_KEYMAP = {"confirm.yes": "j", "confirm.no": "k", "hostkey.trust": "ctrl+t", "hostkey.cancel": "c",
                 "gpus.kill_confirm": "Y", "gpus.kill_cancel": "q"}


async def test_dialog_buttons_name_the_remapped_keys_and_those_keys_answer(tmp_path):
    """The stop/restart, host-key and kill dialogs' buttons said ``(y)``, ``(n)``, ``(t)``, ``(esc)`` whatever the
    keymap bound: with ``confirm.yes: j`` the button said ``Stop (y)`` and y did nothing."""
    from textual.widgets import Button

    from specdash.app.gpus.kill_modal import KillConfirmScreen
    from specdash.app.modals.confirm import ConfirmScreen
    from specdash.app.modals.host_key import HostKeyScreen

    log = tmp_path / "server.log"
    log.write_text("line\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=5,
                      keymap=DIALOG_KEYMAP)
    answers: list[object] = []
    async with app.run_test(size=(160, 48)) as pilot:
        for screen, labels, key, answer in (
                (ConfirmScreen("Stop the server?", "group 4242", "Stop"), ["Stop (j)", "Cancel (k)"], "j", True),
                (ConfirmScreen("Stop the server?", "group 4242", "Stop"), ["Stop (j)", "Cancel (k)"], "k", False),
                (HostKeyScreen("gpu-box", 22, "ED25519", "SHA256:abc", "/tmp/kh"), ["Trust (ctrl+t)", "Cancel (c)"],
                 "c", False),
                (KillConfirmScreen([], [], 10.0), ["Kill (Y)", "Cancel (q)"], "q", False)):
            app.push_screen(screen, answers.append)
            await wait_until(pilot, lambda s=screen: app.screen is s and bool(s.query(Button)), what="the dialog")
            await pilot.pause(0.2)
            assert [str(b.label) for b in app.screen.query(Button)] == labels
            await pilot.press(key)
            await wait_until(pilot, lambda s=screen: app.screen is not s, what="the dialog answered",
                             state=lambda: screen_text(app))
            assert answers[-1] is answer, (labels, answers)


async def test_help_names_a_remapped_key_as_the_footer_does(tmp_path):
    """``log.wrap: full_stop`` showed ``full_stop`` in the help screen while the footer said ``.``."""
    import re

    log = tmp_path / "server.log"
    log.write_text("line\n")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=5,
                      keymap={"log.wrap": "full_stop", "log.copy": "exclamation_mark", "help.close": "c",
                              "app.help": "f10,question_mark"})
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: ". Wrap" in screen_text(app).splitlines()[-1], what="the footer",
                         state=lambda: screen_text(app))
        await pilot.press("f10")
        await wait_until(pilot, lambda: bool(app.screen.query("#help-body")), what="the help screen")
        await pilot.press("f10")  # the key that opens help closes it (it did nothing)
        await wait_until(pilot, lambda: not app.screen.query("#help-body"), what="help closed by its own key")
        await pilot.press("f10")
        await wait_until(pilot, lambda: bool(app.screen.query("#help-body")), what="the help screen")
        body = str(app.screen.query_one("#help-body").render())
        assert re.search(r"^\s+\.\s+Wrap$", body, re.M) and re.search(r"^\s+!\s+Copy lines$", body, re.M), body
        assert "full_stop" not in body and "exclamation_mark" not in body
        assert "specdash keys  (c closes)" in body  # it said "esc closes", and esc did not close it
        await pilot.press("c")
        await wait_until(pilot, lambda: not app.screen.query("#help-body"), what="help closed")


async def test_the_log_status_line_names_the_remapped_keys(tmp_path):
    """The log's status line said ``wrapped (Z)``, ``(F shows)`` and ``(f: follow)`` whatever the keymap bound."""
    log = tmp_path / "server.log"
    log.write_text("".join(f"[2026-01-01 10:00:00] line {i}\n" for i in range(300)))
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=5,
                      keymap={"log.wrap": "full_stop", "log.findings": "ctrl+g", "log.follow": "ctrl+l"})

    def status() -> str:
        return str(app.log_pane.query_one("#log-status").render())

    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: "line 299" in screen_text(app), what="the log", state=lambda: screen_text(app))
        app.set_focus(app.log_pane.view)
        await pilot.press("full_stop", "ctrl+g")
        await wait_until(pilot, lambda: "wrapped (.)" in status() and "(ctrl+g shows)" in status(),
                         what="the status line", state=status)
        assert "(Z)" not in status() and "F shows" not in status()
        await pilot.press("up", "up")  # leaves follow mode; new lines then say how to follow again
        with log.open("a") as out:
            out.write("[2026-01-01 10:00:01] one more line\n")
        await wait_until(pilot, lambda: "(ctrl+l: follow)" in status(), what="the new lines hint", state=status)
