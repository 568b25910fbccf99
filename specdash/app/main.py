"""The specdash Textual app: header, one pane per concern, footer; wiring between panes and the host.

Data flows one way — host → core → panes — and commands back — key → action → core → host. This module only
wires: it owns the Host, follows the server log through :class:`specdash.hosts.tail.LogFollower` and hands the
lines to the log pane; each pane renders what the core computes.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
from pathlib import Path

from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widget import MountError
from textual.widgets import Footer, Static, TabbedContent, TabPane

from specdash import __version__
from specdash.app.gc_policy import apply_streaming_gc_policy
from specdash.app.lifecycle import LIFECYCLE_BINDINGS, LifecycleActions, ServerCommands
from specdash.app.modals.help import HelpScreen
from specdash.app.modals.host_key import HostKeyScreen
from specdash.app.recording import RecordingMixin
from specdash.app.status_bar import StatusBar
from specdash.hosts.base import ConnectionStatus, ConnState, Host, HostError, HostKeyChanged, HostKeyUnknown


def _optional(module: str, name: str):
    """The class ``name`` from ``module`` if that pane exists in this build, else None (absent, not faked)."""
    try:
        if importlib.util.find_spec(module) is None:
            return None
    except ModuleNotFoundError:  # parent package absent
        return None
    return getattr(importlib.import_module(module), name, None)


def _package_exists(package: str) -> bool:
    """Whether ``package`` is in this build, found without importing it (its parent must be importable)."""
    try:
        return importlib.util.find_spec(package) is not None
    except ModuleNotFoundError:
        return False


#: Tabs hidden on the first frame: (tab id, tab label, package, pane module, pane class). Importing and composing
#: them costs about as much as the rest of start-up together (httpx, textual-plotext, the validator, the pairing
#: checks, ~100 widgets), so their tabs are created empty and the panes are imported and mounted right after the
#: first frame and the first log lines — or earlier, the moment anything asks for them (see
#: :meth:`SpecdashApp.deferred_pane`).
DEFERRED_TABS: tuple[tuple[str, str, str, str, str], ...] = (
    ("builder", "Launch builder", "specdash.app.builder", "specdash.app.builder.pane", "BuilderPane"),
    ("bench", "Benchmarks", "specdash.app.bench", "specdash.app.bench.pane", "BenchPane"),
)
#: Unless something asks for them sooner, the hidden tabs are built once the followed log's first lines are on
#: screen, or this many seconds after mount, whichever comes first: the log comes before panes nobody sees yet.
DEFERRED_BUILD_AFTER_S = 1.0
#: "On screen": this long after the first batch is fed to the log pane, which paints lines on a timer (1/30 s) and
#: its findings/metrics panels every 0.25 s (specdash.app.log.view.SYNC_INTERVAL_S, .pane.PANEL_REFRESH_S).
LOG_PAINTED_AFTER_S = 0.3


class SpecdashApp(RecordingMixin, LifecycleActions, App):
    """The console. ``host`` is any Host (local, SSH, replay); ``log_path`` the server log to follow on it
    (None: discover the running server's log); ``readonly`` disables every mutating action."""

    CSS_PATH = "app.tcss"
    #: a replay must not record its replayed start-ups as new ones in the start-up history
    readonly_history = False
    COMMANDS = App.COMMANDS | {ServerCommands} | (
        {_optional("specdash.app.gpus.commands", "GpuCommands")} - {None})
    TITLE = "specdash"
    #: False in a replay: the GPU pane shows recorded samples instead of sampling the host.
    gpu_sampling = True
    BINDINGS = [
        Binding("q", "quit", "Quit", show=False, id="app.quit"),
        Binding("ctrl+q", "quit", "Quit", id="app.quit_ctrl"),
        Binding("f1,question_mark", "help", "Help", id="app.help"),
        Binding("f2", "show_tab('log')", "Log", id="app.tab_log"),
        Binding("f3", "show_tab('builder')", "Builder", id="app.tab_builder"),
        Binding("f4", "show_tab('bench')", "Bench", id="app.tab_bench"),
        Binding("f5", "focus_gpus", "GPUs", id="app.focus_gpus"),
        *LIFECYCLE_BINDINGS,
    ]

    def __init__(self, host: Host, *, log_path: str | None = None, readonly: bool = False,
                 known_hosts: str | None = None, gpu_interval_s: float = 2.0, theme: str | None = None,
                 keymap: dict[str, str] | None = None, python: str = "python3",
                 sglang_version: str | None = None) -> None:
        super().__init__()
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
        self._log_pane_cls = _optional("specdash.app.log.pane", "LogPane") or _optional("specdash.app.log", "LogPane")
        self._gpu_pane_cls = _optional("specdash.app.gpus.pane", "GpuPane") or _optional("specdash.app.gpus", "GpuPane")
        #: the deferred tabs in this build (tab id -> its DEFERRED_TABS row); their classes load on first use
        self._deferred_tabs = {row[0]: row for row in DEFERRED_TABS if _package_exists(row[2])}
        self._deferred_panes: dict[str, object] = {}  # tab id -> the pane, once created
        self._deferred_mounts: dict[str, object] = {}  # tab id -> AwaitMount of the pane
        self._session_connected = False  # start_session connected: the deferred panes may be wired to the host
        self._deferred_scheduled = asyncio.Event()  # set once every deferred pane has been created
        self._deferred_build_started = False
        self._wired: set[str] = set()

    # -- layout -----------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        self._status_bar = StatusBar(self.host.name, id="status")
        yield self._status_bar
        with Vertical(id="main"):
            with TabbedContent(id="tabs", initial="log"):
                with TabPane("Log", id="log"):
                    if self._log_pane_cls is not None:
                        from specdash.logs.startup import StartupHistory

                        yield self._log_pane_cls(title=self.log_path or "log", host=self.host.name,
                                                 history=StartupHistory(read_only=self.readonly_history))
                    else:
                        yield Static("log pane unavailable in this build", classes="absent")
                for tab_id, label, *_ in self._deferred_tabs.values():
                    yield TabPane(label, id=tab_id)  # its pane is mounted later: see DEFERRED_TABS
            if self._gpu_pane_cls is not None:
                yield self._gpu_pane_cls(self.host, interval_s=self.gpu_interval_s, readonly=self.readonly,
                                         sample=self.gpu_sampling)
        yield Footer()

    @property
    def status_bar(self) -> StatusBar:
        """The header line (kept as a reference: it stays usable while the app shuts down)."""
        return self._status_bar

    def _pane(self, cls):
        if cls is None:
            return None
        found = self.query(cls)
        return found.first() if found else None

    # -- the tabs built after the first frame ---------------------------------------------------------
    def _deferred_class(self, tab_id: str):
        row = self._deferred_tabs.get(tab_id)
        return _optional(row[3], row[4]) if row else None

    @property
    def _builder_cls(self):
        """BuilderPane (imported on first use), or None when absent from this build."""
        return self._deferred_class("builder")

    @property
    def _bench_cls(self):
        """BenchPane (imported on first use), or None when absent from this build."""
        return self._deferred_class("bench")

    def deferred_pane(self, tab_id: str):
        """The pane of the deferred tab ``tab_id`` ("builder" or "bench"); if it is not built yet, every deferred
        pane is imported and mounted into its tab now (so each is in the DOM from then on). None when the tab is
        absent from this build, the layout is not composed yet or the app is shutting down. The pane exists at
        once and its public methods accept calls before it is mounted (BuilderPane and BenchPane keep the state
        and show it on mount); await :meth:`deferred_pane_mounted` before querying its children."""
        pane = self._deferred_panes.get(tab_id)
        if pane is not None or tab_id not in self._deferred_tabs or not self.is_running:
            return pane  # (nothing is built while the app shuts down)
        for each in self._deferred_tabs:  # in DEFERRED_TABS order: the builder before the bench pane
            self._build_deferred_pane(each)
        return self._deferred_panes.get(tab_id)

    def _build_deferred_pane(self, tab_id: str):
        """Import the pane of ``tab_id``, mount it into its tab and wire it; the pane, or None (see above)."""
        pane = self._deferred_panes.get(tab_id)
        if pane is not None or not self.is_running:
            return pane
        try:
            tab = self.query_one(TabbedContent).get_pane(tab_id)
        except NoMatches:  # not composed yet, or shutting down
            return None
        cls = self._deferred_class(tab_id)
        if cls is None:
            return None
        pane = cls(readonly=self.readonly)
        try:
            self._deferred_mounts[tab_id] = tab.mount(pane)
        except MountError:  # the app is shutting down
            return None
        self._deferred_panes[tab_id] = pane
        self._wire_deferred_panes()
        return pane

    async def deferred_pane_mounted(self, tab_id: str):
        """The pane of ``tab_id`` (built now if need be, alone), once it and its children are mounted; or None."""
        pane = self._build_deferred_pane(tab_id)
        mounting = self._deferred_mounts.get(tab_id)
        if pane is not None and mounting is not None and not pane.is_mounted:
            await mounting
        return pane

    async def deferred_panes_ready(self) -> None:
        """Wait until every deferred pane is built and mounted (by the build after the first frame, or earlier on
        demand). For code that must call methods of the builder or bench pane that query their children."""
        self._start_deferred_build()
        await self._deferred_scheduled.wait()
        for tab_id in self._deferred_tabs:
            await self.deferred_pane_mounted(tab_id)

    def _start_deferred_build(self) -> None:
        """Build the deferred panes after the next refresh, one per refresh (once; later calls do nothing)."""
        if not self._deferred_build_started:
            self._deferred_build_started = True
            self.call_after_refresh(self._build_deferred_panes)

    def _build_deferred_panes(self) -> None:
        """After the first frame: build the hidden tabs' panes one per refresh, so the screen stays live."""
        for tab_id in self._deferred_tabs:
            if tab_id not in self._deferred_panes:
                if self._build_deferred_pane(tab_id) is not None:
                    self.call_after_refresh(self._build_deferred_panes)
                    return
        self._deferred_scheduled.set()

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
        bench = self._deferred_panes.get("bench")
        if bench is not None and "bench" not in self._wired:
            self._wired.add("bench")
            if self.log_pane is not None:
                bench.log_accept_samples = lambda: self.log_pane.analyzer.metrics.values("accept_len")
            bench.restart_server = self.restart_for_sweep
            if builder is not None:
                bench.base_command = builder.command or None

    @on(TabbedContent.TabActivated)
    def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        """A hidden tab shown (key or mouse) before its pane was built: build it now."""
        tab_id = getattr(event.pane, "id", None)
        if tab_id in self._deferred_tabs:
            self._build_deferred_pane(tab_id)

    @property
    def log_pane(self):
        """The LogPane, or None when absent from this build."""
        return self._pane(self._log_pane_cls)

    @property
    def gpu_pane(self):
        """The GpuPane, or None."""
        return self._pane(self._gpu_pane_cls)

    @property
    def builder_pane(self):
        """The BuilderPane (built now if the first frame has not been drawn yet), or None when absent."""
        return self.deferred_pane("builder")

    @property
    def bench_pane(self):
        """The BenchPane (built now if the first frame has not been drawn yet), or None when absent."""
        return self.deferred_pane("bench")

    def on_mount(self) -> None:
        apply_streaming_gc_policy()  # no full-collection pauses every few seconds under a busy log
        self.call_after_refresh(self._focus_inside, self.query_one(TabbedContent).get_pane("log"))
        self.set_timer(DEFERRED_BUILD_AFTER_S, self._start_deferred_build)
        self.status_bar.connection = self.host.status
        if self.readonly:
            self.status_bar.mode = "read-only"
        self.host.add_state_listener(self._on_host_state)
        self.start_recording_hooks()
        self.start_session()

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
        self.run_handle = runs[0]
        self._server_alive = True
        if self.gpu_pane is not None:
            self.gpu_pane.set_server_pgids({runs[0].pgid})
        self._poll_server()
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
                    self.host._set_status(ConnectionStatus(ConnState.FAILED, "host key not trusted"))
                    self.notify("Host key not trusted: not connected.", severity="warning")
                    return False
                trust_host_key(known_hosts, exc.host, exc.port, exc.public_key_line)
                self.notify(f"Added {exc.key_type} key of {exc.host} to {known_hosts}.")
            except HostKeyChanged as exc:
                self.host._set_status(ConnectionStatus(ConnState.FAILED, "host key changed"))
                self.notify(str(exc), title="Host key changed: refused", severity="error", timeout=30)
                return False
            except HostError as exc:
                self.host._set_status(ConnectionStatus(ConnState.FAILED, str(exc)))
                self.notify(str(exc), title="Cannot connect", severity="error", timeout=30)
                return False

    async def _discover_log(self) -> str | None:
        pane = self.log_pane
        try:
            from specdash.logs.discover import discover_server_log
        except ImportError:
            discover_server_log = None
        if discover_server_log is not None:
            found = await discover_server_log(self.host)
            if getattr(found, "path", None):
                if pane is not None:
                    pane.reset(found.path)
                return found.path
            message = getattr(found, "explanation", None) or "no running SGLang server found"
        else:
            message = "no --log given"
        self._log_marker(f"{message}; start specdash with --log PATH to follow a file")
        return None

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
        self._follow(path)

    @work(group="follow", exclusive=True)
    async def _follow(self, path: str) -> None:
        from specdash.hosts.tail import LogFollower, TailLines, TailMarker, TailPartial

        pane = self.log_pane
        async with LogFollower(self.host, path) as follower:
            async for event in follower:
                if pane is None:
                    continue
                if isinstance(event, TailLines):
                    texts = [line.decode("utf-8", "replace").rstrip("\r") for line in event.lines]
                    self.record_log_batch(event.lines, texts, event.end_offset, path)
                    pane.feed(texts)
                    if not self._deferred_build_started:  # the first lines get painted, then the hidden tabs
                        self.set_timer(LOG_PAINTED_AFTER_S, self._start_deferred_build)
                elif isinstance(event, TailMarker):
                    self.record_marker(event.text)
                    self._log_marker(event.text)
                elif isinstance(event, TailPartial):  # a capture bar updating in place: progress and ETA
                    text = event.text.decode("utf-8", "replace")
                    self.record_partial(text, path)
                    pane.partial(text)

    def on_log_pane_finding_added(self, message) -> None:
        """Low acceptance in the log: point at the builder's draft/target pairing check and what it found
        (a draft fed the wrong hidden layers looks exactly like this, and no log line says so)."""
        finding = message.finding
        if getattr(finding, "kind", "") != "low_acceptance":
            return
        builder = self._deferred_panes.get("builder")  # not built yet: it has no command, so no pairing report
        pairing = getattr(builder, "pairing_report", None) if builder is not None else None
        if pairing is not None and pairing.diagnostics:
            self.notify(f"Low acceptance — pairing check: {pairing.headline()} (F3, pairing section)",
                        severity="warning", timeout=20)
        else:
            self.notify("Low acceptance: check the draft/target pairing — hidden-state layers, tokenizer, chat "
                        "template (F3 shows the pairing section once the launch command names both models; "
                        "or run specdash pair).", severity="warning", timeout=20)

    def on_builder_pane_command_changed(self, message) -> None:
        bench = self.bench_pane
        if bench is not None:
            bench.base_command = message.command or None

    def on_log_pane_server_state_changed(self, message) -> None:
        if self.run_handle is not None:
            return  # the lifecycle poller (log + /health + process group) is the better source
        self.status_bar.server_state = message.state
        self.status_bar.server_detail = message.detail

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

    def action_focus_gpus(self) -> None:
        if self._gpu_pane_cls is not None:
            self.query_one(self._gpu_pane_cls).focus()

    def action_help(self) -> None:
        everywhere: dict[str, Binding] = {}  # this app's keys and those it inherits (replay: the console's too)
        for cls in type(self).__mro__:
            for binding in cls.__dict__.get("BINDINGS", []) if issubclass(cls, SpecdashApp) else []:
                everywhere.setdefault(binding.id or f"{binding.key}:{binding.action}", binding)
        sections: list[tuple[str, list]] = [("Everywhere", list(everywhere.values()))]
        for title, cls in (("Log pane", self._log_pane_cls), ("Launch builder", self._builder_cls),
                           ("GPUs and processes", self._gpu_pane_cls), ("Benchmarks", self._bench_cls)):
            if cls is not None:
                sections.append((title, list(getattr(cls, "BINDINGS", []))))
        sections.append(("Command palette", [("ctrl+p", "noop", "Search every command")]))
        self.push_screen(HelpScreen(sections, keymap=self.keymap_overrides))

    async def _deferred_mounts_settled(self, timeout_s: float) -> None:
        """Return once no deferred pane is still being mounted (or after ``timeout_s``): closing the app under a
        pane that is composing refuses its children, and the pane's on_mount then fails with a traceback."""
        pending = [mounting for tab_id, mounting in self._deferred_mounts.items()
                   if not self._deferred_panes[tab_id].is_mounted]
        if not pending:
            return

        async def _mounted(mounting) -> None:
            await mounting

        try:
            await asyncio.wait_for(asyncio.gather(*(_mounted(m) for m in pending)), timeout=timeout_s)
        except asyncio.TimeoutError:  # close anyway
            pass

    async def action_quit(self) -> None:
        """``q``: quit — once a pane being mounted right after the first frame has finished (a fraction of a
        second; the app keeps running meanwhile)."""
        if any(not pane.is_mounted for pane in self._deferred_panes.values()):
            self.run_worker(self._quit_when_mounted(), group="quit", exclusive=True)
            return
        self.exit()

    async def _quit_when_mounted(self) -> None:
        await self._deferred_mounts_settled(timeout_s=5)
        self.exit()

    async def _shutdown(self) -> None:
        """Textual's shutdown (also how a Pilot test ends), after :meth:`_deferred_mounts_settled`."""
        await self._deferred_mounts_settled(timeout_s=3)
        await super()._shutdown()

    async def on_unmount(self) -> None:
        try:
            await self.host.close()
        except Exception:  # closing a dead connection is not an error worth showing
            pass


def version_line() -> str:
    return f"specdash {__version__}"


def run_replay(session_log, speed: float = 1.0) -> int:
    """``specdash replay FILE``: open the console read-only on a recorded session (see
    :func:`specdash.app.replay.run_replay`)."""
    from specdash.app.replay import run_replay as _run_replay

    return _run_replay(session_log, speed)
