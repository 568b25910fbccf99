"""``--readonly``: the keys that change the server (l L x r, b S, K) are not advertised in the footer or the help
screen, and pressing one says why nothing happens."""

from __future__ import annotations

import re

import pytest
from support.double import host_env
from support.pilot import wait_until
from textual.widgets._footer import FooterKey

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

MUTATING_KEYS = {"l", "L", "x", "r", "b", "S", "K"}


async def _footer_keys_in_every_pane(app, pilot) -> set[str]:
    seen: set[str] = set()
    for key in ("f2", "f3", "f4", "f5"):
        await pilot.press(key)
        await pilot.pause(0.2)
        seen |= {footer_key.key for footer_key in app.query(FooterKey)}
    return seen


async def _console(tmp_path, readonly: bool):
    log = tmp_path / "server.log"
    log.write_text("[2026-01-01 10:00:00] The server is fired up and ready to roll!\n")
    return SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), readonly=readonly,
                       gpu_interval_s=0.3)


async def test_readonly_footer_and_help_do_not_advertise_mutating_keys(tmp_path):
    app = await _console(tmp_path, readonly=True)
    async with app.run_test(size=(160, 48)) as pilot:
        shown = await _footer_keys_in_every_pane(app, pilot)
        assert shown and not (shown & MUTATING_KEYS), shown & MUTATING_KEYS
        await pilot.press("f2")
        await pilot.press("f1")
        await wait_until(pilot, lambda: bool(app.screen.query("#help-body")), what="the help screen",
                         state=lambda: type(app.screen).__name__)
        body = str(app.screen.query_one("#help-body").render())
        for description in ("Launch", "Stop", "Restart", "Benchmark", "Depth sweep", "Kill tagged"):
            assert not re.search(rf"^\s+\S+\s+{description}", body, re.M), description
        assert re.search(r"^\s+/\s+Filter", body, re.M)  # the help still lists the other keys
        await pilot.press("escape")
        await pilot.press("l")
        await wait_until(pilot, lambda: any("Read-only session: launching a server is disabled" in str(n.message)
                                            for n in app._notifications),
                         what="the read-only notice", state=lambda: [str(n.message) for n in app._notifications])
        assert app.run_handle is None


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_readonly_header_keeps_its_marker_before_a_long_server_detail(tmp_path, size):
    app = await _console(tmp_path, readonly=True)
    async with app.run_test(size=size) as pilot:
        def header() -> str:
            return [strip.text for strip in app.screen._compositor.render_strips()][0].rstrip()

        # the log's server is gone: the header says so with a long detail (what the log last said)
        await wait_until(pilot, lambda: "server: unknown (" in header(), what="the header's server detail",
                         state=header)
        assert len(app.status_bar.server_detail) > 40, app.status_bar.server_detail
        # the marker comes before the server, so the long detail is what gets cut, never the marker
        assert re.search(r"● connected +│ +read-only +│ +server: unknown \(no running serve", header()), header()
        if size == (80, 24):
            assert header().endswith("…)"), header()


async def test_writable_console_footer_shows_the_lifecycle_keys(tmp_path):
    app = await _console(tmp_path, readonly=False)
    async with app.run_test(size=(160, 48)) as pilot:
        shown = await _footer_keys_in_every_pane(app, pilot)
        assert {"l", "x", "r", "b", "S", "K"} <= shown


async def test_f12_saves_a_screenshot_under_the_state_dir_and_shows_its_path(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/Downloads: Textual's default folder is absent
    app = await _console(tmp_path, readonly=True)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("f12")
        shot_dir = tmp_path / "state" / "screenshots"
        await wait_until(pilot, lambda: any(p.stat().st_size for p in shot_dir.glob("*.svg")), what="the screenshot")
        shots = list(shot_dir.glob("*.svg"))
        assert len(shots) == 1 and "specdash" in shots[0].read_text()
        assert (shots[0].stat().st_mode & 0o777) == 0o600
        assert any(f"Screenshot saved: {shots[0]}" == str(n.message) for n in app._notifications)


def test_a_remapped_punctuation_key_is_refused_in_one_line():
    """config.yaml writes a punctuation key as typed (``gpus.kill: "!"``); Textual names it
    ``exclamation_mark``: the read-only refusal used to miss it (the key did nothing, silently)."""
    from specdash.app.readonly_keys import refusal

    assert refusal("exclamation_mark", {"gpus.kill": "!"}) == "Read-only session: killing is disabled."
    assert refusal("exclamation_mark", {"gpus.kill": "exclamation_mark"}) == "Read-only session: killing is disabled."
    assert refusal("K", {"gpus.kill": "!"}) is None
