"""Shared fixtures. Keep this file to fixtures used by several test files; area-specific helpers live in
their own modules (e.g. tests/sshd.py for the real OpenSSH server)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parent.parent



@pytest.fixture(scope="session", autouse=True)
def _regex_strategies_imported():
    """CPython 3.11 before 3.11.8 can fail to compile a module first imported right after a deep recursion elsewhere
    ("SystemError: AST constructor recursion depth mismatch", python/cpython#106905). Hypothesis imports its regex
    support lazily, on a test's first ``from_regex``: import it at the first test, before any test recurses deeply
    (not at conftest import, where hypothesis warns about work done while plugins load)."""
    st.from_regex(r"x").validate()


@pytest.fixture(scope="session", autouse=True)
def _cursors_that_do_not_blink():
    """Text cursors stay visible in every test: Textual blinks them on a 0.5 s wall-clock timer, so what a screen
    capture shows would otherwise depend on how fast the machine ran the steps before it."""
    from textual.widgets import Input, TextArea

    saved = Input._toggle_cursor, TextArea._toggle_cursor_blink_visible

    def input_cursor_stays(self) -> None:
        self._cursor_visible = True

    def text_area_cursor_stays(self) -> None:
        return None

    Input._toggle_cursor = input_cursor_stays
    TextArea._toggle_cursor_blink_visible = text_area_cursor_stays
    yield
    Input._toggle_cursor, TextArea._toggle_cursor_blink_visible = saved


@pytest.fixture(scope="session", autouse=True)
def _toasts_that_do_not_expire():
    """Toasts stay until the test ends: Textual removes a toast after its timeout in wall-clock seconds, so whether a
    test still saw a notification (``app._notifications``) or a toast on screen would depend on machine speed."""
    from textual.notifications import Notification

    saved = Notification.time_left
    Notification.time_left = property(lambda self: 1e6)  # type: ignore[method-assign,assignment]
    yield
    Notification.time_left = saved  # type: ignore[method-assign]


@pytest.fixture(scope="session", autouse=True)
def _pilot_waits_scaled():
    """Textual's Pilot gives the app 30 wall-clock seconds to process its pending messages on every pause (a hang
    guard): scaled like every other wait of the suite (support.guard), so a machine several times slower passes."""
    from support.guard import guard
    from textual.pilot import Pilot

    saved = Pilot._wait_for_screen

    async def wait_for_screen(self, timeout: float = 30.0) -> bool:
        return await saved(self, guard(timeout))

    Pilot._wait_for_screen = wait_for_screen  # type: ignore[method-assign]
    yield
    Pilot._wait_for_screen = saved  # type: ignore[method-assign]


@pytest.fixture(scope="session")
def sshd_server(tmp_path_factory):
    """A real OpenSSH sshd on 127.0.0.1 (see tests/sshd.py: :class:`SshdServer`), started once per session and
    killed by process group at the end. Skips when sshd is not installed."""
    from sshd import SshdServer, missing_reason  # tests/ is on sys.path (rootdir conftest, no __init__.py)

    reason = missing_reason()
    if reason:
        pytest.skip(reason)
    server = SshdServer(tmp_path_factory.mktemp("sshd"), REPO)
    server.start()
    try:
        yield server
    finally:
        server.kill()


@pytest.fixture
def sshd(sshd_server):
    """The session sshd, running (restarted if an earlier test left it stopped)."""
    sshd_server.start()
    return sshd_server


@pytest.fixture
def started_groups(tmp_path):
    """PGIDs of servers a test started (through the SGLang test double); any still alive at the end are SIGKILLed
    by process group — only groups the test itself started: those listed, and those whose processes carry this
    test's own environment (a sweep's restarts, a test that failed before listing its server)."""
    from support.double import harness

    groups: list[int] = []
    yield groups
    for pgid in set(groups) | harness.groups_started_under(tmp_path):
        harness.kill_group(pgid)


@pytest.fixture
def started():
    """``started(**popen_kwargs)`` starts :data:`support.fake_server.FAKE_SERVER` in its own session; every process
    it started is killed by process group when the test ends (only those)."""
    from support.fake_server import FAKE_SERVER

    procs: list[subprocess.Popen] = []

    def start(**kwargs) -> subprocess.Popen:
        proc = subprocess.Popen(FAKE_SERVER, start_new_session=True, **kwargs)
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)
