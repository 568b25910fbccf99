"""Which server the console follows: with several SGLang servers on the host (started the way users start them,
``nohup python3 -m sglang.launch_server ... > server.log 2>&1 &``), the user picks one from a list showing PID,
port, model, start time and log; ``--server-port`` picks without asking; the builder starts from the followed
server's command line; ``o`` brings the log pane back to the ``--log`` file after a launch switched it. Real
processes (the SGLang double) and LocalHost."""

from __future__ import annotations

import shlex
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.double import harness, host_env
from support.guard import guard
from support.pilot import screen_text, wait_until
from textual.app import App
from textual.widgets import OptionList

from specdash.app.main import SpecdashApp
from specdash.app.modals.server_chooser import ServerChooserScreen
from specdash.hosts.local import LocalHost
from specdash.logs.discover import ServerProcess, still_running, summary_of

pytestmark = pytest.mark.timeout(guard(120))  # a hang guard, scaled like every wait


def start_server(tmp_path, env, name: str, started_groups) -> tuple[subprocess.Popen, int, str, str]:
    """A double started from a shell the user's way (its own session, output to a file): (process, port, log
    path, command)."""
    port = harness.free_port()
    command = harness.launch_command(port)
    log = tmp_path / f"{name}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(shlex.split(command), env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    started_groups.append(proc.pid)  # its own process group: killed by PGID at the end
    return proc, port, str(log), command


async def test_several_servers_are_listed_and_the_chosen_one_is_followed(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    first = start_server(tmp_path, env, "first", started_groups)
    second = start_server(tmp_path, env, "second", started_groups)  # the newest: never taken on its own
    app = SpecdashApp(LocalHost(env=env), log_path=None, gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ServerChooserScreen), what="the server chooser")
        options = app.screen.query_one(OptionList)
        rows = {options.get_option_at_index(i).id: str(options.get_option_at_index(i).prompt)
                for i in range(options.option_count)}
        for proc, port, log, _ in (first, second):
            row = rows[str(proc.pid)]  # other users' or other sessions' servers may be listed too
            assert f"PID {proc.pid} · port {port} · /models/Llama-3.1-8B-Instruct · started " in row
            assert row.endswith(f"log {log}")
        assert app.log_path is None  # nothing followed before the user chose
        index = next(i for i in range(options.option_count) if options.get_option_at_index(i).id == str(first[0].pid))
        options.highlighted = index
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.log_path == first[2], what="the chosen server's log")
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.builder_pane is not None and app.builder_pane.command == first[3],
                         what="builder starts from the followed server's command")


def _highlight(options: OptionList, pid: int) -> None:
    options.highlighted = next(i for i in range(options.option_count)
                               if options.get_option_at_index(i).id == str(pid))


async def test_at_80x24_the_chooser_shows_its_keys_and_marks_a_server_that_exited(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    first = start_server(tmp_path, env, "first", started_groups)
    second = start_server(tmp_path, env, "second", started_groups)
    app = SpecdashApp(LocalHost(env=env), log_path=None, gpu_interval_s=0.5)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, ServerChooserScreen), what="the server chooser")
        await wait_until(pilot, lambda: "enter follows the highlighted server · esc follows none" in screen_text(app),
                         what="the key hint on screen", state=lambda: screen_text(app))
        text = screen_text(app)
        assert f"PID {first[0].pid} · port {first[1]}" in " ".join(text.split()), text
        harness.kill_group(first[0].pid)  # the server exits while the list is open
        await wait_until(pilot, lambda: f"exited · PID {first[0].pid}" in screen_text(app),
                         what="the exited server marked", state=lambda: screen_text(app))
        options = app.screen.query_one(OptionList)
        assert options.get_option(str(first[0].pid)).disabled
        _highlight(options, second[0].pid)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.log_path == second[2], what="the running server followed")


async def test_a_server_that_exits_before_the_pick_is_not_followed(tmp_path):
    """Enter re-checks the server first: one gone since the last check is marked exited, never followed."""
    procs = [subprocess.Popen(["sleep", str(600 + i)], start_new_session=True) for i in range(2)]
    summaries = [summary_of(ServerProcess(p.pid, 1, "u", 1, f"sleep {600 + i}"), "/srv/s.log|") for i, p in
                 enumerate(procs)]
    host = LocalHost()
    chosen: list = []

    class Chooser(App):
        def on_mount(self) -> None:
            self.push_screen(ServerChooserScreen("local", summaries, alive=lambda ps: still_running(host, ps),
                                                 recheck_s=3600), chosen.append)

    try:
        app = Chooser()
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_until(pilot, lambda: isinstance(app.screen, ServerChooserScreen), what="the chooser")
            await pilot.pause(0.5)  # the first check: both run
            assert "exited" not in screen_text(app)
            procs[0].kill()
            procs[0].wait()
            options = app.screen.query_one(OptionList)
            _highlight(options, procs[0].pid)
            await pilot.press("enter")
            await wait_until(pilot, lambda: f"PID {procs[0].pid} has exited: pick another" in screen_text(app),
                             what="the pick refused", state=lambda: screen_text(app))
            assert isinstance(app.screen, ServerChooserScreen) and chosen == []
            assert f"exited · PID {procs[0].pid}" in screen_text(app)
            assert "1 SGLang server runs on local (1 listed have exited)" in screen_text(app)
            _highlight(options, procs[1].pid)
            await pilot.press("enter")
            await wait_until(pilot, lambda: chosen == [procs[1].pid], what="the running one chosen")
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


async def test_server_port_chooses_without_asking(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    first = start_server(tmp_path, env, "first", started_groups)
    start_server(tmp_path, env, "second", started_groups)
    app = SpecdashApp(LocalHost(env=env), log_path=None, gpu_interval_s=0.5, server_port=first[1])
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.log_path == first[2], what="the server on --server-port")
        assert not isinstance(app.screen, ServerChooserScreen)


async def test_o_goes_back_to_the_log_file_after_a_launch(tmp_path, started_groups):
    env = host_env(tmp_path, "fast")
    given = tmp_path / "given.log"
    given.write_text("[2025-01-01 10:00:00] The server is fired up and ready to roll!\n")
    app = SpecdashApp(LocalHost(env=env), log_path=str(given), gpu_interval_s=0.5)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_until(pilot, lambda: app.builder_pane is not None, what="builder")
        app.builder_pane.set_command(harness.launch_command(harness.free_port()))
        await pilot.pause(0.2)
        await pilot.press("l")
        await wait_until(pilot, lambda: app.run_handle is not None, what="launch")
        started_groups.append(app.run_handle.pgid)
        await wait_until(pilot, lambda: app.log_path == app.run_handle.log_path, what="the run's log")
        await pilot.press("o")
        await wait_until(pilot, lambda: app.log_path == str(given), what="back to --log")
        assert str(given) in str(app.log_pane.border_title)


def test_connect_server_options_are_checked_before_anything_opens():
    import sys

    def connect(*args):
        return subprocess.run([sys.executable, "-m", "specdash", "connect", "local", *args], capture_output=True,
                              text=True, timeout=60)

    both = connect("--log", "/tmp/x.log", "--pid", "42")
    assert both.returncode == 2 and "give one of them" in both.stderr
    assert connect("--server-port", "70000").returncode == 2
    exclusive = connect("--pid", "42", "--server-port", "30000")
    assert exclusive.returncode == 2 and "not allowed with argument" in exclusive.stderr


@given(st.text(max_size=300), st.text(max_size=120))
def test_a_summary_of_any_command_line_and_link_text_never_raises(args, links):
    summary = summary_of(ServerProcess(7, 1, "u", 5, args), links)
    assert summary.describe().startswith("PID 7 · ")
    if summary.port is not None:
        assert 0 < summary.port < 65536


def test_a_summary_reads_port_and_model_as_argparse_does():
    proc = ServerProcess(9, 1, "alice", 4000, "python3 -m sglang.launch_server --model-path m/x --po 31000")
    summary = summary_of(proc, "/srv/x.log|/srv/x.log")
    assert summary.describe() == "PID 9 · port 31000 · m/x · started 1 h 6 min ago · user alice · log /srv/x.log"
    renamed = summary_of(ServerProcess(9, 1, "alice", 5, "sglang::scheduler"), "pipe:[123]|")
    assert renamed.port is None and renamed.log is None and "writes to a pipe" in renamed.describe()
