"""The specdash Textual app: header, one pane per concern, footer; wiring between panes and the host.

Data flows one way — host → core → panes — and commands back — key → action → core → host. This module only
wires: it owns the Host, follows the server log through :class:`specdash.hosts.tail.LogFollower` and hands the
lines to the log pane; each pane renders what the core computes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Footer, TabbedContent, TabPane

from specdash.app.deferred_tabs import (
    DEFERRED_BUILD_AFTER_S,
    DEFERRED_TABS,
    LOG_PAINTED_AFTER_S,
    DeferredTabs,
    deferred_class,
)
from specdash.app.footer import KeyFooter
from specdash.app.gc_policy import apply_streaming_gc_policy
from specdash.app.gpus.pane import GpuPane
from specdash.app.keymap import bound_key, key_for
from specdash.app.lifecycle import LIFECYCLE_BINDINGS, LifecycleActions
from specdash.app.log.pane import LogPane
from specdash.app.log_liveness import LogLivenessMixin
from specdash.app.modals.help import HelpScreen
from specdash.app.modals.host_key import HostKeyScreen
from specdash.app.modals.server_chooser import ServerChooserScreen
from specdash.app.palette import PaneActions
from specdash.app.readonly_keys import MUTATING_BINDINGS, hidden, refusal
from specdash.app.recording import RecordingMixin
from specdash.app.status_bar import StatusBar
from specdash.app.toasts import NoticeLog, fit_toast, fold_title, plain_text
from specdash.app.typing_focus import key_blocked, typing_widget
from specdash.hosts.base import ConnectionStatus, ConnState, Host, HostError, HostKeyChanged, HostKeyUnknown
from specdash.logs.startup import StartupHistory
from specdash.text.display import markup


def _port_of(found: Any) -> int | None:
    """The HTTP port of the discovered server ``found`` (:class:`specdash.logs.discover.DiscoveredLog`) as SGLang's
    argparse reads its command line (``--port``, else 30000); None when its command line is not a launch command."""
    from specdash.logs.discover import summary_of

    proc = next((c for c in getattr(found, "candidates", ()) if c.pid == found.pid), None)
    return summary_of(proc, "").port if proc is not None else None


class _MainScreen(Screen):
    """The console's screen. Nothing is focused before the first frame (Textual would focus the tabs, then
    :meth:`SpecdashApp.on_mount` moves the focus to the log view): a focus change restyles every widget of the
    pane, which the first frame and the log's first lines do not wait for; the log view gets the focus right
    after it. From then on Textual's auto focus applies as usual."""

    AUTO_FOCUS = ""  # until the first frame is drawn (then None: the app's)

    def on_screen_resume(self) -> None:
        # runs before Textual's own handler, which draws the frame: what waits for the first frame runs after it
        app = self.app
        if isinstance(app, SpecdashApp) and not app._first_frame_shown:
            self.call_later(app.first_frame_shown)

    def first_frame_shown(self) -> None:
        """Textual's auto focus (the app's selector) applies from now on, e.g. when a modal closes."""
        self.AUTO_FOCUS = None  # type: ignore[misc,assignment]  # this screen's own value (Textual reads it so)


#: notices raised within this many seconds of each other are raised "together" (one action's burst): on a short
#: screen the most severe of them is the one toast shown
BURST_S = 1.0


class SpecdashApp(RecordingMixin, LogLivenessMixin, LifecycleActions, DeferredTabs, App):
    """The console. ``host`` is any Host (local, SSH, replay); ``log_path`` the server log to follow on it
    (None: discover the running server's log); ``readonly`` disables every mutating action."""

    CSS_PATH = "app.tcss"
    #: a replay must not record its replayed start-ups as new ones in the start-up history
    readonly_history = False
    COMMANDS = App.COMMANDS | {PaneActions}
    TITLE = "specdash"
    #: screen classes for small terminals (app.tcss): -narrow below 120 columns, -short below 36 rows
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (36, "-tall")]
    #: False in a replay: the GPU pane shows recorded samples instead of sampling the host.
    gpu_sampling = True
    BINDINGS = [
        Binding("q", "quit", "Quit", show=False, id="app.quit"),
        # the footer shows help and the keys of the pane in view; quitting and the pane keys are written on the tabs
        # and the GPU pane's title (:meth:`SpecdashApp.key_label`) and listed by help
        Binding("ctrl+q", "quit", "Quit", show=False, id="app.quit_ctrl"),
        Binding("f1,question_mark", "help", "Help", id="app.help"),
        Binding("f2", "show_tab('log')", "Log", show=False, id="app.tab_log"),
        Binding("f3", "show_tab('builder')", "Builder", show=False, id="app.tab_builder"),
        Binding("f4", "show_tab('bench')", "Bench", show=False, id="app.tab_bench"),
        Binding("f5", "focus_gpus", "GPUs", show=False, id="app.focus_gpus"),
        Binding("f12", "screenshot", "Screenshot", show=False, id="app.screenshot"),
        Binding("o", "follow_log_file", "Back to --log", show=False, id="app.log_file"),
        *LIFECYCLE_BINDINGS,
    ]

    def __init__(self, host: Host, *, log_path: str | None = None, readonly: bool = False,
                 known_hosts: str | None = None, gpu_interval_s: float = 2.0, theme: str | None = None,
                 keymap: dict[str, str] | None = None, python: str = "python3",
                 sglang_version: str | None = None, server_pid: int | None = None,
                 server_port: int | None = None, launch_command: str | None = None) -> None:
        super().__init__()
        #: the launch command ``connect --command FILE`` gave: the builder starts from it (before a followed
        #: server's command)
        self.given_command = launch_command or None
        #: which server to follow when several run (connect --pid / --server-port); neither: the user picks
        self.server_pid, self.server_port = server_pid, server_port
        #: the file --log named: the log pane can always go back to it (key o) after a launch switched it
        self.log_file = log_path
        #: the followed server's launch command (its /proc/PID/cmdline, or the run specdash launched): the builder
        #: starts from it when it is empty
        self.followed_command: str | None = None
        #: PID of the followed server when it was discovered on the host, not launched from this console (x, r, b
        #: and S act only on a server launched here): None otherwise
        self.followed_pid: int | None = None
        #: the followed (not launched here) server's HTTP port, when its command line says it (b benchmarks it)
        self.followed_port: int | None = None
        self.host_python = python
        self.configured_sglang_version = sglang_version
        #: binding id -> keys, from config.yaml's keymap section (the help screen shows these keys)
        self.keymap_overrides = dict(keymap or {})
        if keymap:
            self.set_keymap(keymap)
        from specdash.app.themes import DEFAULT_THEME, load_themes

        for shipped in load_themes().values():
            self.register_theme(shipped)
        wanted = theme or DEFAULT_THEME
        self.theme = wanted if wanted in self.available_themes else "textual-dark"
        self.host = host
        self.log_path = log_path
        self.readonly = readonly
        self.known_hosts = known_hosts
        self.gpu_interval_s = gpu_interval_s
        self.sub_title = host.name
        self.init_deferred_tabs()
        self.notice_log = NoticeLog()  # the recent notices, whole, for the help screen
        self._session_connected = False  # start_session connected: the deferred panes may be wired to the host
        #: (path, start, end offset) of a log's last lines put on the first frame (:meth:`_show_tail_now`), until
        #: the follower takes over at the end offset
        self._tail_shown: tuple[str, int, int] | None = None
        self._first_frame_shown = False  # the main screen's first frame is drawn (see after_first_frame)
        self._after_first_frame: list[Any] = []
        self._wired: set[str] = set()

    # -- layout -----------------------------------------------------------------------------------
    def get_default_screen(self) -> Screen:
        return _MainScreen(id="_default")

    def compose(self) -> ComposeResult:
        self._status_bar = StatusBar(self.host.name, id="status")
        yield self._status_bar
        with Vertical(id="main"):
            with TabbedContent(id="tabs", initial="log"):
                with TabPane(self.key_label("app.tab_log", "Log"), id="log"):
                    yield LogPane(title=self.log_path or "log", host=self.host.name,
                                  history=StartupHistory(read_only=self.readonly_history))
                for tab_id, label, *_ in DEFERRED_TABS:  # their panes are mounted later (specdash.app.deferred_tabs)
                    yield TabPane(self.key_label(f"app.tab_{tab_id}", label), id=tab_id)
            gpus = GpuPane(self.host, interval_s=self.gpu_interval_s, readonly=self.readonly,
                           sample=self.gpu_sampling, sample_on_mount=False)  # started by start_gpu_sampling
            gpus.title_prefix = self.key_label("app.focus_gpus", "")
            yield gpus
        yield KeyFooter(show_command_palette=False)

    def notify(self, message: str, *, title: str = "", severity: Any = "information", timeout: float | None = None,
               markup: bool = True) -> None:
        """Textual's notify; on a short screen (below 36 rows) the newest notice replaces the ones on screen (also in
        a burst; an error stays over a lesser notice, see :meth:`_on_notify`) in a toast of two rows, title folded
        in, so toasts never take the log's rows on an 80x24 console; a notice longer than its toast is cut at a word
        with ``… (F1: whole text)``; the help screen lists every recent notice whole (:mod:`specdash.app.toasts`)."""
        plain = plain_text(message, markup)
        self.notice_log.add(plain, title, severity)
        short, small = self._short_screen()
        if short and title:
            plain, title = fold_title(plain, title), ""
            message, markup = plain, False
        help_key = self.key_label("app.help", "").strip() or "help"
        cut = fit_toast(plain, title, self.size.width, f" … ({help_key}: whole text)", small=small, short=short)
        if cut is not None:
            message, markup = cut, False
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def _short_screen(self) -> tuple[bool, bool]:
        """(short, small): the terminal is below 36 rows; below 120 columns or 36 rows (the breakpoints above),
        from the app's size, so that a notice raised before the first frame (a replay's on_mount) fits too."""
        try:
            width, height = self.size
        except Exception:  # noqa: BLE001 - no driver yet or shutting down
            return False, False
        short = 0 < height < self.VERTICAL_BREAKPOINTS[1][0]
        return short, short or 0 < width < self.HORIZONTAL_BREAKPOINTS[1][0]

    def _on_notify(self, event: Any) -> None:
        """Textual's handler; on a short screen one toast stays (notices raised together arrive here one after the
        other, after notify returned): the newest, except that an error is never replaced by a lesser notice raised
        with it (within :data:`BURST_S`; ``error`` > ``warning`` > ``information``). The others are in the help
        screen; a notice raised later replaces an older error (it is news: "Launched" after "Not launched")."""
        event.prevent_default()  # Textual's own handler runs here, once: after this one it would add the notice again
        super()._on_notify(event)
        shown = list(self._notifications) if self._short_screen()[0] else []
        if shown:
            rank = {"error": 2, "warning": 1}
            burst = [n for n in shown if shown[-1].raised_at - n.raised_at <= BURST_S]
            keep = max(reversed(burst), key=lambda n: rank.get(str(n.severity), 0))
            shown.remove(keep)
        older = shown
        for notification in older:
            self._unnotify(notification, refresh=False)
        if older:
            self._refresh_notifications()

    def on_resize(self, event: Any) -> None:
        """The key footer drops its padding below 120 columns, so the pane's keys fit an 80-column terminal."""
        try:
            self.query_one(Footer).compact = event.size.width < 120
        except NoMatches:  # not composed yet
            pass

    def key_label(self, binding_id: str, label: str) -> str:
        """``"F3 Launch builder"``: ``label`` after the first key of ``binding_id`` as the keymap has it (config.yaml's
        remapping, else the default), so the tabs say how to reach them with the footer left to the pane's keys."""
        return f"{bound_key(binding_id, self.keymap_overrides)} {label}"

    @property
    def status_bar(self) -> StatusBar:
        """The header line (kept as a reference: it stays usable while the app shuts down)."""
        return self._status_bar

    def _wire_deferred_panes(self) -> None:
        """Hand the builder and the bench pane what they need from the session, once connected and built (each
        pane once): the builder gets the host (it detects the SGLang version there), the interpreter and the
        configured version; the bench pane the log's accept lengths, the sweep's restart hook and the command."""
        if not self._session_connected:
            return
        builder = self._deferred_panes.get("builder")
        if builder is not None and "builder" not in self._wired:
            self._wired.add("builder")
            builder.python = self.host_python
            if self.configured_sglang_version:
                builder.set_sglang_version(self.configured_sglang_version)
            builder.host = self.host
        self._offer_followed_command()
        self.show_port_note()
        bench = self._deferred_panes.get("bench")
        if bench is not None and "bench" not in self._wired:
            self._wired.add("bench")
            bench.followed_elsewhere = self.followed_elsewhere_text()
            if self.followed_pid is not None and self.followed_port is not None and self.run_handle is None:
                self._connect_followed_bench(self.followed_pid, self.followed_port)
            log_pane = self.log_pane
            bench.attach(
                restart_server=self.restart_for_sweep,
                log_accept_samples=(lambda: log_pane.analyzer.metrics.values("accept_len")) if log_pane else None,
                command=builder.command if builder is not None else None,
                flag_release=builder.report.profile.flag_release if builder is not None else None,
                startup_seconds=(lambda: log_pane.analyzer.startup.time_to_ready_s) if log_pane else None)

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.deferred_tab_activated(event)

    @property
    def log_pane(self) -> LogPane | None:
        """The LogPane (None before compose and while the app shuts down)."""
        found = self.query(LogPane)
        return found.first() if found else None

    @property
    def gpu_pane(self) -> GpuPane | None:
        """The GpuPane (None before compose and while the app shuts down)."""
        found = self.query(GpuPane)
        return found.first() if found else None

    def on_mount(self) -> None:
        apply_streaming_gc_policy()  # no full-collection pauses every few seconds under a busy log
        log_tab = self.query_one(TabbedContent).get_pane("log")
        self.after_first_frame(lambda: self._focus_inside(log_tab))  # (see _MainScreen)
        self.set_timer(DEFERRED_BUILD_AFTER_S, self.start_deferred_build)
        self.set_timer(DEFERRED_BUILD_AFTER_S, self.start_gpu_sampling)  # unless the log's first lines come sooner
        self.status_bar.connection = self.host.status
        if self.configured_sglang_version and self.log_pane is not None:
            self.log_pane.set_sglang_version(self.configured_sglang_version)  # known issues keyed to the release
        if self.readonly:
            self.status_bar.mode = "read-only"
        self.host.add_state_listener(self._on_host_state)
        self.start_recording_hooks()
        if self.host.status.state is ConnState.CONNECTED:  # connected before the console opened (connect's check)
            self.record_connection(self.host.status)
        if self._show_tail_now():  # the log is on the first frame: the host's commands wait until it is drawn
            self.after_first_frame(self.start_session)
        else:
            self.start_session()

    def after_first_frame(self, callback: Any) -> None:
        """Call ``callback()`` once the first frame is drawn (now when it is): work the first frame does not show
        (host commands, workers) does not delay it."""
        if self._first_frame_shown:
            callback()
        else:
            self._after_first_frame.append(callback)

    def first_frame_shown(self) -> None:
        """The main screen drew its first frame: run what waited for it (:meth:`after_first_frame`)."""
        self._first_frame_shown = True
        if isinstance(self.screen, _MainScreen):
            self.screen.first_frame_shown()
        waiting, self._after_first_frame = self._after_first_frame, []
        for callback in waiting:
            callback()

    def start_gpu_sampling(self) -> None:
        """Start the GPU pane's sampling (once): after the log's first lines are painted, or
        :data:`DEFERRED_BUILD_AFTER_S` after mount, whichever comes first, so its host commands (container, user,
        process table, nvidia-smi or NVML) do not delay the log."""
        gpus = self.gpu_pane
        if gpus is not None:
            gpus.start_sampling()

    def _on_host_state(self, status: ConnectionStatus) -> None:
        self.status_bar.connection = status
        self.record_connection(status)

    # -- connection and log -------------------------------------------------------------------------
    @work(exclusive=True, group="session")
    async def start_session(self) -> None:
        """Connect (asking about unknown host keys), then follow the log until the app exits."""
        if not await self._connect():
            return
        self._session_connected = True
        self._wire_deferred_panes()  # the panes built so far; the others are wired as they are built
        path = self.log_path or await self._reattach_run() or await self._discover_log()
        if path:
            self.follow(path, reset=False)
        if self.followed_pid is not None or self.server_port is not None or (path and self.run_handle is None):
            self.watch_piped_server()  # the header from the server itself while its log is not its output

    def _offer_followed_command(self) -> None:
        """Put the given (``connect --command``) or else the followed server's launch command in the builder when
        the builder is built and still empty."""
        builder = self._deferred_panes.get("builder")
        command = self.given_command or self.followed_command
        if builder is not None and "builder" in self._wired and command and not (builder.command or "").strip():
            builder.set_command(command)

    def _follow_command_of(self, command: str | None) -> None:
        self.followed_command = command or None
        self._offer_followed_command()

    def action_follow_log_file(self) -> None:
        """``o``: the log pane goes back to the file ``--log`` named (after a launch switched it to its run log)."""
        if not self.log_file:
            self.notify("No --log file was given: the log pane follows the server's own log.", severity="warning")
            return
        if self.log_path == self.log_file:
            self.notify(f"Already following {markup(self.log_file)}.")
            return
        self.follow(self.log_file)
        self.notify(f"Following {markup(self.log_file)} again.")

    async def _reattach_run(self) -> str | None:
        """Follow the newest server this host's specdash launched, if it is still alive."""
        try:
            from specdash.server import ServerState, find_runs, server_status

            runs = await find_runs(self.host, limit=1)
            if not runs:
                return None
            status = await server_status(self.host, runs[0])
        except Exception:  # noqa: BLE001 - rediscovery is best effort
            return None
        if status.state not in (ServerState.STARTING, ServerState.READY):
            return None
        pane = self.log_pane
        if pane is not None and pane.is_attached:  # its log path as the title, as after a launch
            try:
                pane.reset(f"{runs[0].log_path} · re-attached, PGID {runs[0].pgid}")
            except NoMatches:  # the pane is being torn down (the app is closing)
                pass
        self.run_handle = runs[0]
        self._server_alive = True
        self._expect_config(runs[0])  # the run's recorded command: a server_args line saying otherwise is a finding
        if self.gpu_pane is not None:
            self.gpu_pane.set_server_pgids({runs[0].pgid})
        self._poll_server()
        self._connect_bench(runs[0])  # b and S act on a re-attached server as on one launched in this session
        self._follow_command_of(runs[0].command)
        return runs[0].log_path

    async def _connect(self) -> bool:
        while True:
            try:
                await self.host.connect()
                return True
            except HostKeyUnknown as exc:
                from specdash.hosts.ssh import trust_host_key

                known_hosts = (getattr(self.host, "known_hosts_path", None) or self.known_hosts
                               or str(Path("~/.ssh/known_hosts").expanduser()))
                trusted = await self.push_screen_wait(
                    HostKeyScreen(exc.host, exc.port, exc.key_type, exc.fingerprint, known_hosts))
                if not trusted:
                    self.host.mark_failed("host key not trusted")
                    self.notify("Host key not trusted: not connected.", severity="warning")
                    return False
                trust_host_key(known_hosts, exc.host, exc.port, exc.public_key_line)
                self.notify(f"Added {markup(exc.key_type)} key of {markup(exc.host)} to {markup(known_hosts)}.")
            except HostKeyChanged as exc:
                self.host.mark_failed("host key changed")
                self.notify(str(exc), title="Host key changed: refused", severity="error", timeout=30)
                return False
            except HostError as exc:
                self.host.mark_failed(str(exc))
                self.notify(str(exc), title="Cannot connect", severity="error", timeout=30)
                return False

    async def _discover_log(self) -> str | None:
        """Find the server to follow and its log. With several of the user's servers and neither ``--pid`` nor
        ``--server-port``, the user picks one in :class:`ServerChooserScreen` (never one picked at random); the
        builder then starts from the chosen server's command line."""
        from specdash.logs.discover import discover_server_log, summarize_servers

        pane = self.log_pane
        pid = self.server_pid
        if pid is None:
            found = await discover_server_log(self.host)
            mine = list(found.candidates[:found.own_count])
            if self.server_port is not None:
                summaries = [s for s in await summarize_servers(self.host, found.candidates)
                             if s.port == self.server_port]
                if not summaries:
                    ports = ", ".join(f"PID {c.pid}" for c in found.candidates[:5]) or "none"
                    self._log_marker(f"no SGLang server listens on port {self.server_port} (servers: {ports}); "
                                     "start specdash with --pid PID or --log PATH")
                    return None
                pid = summaries[0].process.pid if len(summaries) == 1 else await self.push_screen_wait(
                    ServerChooserScreen(self.host.name, summaries, alive=self._servers_alive))
            elif len(mine) > 1:
                summaries = await summarize_servers(self.host, mine)
                pid = await self.push_screen_wait(ServerChooserScreen(self.host.name, summaries,
                                                                      alive=self._servers_alive))
            if pid is None and (self.server_port is not None or len(mine) > 1):
                self._log_marker(f"{len(mine)} SGLang servers run here and none was chosen; start specdash with "
                                 "--pid PID, --server-port PORT or --log PATH")
                return None
        if pid is not None:
            found = await discover_server_log(self.host, pid=pid)
        if getattr(found, "pid", None):
            self.followed_pid = found.pid
            self.followed_port = _port_of(found)
            self._read_command_line(found.pid)
        path = getattr(found, "path", None)
        if path:
            self.followed_pid = getattr(found, "pid", None) or None
            self._say_followed_elsewhere()
            self.show_port_note()
            if self.followed_pid is not None and self.followed_port is not None:
                self._connect_followed_bench(self.followed_pid, self.followed_port)
            if pane is not None and pane.is_attached:
                try:
                    # the note after the path: a narrow pane cuts the path's start, never the note (fit_title)
                    pane.reset(path if self.followed_pid is None else f"{path} · following PID {self.followed_pid} "
                               "(not launched from here)")
                except NoMatches:  # the pane is being torn down (the app is closing)
                    pass
            return found.path
        message = getattr(found, "explanation", None) or "no running SGLang server found"
        message = message if "--log PATH" in message else f"{message}; start specdash with --log PATH to follow a file"
        if self.given_command and not self.readonly:  # connect --command FILE: the next step is launching it
            message += f", or {key_for(self, 'server.launch')} launches the builder's command"
        self._log_marker(message)
        return None

    async def _servers_alive(self, procs: list) -> set[int]:
        """The PIDs of ``procs`` (listed by the server chooser) still running (HostError when the host is gone)."""
        from specdash.logs.discover import still_running

        return await still_running(self.host, procs)

    def followed_elsewhere_text(self) -> str:
        """The scope of x, r, b and S while the followed server was discovered, not launched from this console
        (plain text), else "". ``b`` benchmarks it when its port is known (a benchmark does not change the server);
        x, r and S (which restarts the server) stay with a server launched here."""
        if self.followed_pid is None or self.run_handle is not None:
            return ""
        x, r, b, s, launch = (key_for(self, i) for i in ("server.stop", "server.restart", "bench.run", "bench.sweep",
                                                          "server.launch"))
        if self.followed_port is not None:
            return (f"the followed server (PID {self.followed_pid}) was not launched from here: {b} benchmarks it (a "
                    f"benchmark does not change the server); {x}, {r} and {s} act only on a server launched from this "
                    f"console ({launch}): {s} restarts the server for each configuration")
        return (f"the followed server (PID {self.followed_pid}) was not launched from here and its port is not "
                f"known: {x}, {r}, {b} and {s} act only on a server launched from this console ({launch}); benchmark "
                "it with specdash bench --url http://127.0.0.1:PORT")

    @work(group="bench-url", exclusive=True)
    async def _connect_followed_bench(self, pid: int, port: int) -> None:
        """Point the bench pane at the followed server's port (through an SSH forward for a remote host), so ``b``
        benchmarks it; nothing happens once a server launched here took its place."""
        bench = self.bench_pane
        if bench is None or self.run_handle is not None or self.followed_pid != pid:
            return
        try:
            url = await self.host.forward_port(port)
        except Exception:  # noqa: BLE001 - b then says how to benchmark it from the command line
            self.followed_port = None
            self._say_followed_elsewhere()
            return
        if self.run_handle is None and self.followed_pid == pid:
            bench.server_url = url
            bench.server_address = f"{self.host.name}:{port}"

    def _say_followed_elsewhere(self) -> None:
        bench = self._deferred_panes.get("bench")
        if bench is not None:
            bench.followed_elsewhere = self.followed_elsewhere_text()

    def exit_note(self) -> str | None:
        """The line printed when the console exits while the server launched from it still runs (it is left
        running on purpose): its PGID, port and log, how to re-attach and stop it; None when none runs."""
        handle = self.run_handle
        if handle is None or not self._server_alive:
            return None
        target = self.host.name
        serving = self._serving_at_exit  # a depth sweep's configuration instead of the builder's command
        runs = f" sweep config {serving[0]} of the depth sweep, not your command," if serving else ""
        note = (f"the server launched from this console still runs{runs} on {target}: PGID {handle.pgid}, port "
                f"{handle.port}, log {handle.log_path}; `specdash connect {target}` re-attaches it "
                f"({key_for(self, 'server.stop')} stops it), "
                f"or stop its group there: kill -TERM -{handle.pgid}")
        if serving:
            import re

            from specdash.text.redaction import redact_text

            yours = re.sub(r"[ \t]*\\\r?\n[ \t]*", " ", redact_text(serving[1] or "")).strip()
            note += (f". To run your command again, re-attach and press {key_for(self, 'server.restart')} with it "
                     f"in the builder{': ' + yours if yours else ''}")
        return note

    @work(group="cmdline", exclusive=True)
    async def _read_command_line(self, pid: int) -> None:
        """The followed server's launch command from ``/proc/PID/cmdline`` (its words as exec received them,
        quoted for a shell; environment variables set before the command are not part of it)."""
        import shlex

        try:
            result = await self.host.run(f"tr '\\0' '\\n' < /proc/{int(pid)}/cmdline", timeout_s=15)
        except HostError:
            return
        words = [w for w in result.stdout.split("\n") if w]
        if result.exit_status == 0 and words:
            self._follow_command_of(shlex.join(words))

    def _log_marker(self, text: str) -> None:
        """Show ``text`` as a marker line in the log pane (ignored while the app is shutting down)."""
        pane = self.log_pane
        if pane is None or not pane.is_attached:
            return
        try:
            pane.marker(text)
        except NoMatches:  # the pane is being torn down
            pass

    def follow(self, path: str, *, reset: bool = True) -> None:
        """Follow ``path`` on the host in the log pane (replacing whatever was followed before)."""
        pane = self.log_pane
        if pane is not None and reset:
            pane.reset(path)
        self.log_path = path
        shown = self._tail_shown
        if reset or (shown is not None and shown[0] != path):
            self._tail_shown = None  # the lines on screen are gone: the follower reads the file afresh
        if self._tail_shown is None:  # (else its history analysis, started with the first frame, goes on)
            self.workers.cancel_group(self, "history")
        self._follow(path)

    #: Bytes of a log shown at once when it is opened (its last lines: a few screenfuls); the bytes before are the
    #: history, analysed behind (:meth:`_analyse_history`). 0: read every log from its start.
    TAIL_FIRST_BYTES = 256 * 1024
    #: Lines shown meanwhile analysed per step once the history is done (the UI gets the loop between steps).
    HISTORY_CATCH_UP_LINES = 5000

    @work(group="follow", exclusive=True)
    async def _follow(self, path: str) -> None:
        from specdash.hosts.tail import LogFollower, TailLines, TailMarker, TailPartial, recent_start_offset

        pane = self.log_pane
        shown, self._tail_shown = self._tail_shown, None
        start = size = 0
        if shown is not None and shown[0] == path:  # its last lines are on screen already (read before the first frame)
            start, resume = shown[1], shown[2]
            history_at, first_batch = 0, False
        else:
            if self.TAIL_FIRST_BYTES > 0:
                try:
                    size = await self.host.file_size(path) or 0
                    start = await recent_start_offset(self.host, path, self.TAIL_FIRST_BYTES, size=size)
                except HostError:
                    start = 0  # the follower reports what is wrong with the file
                if start >= size:  # the last 256 KiB hold no line start (one huge last line): read it all
                    start = 0
            if start > 0 and pane is not None:
                self._open_history(pane, path, start)
            resume = history_at = start  # the history is analysed once the first lines of the tail are painted
            first_batch = True
        async with LogFollower(self.host, path, start_offset=resume) as follower:
            async for event in follower:
                if pane is None:
                    continue
                if isinstance(event, TailLines):
                    self._show_lines(pane, event, path)
                    if first_batch:  # painted with the next frame, not one sync interval later
                        first_batch = False
                        pane.view.sync_now()
                        self.call_after_refresh(self.start_gpu_sampling)
                    if history_at and (event.end_offset >= size or len(event.lines) < follower.max_batch_lines):
                        # the tail is read (a batch short of full: caught up): analyse the history once it is painted
                        pane.view.sync_now()
                        self.call_after_refresh(self._analyse_history, path, history_at)
                        history_at = 0
                elif isinstance(event, TailMarker):
                    self.record_marker(event.text)
                    self._log_marker(event.text)
                elif isinstance(event, TailPartial):  # a capture bar updating in place: progress and ETA
                    text = event.text.decode("utf-8", "replace")
                    self.record_partial(text, path)
                    pane.partial(text)

    def _open_history(self, pane: LogPane, path: str, start: int) -> None:
        """The lines shown start at byte ``start`` of ``path``: the bytes before are its history (scroll-back
        readers, progress; analysed by :meth:`_analyse_history`)."""
        from specdash.hosts.tail import lines_before, read_range

        host = self.host
        pane.earlier_reader = lambda offset: lines_before(host, path, offset)
        pane.range_reader = lambda first, last: read_range(host, path, first, last)
        pane.start_history(start)
        self.record_marker(f"history: bytes 0-{start} of {path} analysed in place, not recorded")

    def _show_lines(self, pane: LogPane, event: Any, path: str) -> None:
        """A :class:`TailLines` batch of ``path``: recorded and fed to the log pane; the first lines of a log get
        the hidden tabs built once they are painted."""
        texts = [line.decode("utf-8", "replace").rstrip("\r") for line in event.lines]
        self.record_log_batch(texts, event.offsets, path)
        pane.feed(texts)
        if not self._deferred_build_started:  # the first lines get painted, then the hidden tabs
            self.set_timer(LOG_PAINTED_AFTER_S, self.start_deferred_build)

    def _show_tail_now(self) -> bool:
        """On a LocalHost with ``--log``: the log's last lines go on the first frame, read here before it (no
        subprocess, no wait for the follower's first batch); the follower then starts where they end, and the
        history before them is analysed once they are painted. Nothing happens when the file cannot be read this
        way (:func:`specdash.hosts.tail.read_tail_here`): the follower shows it as before. True when the lines
        were shown."""
        pane, path = self.log_pane, self.log_path
        if not (path and pane is not None and self.host.is_local and self.TAIL_FIRST_BYTES > 0
                and self.host.status.state is ConnState.CONNECTED):
            return False
        from specdash.hosts.tail import read_tail_here

        got = read_tail_here(path, self.TAIL_FIRST_BYTES)
        if got is None:
            return False
        start, lines = got
        if start > 0:
            self._open_history(pane, path, start)
        self._show_lines(pane, lines, path)
        pane.view.sync_now()
        self._tail_shown = (path, start, lines.end_offset)
        self.after_first_frame(self.start_gpu_sampling)
        if start > 0:
            self.after_first_frame(lambda: self._analyse_history(path, start))
        return True

    @work(group="history", exclusive=True)
    async def _analyse_history(self, path: str, end: int) -> None:
        """Analyse bytes ``0..end`` of ``path`` behind the tail already shown: findings, metrics and the start-up
        fill in as it goes, the status line shows the progress. One batch (a few thousand lines) per turn of the
        event loop, so keys and the live tail stay responsive."""
        import asyncio

        pane = self.log_pane
        if pane is None:
            return
        try:
            await self.analyse_range(path, 0, end, pane)
        except HostError as exc:
            self._log_marker(f"history analysis stopped ({exc}): line numbers from here on are not the file's")
            pane.abandon_history()
        while not pane.finish_history(self.HISTORY_CATCH_UP_LINES):
            await asyncio.sleep(0)

    async def analyse_range(self, path: str, start: int, end: int, pane: LogPane) -> None:
        """Feed bytes ``start..end`` of ``path`` (line-aligned) to ``pane``'s history analysis, block by block, as
        bytes (the bulk reader: :meth:`LogPane.feed_history_bytes`). Raises HostError."""
        import asyncio

        from specdash.hosts.tail import read_range_bytes

        async for offset, block in read_range_bytes(self.host, path, start, end):
            history = pane.history
            if history is None or history.abandoned:
                return  # given up (the live log outran it): the lines shown are analysed next
            pane.feed_history_bytes(block, offset, offset + len(block))
            await asyncio.sleep(0)

    # -- message handlers (the mixins define none: each handler here calls what it needs) ----------------------
    def on_log_pane_finding_added(self, message) -> None:
        """Record the finding; on low acceptance point at the builder's draft/target pairing check and what it
        found (a draft fed the wrong hidden layers looks exactly like this, and no log line says so)."""
        from specdash.logs.findings import ALMOST_NEVER_ACCEPTED

        finding = message.finding
        self.record_finding(finding)
        if getattr(finding, "kind", "") != "low_acceptance":
            return
        log = self.log_pane
        mean = (getattr(finding, "data", None) or {}).get("mean_accept_len")
        if log is not None and log.analyzer.engine.in_depth_sweep and (mean is None or mean > ALMOST_NEVER_ACCEPTED):
            return  # a deep sweep configuration accepts a small share of its drafts: the sweep's table says more
        builder = self._deferred_panes.get("builder")  # not built yet: it has no command, so no pairing report
        pairing = getattr(builder, "pairing_report", None) if builder is not None else None
        if pairing is not None and pairing.diagnostics:
            self.notify(f"Low acceptance — pairing check: {markup(pairing.headline())} "
                        f"({key_for(self, 'app.tab_builder')}, pairing section)",
                        severity="warning", timeout=20)
        else:
            self.notify("Low acceptance: check the draft/target pairing — hidden-state layers, tokenizer, chat "
                        f"template ({key_for(self, 'app.tab_builder')} shows the pairing section once the launch "
                        "command names both models; or run specdash pair).", severity="warning", timeout=20)

    def on_builder_pane_command_changed(self, message) -> None:
        self.record_validated(message)
        builder, log_pane = self.builder_pane, self.log_pane
        if builder is not None and log_pane is not None and builder.sglang_version:
            log_pane.set_sglang_version(builder.sglang_version)  # configured or detected on the host, never guessed
        bench = self.bench_pane
        if bench is not None:
            bench.use_command(message.command, message.report.profile.flag_release)
        self.show_port_note()

    def show_port_note(self) -> None:
        """The builder says when its command's port is the followed server's (a server not launched from here):
        ``l`` would be refused (the port is taken), and a server started there another way would fail to bind
        only after loading everything. Nothing once a server launched from here is followed."""
        from specdash.sglang.command_edit import known_launch_port

        builder = self._deferred_panes.get("builder")
        if builder is None or not hasattr(builder, "set_port_note"):
            return
        pid, port, text = self.followed_pid, self.followed_port, ""
        report = getattr(builder, "report", None)
        if pid is not None and port is not None and self.run_handle is None and builder.command.strip():
            release = report.profile.flag_release if report is not None else None
            if known_launch_port(builder.command, release) == port:  # --port 0: not known, nothing said
                text = (f"port {port} is the followed server's (PID {pid}): {key_for(self, 'server.launch')} "
                        "would start a second server that cannot listen on it - change --port before launching")
        builder.set_port_note(text)

    def on_gpu_pane_sampled(self, message) -> None:
        self.record_gpu_sample(message)
        bench = self.bench_pane
        if bench is not None:  # the GPU a benchmark runs on, for its result file (bench list groups by it)
            from specdash.bench.gpu_name import run_gpu_name

            view, handle = message.view, self.run_handle
            used = {p.gpu_index for p in view.processes if p.gpu_index is not None
                    and (p.pgid == handle.pgid if handle is not None else p.process_class == "server")}
            bench.set_gpu_name(run_gpu_name(view.snapshot.gpus, used))

    def on_gpu_pane_kill_finished(self, message) -> None:
        self.record_kill(message)

    def on_bench_pane_run_finished(self, message) -> None:
        self.record_bench(message)

    def on_bench_pane_sweep_finished(self, message) -> None:
        self.record_sweep(message)

    def on_bench_pane_sweep_choice(self, message) -> None:
        """After a sweep the builder shows the command the server goes on with (kept or restored). A kept
        configuration the server already runs (no restart) is recorded as such: from then on it is the user's
        server, whose findings keep their depth-sweep advice (live, replayed, ``replay --summary``)."""
        builder = self._deferred_panes.get("builder")
        if builder is not None:
            builder.set_command(message.command)
        if message.kept and not message.restarted and self.run_handle is not None:
            from specdash.session.events import SWEEP_KEPT_RUNNING

            self.record_command(SWEEP_KEPT_RUNNING, message.command, handle=self.run_handle)
            log = self.log_pane
            if log is not None:
                log.analyzer.engine.in_depth_sweep = False
        self.notify("Kept the fastest configuration: the builder shows its command." if message.kept
                    else "Restored your launch command.")

    def on_log_pane_server_state_changed(self, message) -> None:
        if self.run_handle is not None:
            return  # the lifecycle poller (log + /health + process group) is the better source
        self.log_state_changed(message.state, message.detail)  # and whether a server still writes the log

    # -- keys ---------------------------------------------------------------------------------------
    def on_key(self, event) -> None:
        """Focus owns keys (:mod:`specdash.app.typing_focus`): a printable key typed into an input, the command
        editor or a dropdown never runs a binding outside that widget. Runs before Textual's own key handling
        (which runs the bindings); ``prevent_default`` keeps the binding from running, the widget got the key."""
        if key_blocked(self.focused, event.key, event.character, self.screen.active_bindings):
            event.prevent_default()
            event.stop()
            return
        if self.readonly and typing_widget(self.focused) is None:
            refused = refusal(event.key, self.keymap_overrides)
            if refused:  # the key is hidden (check_action): say why nothing happens
                event.prevent_default()
                event.stop()
                self.notify(refused, severity="warning")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Read-only sessions hide the keys that change the server (footer, help) —
        :mod:`specdash.app.readonly_keys`."""
        return False if hidden(self.readonly, action) else True

    # -- actions ------------------------------------------------------------------------------------
    async def action_show_tab(self, tab: str) -> None:
        tabs = self.query_one(TabbedContent)
        try:
            tabs.active = tab
        except Exception:  # tab absent in this build
            self.notify(f"The {tab} pane is not in this build.", severity="warning")
            return
        if tab in self._deferred_tabs:
            await self.deferred_pane_mounted(tab)  # first switch before it was built: build it, then focus
        self._focus_inside(tabs.get_pane(tab))

    def _focus_inside(self, container) -> None:
        """Focus the first focusable widget in ``container`` so its pane's keys work at once (not when the user has
        switched to another tab meanwhile, e.g. F3 pressed before the first frame)."""
        if isinstance(container, TabPane):
            try:
                if self.query_one(TabbedContent).active != container.id:
                    return
            except NoMatches:
                return
        for widget in container.query("*"):
            if widget.focusable:
                widget.focus()
                return

    def deliver_screenshot(self, filename: str | None = None, path: str | None = None,
                           time_format: str | None = None) -> str | None:
        """Save an SVG screenshot under ``specdash locate screenshots`` (created when missing) and show its path
        (F12 and the palette's "Save screenshot"; Textual's default folder, ~/Downloads, may not exist). Returns the
        file's path, or None when it could not be written (the notice says why)."""
        from specdash.paths import ensure_dir, screenshots_dir

        folder = Path(path) if path else screenshots_dir()
        try:
            saved = self.save_screenshot(filename, str(ensure_dir(folder)), time_format)
            os.chmod(saved, 0o600)  # the screen may show a command with a token in it
        except OSError as exc:
            self.notify(f"Screenshot not saved in {markup(folder)}: {markup(exc.strerror or exc)}", severity="error")
            return None
        self.notify(f"Screenshot saved: {markup(saved)}", title="Screenshot", timeout=15)
        return saved

    def action_focus_gpus(self) -> None:
        pane = self.gpu_pane
        if pane is not None:
            pane.focus()

    def action_help(self) -> None:
        everywhere: dict[str, Binding] = {}  # this app's keys and those it inherits (replay: the console's too)
        for cls in type(self).__mro__:
            for binding in cls.__dict__.get("BINDINGS", []) if issubclass(cls, SpecdashApp) else []:
                everywhere.setdefault(binding.id or f"{binding.key}:{binding.action}", binding)
        sections: list[tuple[str, list]] = [("Everywhere", list(everywhere.values()))]
        for title, cls in (("Log pane", LogPane), ("Launch builder", deferred_class("builder")),
                           ("GPUs and processes", GpuPane), ("Benchmarks", deferred_class("bench"))):
            sections.append((title, list(getattr(cls, "BINDINGS", []))))
        if self.readonly:  # the keys that change the server are off: not advertised
            sections = [(title, [b for b in bindings if getattr(b, "id", None) not in MUTATING_BINDINGS])
                        for title, bindings in sections]
        sections.append(("Command palette", [("ctrl+p", "noop", "Search every command")]))
        self.push_screen(HelpScreen(sections, keymap=self.keymap_overrides, notices=list(self.notice_log.notices)))

    async def _shutdown(self) -> None:
        """Textual's shutdown (also how a Pilot test ends, which calls this private method directly, so no public
        hook runs before it) once :meth:`deferred_mounts_settled`: a pane still composing would otherwise fail."""
        await self.deferred_mounts_settled(timeout_s=3)
        await super()._shutdown()

    async def on_unmount(self) -> None:
        self.close_recording()
        try:
            await self.host.close()
        except Exception:  # closing a dead connection is not an error worth showing
            pass


def run_replay(session_log, speed: float = 1.0) -> int:
    """``specdash replay FILE``: open the console read-only on a recorded session (see
    :func:`specdash.app.replay.run_replay`)."""
    from specdash.app.replay import run_replay as _run_replay

    return _run_replay(session_log, speed)
