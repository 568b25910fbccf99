"""Start-up with no SGLang server on the host: the log pane's sentence that says so (and how to follow a file)
is whole on screen at 160x48 (beside the findings panel) and at 80x24, never cut at the view's edge."""

from __future__ import annotations

import os
import stat

import pytest
from support.double import host_env
from support.pilot import screen_text, wait_until

from specdash.app.main import SpecdashApp
from specdash.hosts.local import LocalHost

SENTENCE = "no SGLang server (sglang.launch_server / sglang serve) runs on this host; pass --log PATH"


def _env_without_servers(tmp_path) -> dict[str, str]:
    """The double's environment with a ``ps`` that leaves out SGLang's processes: this host runs no server, as
    far as specdash can see (other test runs' servers may run on this machine)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ps = bin_dir / "ps"
    ps.write_text("#!/bin/sh\n/bin/ps \"$@\" | grep -v -e sglang\nexit 0\n")
    ps.chmod(ps.stat().st_mode | stat.S_IXUSR)
    env = host_env(tmp_path, "fast")
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env


def _view_text(app) -> str:
    """The log view's rows as on screen, joined (a wrapped sentence reads whole)."""
    view = app.log_pane.view
    region = view.region
    rows = screen_text(app).splitlines()[region.y:region.bottom]
    return " ".join(" ".join(row[region.x:region.right].split()) for row in rows)


@pytest.mark.parametrize("size", [(160, 48), (80, 24)])
async def test_the_no_server_sentence_is_whole_on_screen(tmp_path, monkeypatch, size):
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state-here"))  # no run of ours to re-attach
    app = SpecdashApp(LocalHost(env=_env_without_servers(tmp_path)), log_path=None, gpu_interval_s=0.5)
    async with app.run_test(size=size) as pilot:
        await wait_until(pilot, lambda: "no SGLang server" in _view_text(app), what="the no-server line",
                         state=lambda: screen_text(app))
        await pilot.pause(0.3)
        assert SENTENCE in _view_text(app), screen_text(app)
        assert "--log PATH; start" not in _view_text(app)  # said once


async def test_with_a_command_given_the_no_server_line_says_l_launches_it(tmp_path, monkeypatch):
    """``connect local --command FILE`` (tools/try_local.sh) on a host with no server: the next step is l."""
    monkeypatch.setenv("SPECDASH_STATE_DIR", str(tmp_path / "state-here"))
    app = SpecdashApp(LocalHost(env=_env_without_servers(tmp_path)), log_path=None, gpu_interval_s=0.5,
                      launch_command="python3 -m sglang.launch_server --model-path m --port 31999")
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: "no SGLang server" in _view_text(app), what="the no-server line",
                         state=lambda: screen_text(app))
        await wait_until(pilot, lambda: f"{SENTENCE}, or l launches the builder's command" in _view_text(app),
                         what="the launch hint", state=lambda: _view_text(app))
