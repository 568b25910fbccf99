"""ctrl+r (SGLang's own dry run) in the launch builder answers where the user looks: the builder's status line is
docked at the pane's bottom, so at 80x24 (where the builder scrolls as one page) it is on screen, and at 160x48
it wraps instead of being cut at the pane's edge or pushed below it. The test double has no ``sglang.srt``: the
dry run's honest answer is that SGLang could not be imported."""

from __future__ import annotations

import pytest
from support.double import harness, host_env
from support.pilot import wait_until

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost


def rows(app) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_dry_run_answer_is_on_screen_whole(tmp_path, size):
    log = tmp_path / "server.log"
    log.write_text("")
    app = SpecdashApp(LocalHost(env=host_env(tmp_path, "fast")), log_path=str(log), gpu_interval_s=0.5)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.builder_pane is not None, what="the builder")
        # both models named: the pairing section shows too, as in the report's 160x48 picture
        app.builder_pane.set_command(harness.launch_command(harness.free_port()))
        await pilot.pause(0.3)
        await pilot.press("escape")  # out of the editor
        await pilot.press("ctrl+r")
        status = app.builder_pane.query_one("#builder-status")
        answer = "dry run could not ask SGLang on local"
        await wait_until(pilot, lambda: str(status.render()).startswith(answer), timeout_s=60, what="the answer",
                         state=lambda: str(status.render()))
        await pilot.pause(0.3)
        pane = app.builder_pane.region
        region = status.region
        # inside the builder's border and on the screen, every row of it
        assert region.height >= 2 and pane.y < region.y and region.bottom < pane.bottom, (region, pane)
        shown = " ".join(line[region.x:region.right].strip() for line in rows(app)[region.y:region.bottom])
        text = " ".join(str(status.render()).split())
        assert text.endswith("nothing is known about the command") and " ".join(shown.split()) == text, (text, shown)
