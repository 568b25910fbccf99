"""specdash's status poll stays out of the log the user follows: its requests are marked, an endpoint that
answered 404 is asked once, nothing is requested while the log shows the server starting, and the log pane hides
the marked access lines and says how many it hid. Real processes and HTTP on 127.0.0.1 (the SGLang double)."""

from __future__ import annotations

import pathlib

import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.double import harness
from support.guard import guard
from support.pilot import wait_until
from textual.app import App, ComposeResult
from textual.widgets import Static

from specdash.app.log import LogPane
from specdash.hosts.local import LocalHost
from specdash.logs.own_traffic import is_own_access_line, marked, without_own_lines
from specdash.logs.startup import StartupHistory
from specdash.server import ServerState, launch, server_status, stop
from specdash.server.probe import ProbeMemory
from specdash.server.status import LOG_TAIL_BYTES

pytestmark = pytest.mark.timeout(guard(60))  # a hang guard, scaled like every wait


def sglang_access_line(client: str, method: str, path: str, status: str) -> str:
    """An access line as SGLang's uvicorn config writes it (set_uvicorn_logging_configs' access format)."""
    return f'[2025-06-01 10:00:00] INFO:     {client} - "{method} {path} HTTP/1.1" {status}'


def test_marked_requests_are_recognised_and_the_users_own_are_not():
    for path in ("/health", "/server_info", "/get_server_info"):
        assert is_own_access_line(sglang_access_line("127.0.0.1:5123", "GET", marked(path), "200 OK"))
        assert not is_own_access_line(sglang_access_line("127.0.0.1:5123", "GET", path, "200 OK"))
    assert marked("/v1/loads?include=spec") == "/v1/loads?include=spec&specdash=poll"
    assert is_own_access_line(sglang_access_line("[::1]:9", "GET", marked("/v1/loads?include=spec"), "200 OK"))
    # a coloured request line (uvicorn on a terminal), and look-alikes that are not ours
    assert is_own_access_line('INFO:     127.0.0.1:1 - "\x1b[1mGET /health?specdash=poll HTTP/1.1\x1b[0m" 200')
    assert not is_own_access_line(sglang_access_line("127.0.0.1:1", "GET", "/health?specdash=pollx", "200 OK"))
    assert not is_own_access_line("[2025-06-01 10:00:00] user note: GET /health?specdash=poll HTTP/1.1")
    assert not is_own_access_line(sglang_access_line("127.0.0.1:1", "POST", "/generate?x=specdash=poll", "200 OK"))


@given(st.lists(st.text(max_size=200), max_size=20))
def test_any_text_never_raises_and_only_marked_lines_go(lines):
    kept, hidden = without_own_lines(lines)
    assert hidden == len(lines) - len(kept)
    assert all("specdash=poll" in line for line in lines if line not in kept)


@given(st.text(alphabet=st.characters(blacklist_characters=' "?\r\n', blacklist_categories=("Cs",)), max_size=40))
def test_every_marked_path_is_recognised(tail):
    line = sglang_access_line("127.0.0.1:40000", "GET", marked("/" + tail), "404 Not Found")
    assert is_own_access_line(line)


def access_paths(log: pathlib.Path) -> list[str]:
    """The request paths of the access lines in ``log``, in order."""
    out = []
    for line in log.read_text().splitlines():
        if ' - "' in line and " HTTP/1.1" in line:
            out.append(line.split(' - "', 1)[1].split(" ")[1])
    return out


async def test_polls_ask_nothing_while_starting_and_a_404_endpoint_once(tmp_path, started_groups):
    host = LocalHost(env=harness.double_env(tmp_path, None))  # 0.5.x: /server_info answers 404
    port = harness.free_port()
    handle = await launch(host, harness.launch_command(port))
    started_groups.append(handle.pgid)
    memory = ProbeMemory()
    statuses = []
    while True:
        status = await server_status(host, handle, memory=memory)
        statuses.append(status)
        if status.state is not ServerState.STARTING:
            break
    assert status.state is ServerState.READY, status.describe()
    assert any(s.detail.startswith(("loading", "capturing", "allocating", "waiting"))
               for s in statuses[:-1]), [s.detail for s in statuses]
    for _ in range(3):  # ready: /health each poll, the server info once per poll; /server_info never again
        again = await server_status(host, handle, memory=memory)
        assert again.state is ServerState.READY and again.describe().startswith("ready (SGLang 0.5.0rc0")
    quiet = await server_status(host, handle, memory=memory, http=False)
    assert quiet.state is ServerState.READY and quiet.probe is None
    await stop(host, handle, grace_s=10)

    log = pathlib.Path(handle.log_path)
    lines = log.read_text().splitlines()
    ready_at = next(i for i, line in enumerate(lines) if "fired up and ready to roll" in line)
    ours = [p for p in access_paths(log) if "specdash=poll" in p]
    assert ours, "the polls after the ready line were logged"
    assert not [line for line in lines[:ready_at] if "specdash=poll" in line]  # nothing while starting
    assert [p for p in ours if p.startswith("/server_info")] == ["/server_info?specdash=poll"]  # one 404
    assert len([p for p in ours if p.startswith("/health")]) == 4  # the first ready poll and three more
    assert all(p.endswith("?specdash=poll") for p in ours)
    assert access_paths(log)[0] == "/generate"  # the warm-up request: not ours, never hidden


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield LogPane("server.log", history=StartupHistory(read_only=True), host="test")


async def test_the_log_pane_hides_our_access_lines_and_counts_them():
    ours = [sglang_access_line("127.0.0.1:4000", "GET", marked(p), "200 OK")
            for p in ("/health", "/get_server_info", "/health")]
    users = sglang_access_line("10.0.0.7:5000", "GET", "/health", "200 OK")
    generate = sglang_access_line("127.0.0.1:4001", "POST", "/generate", "200 OK")
    app = PaneApp()
    async with app.run_test(size=(160, 48)) as pilot:
        pane = app.query_one(LogPane)
        pane.feed([ours[0], users, ours[1]])
        pane.feed([ours[2]])  # a batch of our lines only
        pane.feed([generate])

        def shown() -> list[str]:
            return [pane.view.text_at_row(r) for r in range(pane.view.row_count)]

        def status() -> str:
            return str(app.query_one("#log-status", Static).render())

        await wait_until(pilot, lambda: len(shown()) >= 2 and "3 lines of specdash's own polling" in status(),
                         what="the fed lines",
                         state=lambda: (shown(), status()))
        assert shown() == [users, generate]
        assert "3 lines of specdash's own polling hidden" in status()
        pane.reset("other.log")
        await wait_until(pilot, lambda: "own polling" not in status(), what="the status after a reset",
                         state=status)


async def test_ready_stays_ready_when_request_lines_push_the_ready_line_out_of_the_tail(tmp_path, started_groups):
    host = LocalHost(env=harness.double_env(tmp_path, None))
    handle = await launch(host, harness.launch_command(harness.free_port()))
    started_groups.append(handle.pgid)
    status = await server_status(host, handle)
    while status.state is ServerState.STARTING:
        status = await server_status(host, handle)
    assert status.state is ServerState.READY
    busy = sglang_access_line("10.0.0.9:6000", "POST", "/v1/chat/completions", "200 OK") + "\n"
    with open(handle.log_path, "a") as log:  # a busy server: the last 16 KiB hold request lines only
        log.write(busy * (2 * LOG_TAIL_BYTES // len(busy)))
    again = await server_status(host, handle)
    assert again.state is ServerState.READY, again.describe()  # was "starting (waiting for the first log line)"
    await stop(host, handle, grace_s=10)
