"""The key footer follows focus (the log view's keys once the console is up, the GPU pane's on F5) and is not
rebuilt when a bindings signal leaves its keys, width and style as they are (Textual rebuilds every key widget
on each signal; three come at start-up with the same keys)."""

from __future__ import annotations

from pathlib import Path

from support.pilot import wait_until
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

REPO = Path(__file__).resolve().parent.parent


def footer_keys(app) -> list:
    return list(app.query_one(Footer).query(FooterKey))


def footer_text(app) -> str:
    return " ".join(f"{key.key}:{key.description}" for key in footer_keys(app))


async def test_footer_follows_focus_and_keeps_its_widgets_for_the_same_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path))
    app = SpecdashApp(LocalHost(), log_path=str(REPO / "sessions" / "demo-server.log"), gpu_interval_s=3600)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: type(app.focused).__name__ == "LogView", what="the log view focused")
        await wait_until(pilot, lambda: "slash:Filter" in footer_text(app), what="the log pane's keys")
        assert "K:Kill tagged/focused" not in footer_text(app)
        await pilot.pause(0.3)
        shown = footer_keys(app)

        app.screen.refresh_bindings()  # a signal with the same keys: the footer keeps its widgets
        await pilot.pause(0.3)
        assert len(footer_keys(app)) == len(shown)
        assert all(a is b for a, b in zip(footer_keys(app), shown, strict=True))

        await pilot.press("f5")  # the GPU pane: its keys replace the log pane's
        await wait_until(pilot, lambda: "K:Kill tagged/focused" in footer_text(app), what="the GPU pane's keys")
        assert "slash:Filter" not in footer_text(app)

        await pilot.press("f2")  # back to the log
        await wait_until(pilot, lambda: "slash:Filter" in footer_text(app), what="the log pane's keys again")

        await pilot.resize_terminal(80, 24)  # another width: rebuilt to fit it (help says the rest is there)
        await wait_until(pilot, lambda: "All keys" in footer_text(app), what="the footer fitted to 80 columns")
