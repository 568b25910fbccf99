"""The server lifecycle keys of the app: ``l`` launch, ``L`` launch despite errors, ``x`` stop, ``r`` restart.

A mixin for :class:`specdash.app.main.SpecdashApp`: it takes the builder's command, launches it on the host
through :mod:`specdash.server` (detached, own process group, per-run log), switches the log pane to the new
run's log, tells the GPU pane which process group is the server, and polls the server's state for the header.
Every mutating action checks ``readonly`` itself and asks before it stops or kills anything.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

from textual import work
from textual.binding import Binding

from specdash.app.keymap import key_for
from specdash.app.modals.confirm import ConfirmScreen
from specdash.app.readonly_keys import refusal_text
from specdash.hosts.base import Host
from specdash.logs.state import ServerState
from specdash.session.events import SWEEP_KEPT, SWEEP_RESTARTED, SWEEP_RESTORED
from specdash.sglang.command import on_one_line, parse_command
from specdash.text.display import markup
from specdash.text.redaction import redact_text

#: Seconds between two polls of the launched server's state (process group and log tail, one Host.run).
SERVER_POLL_S = 2.0
#: seconds between SIGTERM and SIGKILL when x or r stops the server (:func:`specdash.server.stop`)
STOP_GRACE_S = 15.0
#: Once the server was seen ready, ``/health`` is asked on every this many polls only (one access line per minute).
HEALTH_EVERY_POLLS = 30

LIFECYCLE_BINDINGS = [
    Binding("l", "launch(False)", "Launch", id="server.launch"),
    Binding("L", "launch(True)", "Launch despite errors", show=False, id="server.launch_force"),
    Binding("x", "stop_server", "Stop", id="server.stop"),
    Binding("r", "restart_server", "Restart", id="server.restart"),
]


class LifecycleApp(Protocol):
    """What :class:`LifecycleActions` needs from the app it is mixed into (besides Textual's ``App``)."""

    host: Host
    readonly: bool
    status_bar: Any  # specdash.app.status_bar.StatusBar: server_state / server_detail
    builder_pane: Any = None  # BuilderPane | None: the command and its validation report (a property of the app)
    bench_pane: Any = None  # BenchPane | None: gets the server's URL (a property of the app)
    gpu_pane: Any  # GpuPane | None: told which process group is the server
    log_pane: Any  # LogPane | None: told when the server is gone (its start-up bar stops)

    def follow(self, path: str, *, reset: bool = True) -> None:
        """Follow ``path`` on the host in the log pane."""

    def record_command(self, action: str, command: str | None, *, handle: Any = None, report: Any = None,
                       exit_reason: str | None = None) -> None:
        """Record a lifecycle command in the session (:class:`specdash.app.recording.RecordingMixin`)."""

    # Textual's App
    def notify(self, message: str, *, title: str = "", severity: Any = "information",
               timeout: float | None = None, markup: bool = True) -> None:
        return None

    def push_screen(self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False, *,
                    mode: str | None = None) -> Any:
        return None


if TYPE_CHECKING:  # the mixin is type-checked as the app it is mixed into
    from specdash.server.run_handle import RunHandle

    _Base = LifecycleApp
else:
    _Base = object


#: the title of the question ``q`` asks while a depth sweep runs
QUIT_DURING_SWEEP = "Quit during the depth sweep?"


class LifecycleActions(_Base):
    """Mixin for the app (needs :class:`LifecycleApp`): the lifecycle keys and the sweep's restart hook."""

    run_handle: RunHandle | None = None  # the server specdash launched, if any
    followed_pid: int | None = None  # a followed server not launched from this console (the app sets it)

    def _refuse_readonly(self, what: str) -> bool:
        if self.readonly:
            self.notify(refusal_text(what), severity="warning")
            return True
        return False

    def _builder_command(self) -> tuple[str | None, int]:
        pane = self.builder_pane
        if pane is None:
            return None, 0
        report = getattr(pane, "report", None)
        errors = sum(1 for d in getattr(report, "diagnostics", []) if d.severity == "error") if report else 0
        return (pane.command or "").strip() or None, errors

    def _flag_release(self) -> str | None:
        """The flag-table release whose argparse reads the builder's command (the builder's SGLang version, probed
        on the host or typed); None (the newest) without a builder."""
        report = getattr(self.builder_pane, "report", None)
        return report.profile.flag_release if report is not None else None

    def action_launch(self, force: bool = False) -> None:
        if self._refuse_readonly("launching a server"):
            return
        command, errors = self._builder_command()
        if command is None:
            self.notify("Nothing to launch: write the launch command in the builder "
                        f"({key_for(self, 'app.tab_builder')}).", severity="warning")
            return
        if errors and not force:
            self.notify(f"The builder shows {errors} error(s): SGLang would refuse or crash. Fix them, or press "
                        f"{key_for(self, 'server.launch_force')} to launch anyway.", severity="error", timeout=10)
            return
        if self.run_handle is not None and self._server_alive:
            self.notify(f"A server launched from here is still running: press {key_for(self, 'server.restart')} to "
                        f"restart or {key_for(self, 'server.stop')} to stop it.", severity="warning")
            return
        self._checked_launch(command)

    @work(group="launch-check", exclusive=True)
    async def _checked_launch(self, command: str) -> None:
        """Launch ``command`` unless its port is taken on the host (said, nothing started); ask first when other
        processes already hold much of the GPUs it will use."""
        busy = await self._port_taken(command)
        if busy:
            self.notify(busy, severity="error", timeout=20)
            return
        crowded = self._launch_room()
        if crowded:  # other processes already hold much of the GPUs it will use: say so with the figures, ask
            self.push_screen(ConfirmScreen("Launch onto GPUs already in use?", markup(crowded), "Launch"),
                             lambda yes: self._launch(command) if yes else None)
            return
        self._launch(command)

    def _launch_room(self: Any) -> str:
        """The warning about the GPUs the builder's command will use that already hold memory (plain text, from the
        GPU pane's latest sample: :mod:`specdash.gpu.launch_room`), or ""."""
        from specdash.gpu.launch_room import launch_room

        pane, builder = self.gpu_pane, self.builder_pane
        report = getattr(builder, "report", None)
        view = getattr(pane, "view", None)
        if report is None or view is None or report.command is None:
            return ""
        return launch_room(view.snapshot, dict(report.effective), report.command.env_dict()).describe()

    @work(group="lifecycle", exclusive=True)
    async def _launch(self, command: str) -> None:
        from specdash.server import launch

        busy = await self._port_taken(command)  # again: the port may have been taken while the dialog waited
        if busy:
            self.notify(busy, severity="error", timeout=20)
            return
        try:
            handle = await launch(self.host, command, flag_release=self._flag_release())
        except Exception as exc:  # noqa: BLE001 - a failed launch is shown, never fatal
            self.notify(f"Launch failed: {markup(exc)}", severity="error", timeout=15)
            return
        self.record_command("launched", command, handle=handle)
        self._adopt(handle)
        self.notify(f"Launched (PGID {handle.pgid}); log: {markup(handle.log_path)}")

    async def _port_taken(self, command: str, restart: bool = False) -> str | None:
        """Why ``command`` cannot listen on its port (another process already does, on the host), or None (free, or
        unknown: the launch goes ahead). SGLang starts its HTTP server last, so a busy port fails only after the
        whole start-up; the followed server is named when it is the one on that port. ``restart``: said for ``r``
        (nothing was stopped)."""
        from specdash.server.port_check import port_in_use
        from specdash.sglang.command_edit import flag_value, known_launch_port

        release = self._flag_release()
        port = known_launch_port(command, release)
        if port is None:  # --port 0, 70000, ...: no port this check can ask about; unknown, the launch goes ahead
            return None
        bind_host = flag_value(command, "--host", release)
        taken = await port_in_use(self.host, port, bind_host if isinstance(bind_host, str) else None,
                                  getattr(self, "host_python", "python3"))
        if not taken:
            return None
        followed = getattr(self, "followed_pid", None)
        who = (f"the followed server (PID {followed}) listens on it" if followed is not None
               and getattr(self, "followed_port", None) == port else "another process listens on it")
        if restart:
            return (f"Not restarted (the server keeps running): port {port} is in use on {markup(self.host.name)} "
                    f"({who}); the new server would fail only after loading everything. Change --port in the builder "
                    f"({key_for(self, 'app.tab_builder')}), then {key_for(self, 'server.restart')}.")
        return (f"Not launched: port {port} is in use on {markup(self.host.name)} ({who}); the server would fail "
                f"only after loading everything. Change --port in the builder ({key_for(self, 'app.tab_builder')}), "
                f"then {key_for(self, 'server.launch')}.")

    def _adopt(self, handle) -> None:
        """Make ``handle`` the server of this session: follow its log, mark its group, poll its state."""
        self.run_handle = handle
        self._server_alive = True
        self.followed_pid = None  # the server followed now is this console's
        show_port_note = getattr(self, "show_port_note", None)
        if show_port_note is not None:
            show_port_note()  # no followed server's port to warn about any more
        bench = self.bench_pane
        if bench is not None:
            bench.followed_elsewhere = ""
        if self.gpu_pane is not None:
            self.gpu_pane.set_server_pgids({handle.pgid})
        self._expect_config(handle)
        self.follow(handle.log_path)
        log = self.log_pane
        if bench is not None and bench.sweeping and log is not None:  # a sweep's configuration: no advice to sweep
            log.analyzer.engine.in_depth_sweep = True
        self._poll_server()
        self._connect_bench(handle)

    def _expect_config(self, handle) -> None:
        """Tell the log pane what specdash predicts ``handle``'s command runs (the builder's SGLang release and
        config.json), so a server_args line that says otherwise becomes a finding."""
        from specdash.sglang.validate import validate_command

        if self.log_pane is None or not getattr(handle, "command", None):
            return
        builder = self.builder_pane
        report = validate_command(handle.command, getattr(builder, "sglang_version", None),
                                  getattr(builder, "model_config", None))
        self.log_pane.expect_config(handle.log_path, report.effective)

    @work(group="bench-url", exclusive=True)
    async def _connect_bench(self, handle) -> None:
        """Point the bench pane at the server's HTTP port (through an SSH forward for remote hosts)."""
        bench = self.bench_pane
        if bench is None:
            return
        try:
            bench.server_url = await self.host.forward_port(handle.port)
            bench.server_address = f"{self.host.name}:{handle.port}"  # the tunnel's local port is not the server's
        except Exception as exc:  # noqa: BLE001 - benchmarks unavailable, the rest works
            self.notify(f"Benchmarks cannot reach the server: {markup(exc)}", severity="warning")

    async def restart_for_sweep(self, command: str, action: str = SWEEP_RESTARTED) -> str:
        """For the depth sweep: (re)start the server with ``command``, wait until ready, return its base URL.
        ``action``: what the session records - :data:`SWEEP_RESTARTED` (a sweep configuration), or at the sweep's
        end :data:`SWEEP_KEPT` / :data:`SWEEP_RESTORED` (the kept configuration / the user's own command: that
        server's findings keep their depth-sweep advice, live and replayed).

        Raises RuntimeError (one line) when the old server's memory is not released or the new one crashes.
        """
        from specdash.gpu.group_memory import memory_held_by_group
        from specdash.gpu.sampler import make_sampler
        from specdash.server import ServerState, launch, restart, wait_for_state

        if self.readonly:
            raise RuntimeError("read-only session: the sweep cannot restart the server")

        bench = self.bench_pane
        name = (bench.sweep_config_of(command) if bench is not None else None) or ""  # kept in run.json

        async def restart_and_adopt():
            if self.run_handle is not None and self._server_alive:
                sampler = make_sampler(self.host)
                try:
                    result = await restart(
                        self.host, self.run_handle, command=command, flag_release=self._flag_release(),
                        gpu_memory_held_by=lambda pgid: memory_held_by_group(self.host, pgid, sampler.sample_once),
                        sweep_config=name)
                finally:
                    await sampler.close()
                if result.new_handle is None:
                    raise RuntimeError(result.describe())
                handle = result.new_handle
            else:
                handle = await launch(self.host, command, flag_release=self._flag_release(), sweep_config=name)
            # before its log's lines: a replay then knows this log is a sweep configuration's
            self.record_command(action if action in (SWEEP_KEPT, SWEEP_RESTORED) else SWEEP_RESTARTED, command,
                                handle=handle)
            self._adopt(handle)
            return handle

        # a cancelled sweep (x, r, esc) never leaves a half-done restart: the restart runs to its end and its server
        # is adopted; x and r wait for it (_settle_restart) before they act on the server
        self._pending_restart = asyncio.ensure_future(restart_and_adopt())
        self._pending_restart.add_done_callback(lambda t: t.cancelled() or t.exception())  # reported by the await
        handle = await asyncio.shield(self._pending_restart)
        status = await wait_for_state(self.host, handle, {ServerState.READY, ServerState.CRASHED,
                                                          ServerState.STOPPED}, timeout_s=3600)
        if status.state is not ServerState.READY:
            raise RuntimeError(f"server did not become ready: {status.describe()}")
        return await self.host.forward_port(handle.port)

    @work(group="server-poll", exclusive=True)
    async def _poll_server(self) -> None:
        """Poll the state of the server for the header (its one source while a handle is known): every
        :data:`SERVER_POLL_S` the process group and the log tail; HTTP only once the log shows the ready line, the
        server info once (an endpoint answering 404 is remembered), and once it was seen ready ``/health`` only
        every :data:`HEALTH_EVERY_POLLS` polls, so the followed log is not filled with specdash's own requests."""
        from specdash.server import ServerState, server_status
        from specdash.server.probe import ProbeMemory

        handle = self.run_handle
        memory = ProbeMemory()
        ready_detail: str | None = None  # the detail of the first ready reading (version, algorithm)
        polls = 0
        while handle is not None and handle is self.run_handle:
            polls += 1
            seen_ready = ready_detail is not None
            try:
                status = await server_status(self.host, handle, memory=memory, info=not seen_ready,
                                             http=not seen_ready or polls % HEALTH_EVERY_POLLS == 0)
            except Exception as exc:  # noqa: BLE001 - connection trouble: keep polling
                self.status_bar.server_detail = f"status unknown: {exc}"
            else:
                if status.state is ServerState.READY and ready_detail is None:
                    ready_detail = status.detail
                elif status.state is not ServerState.READY:
                    ready_detail = None  # a new start (or trouble): ask again once it is ready
                self.status_bar.server_state = status.state
                detail = (ready_detail or "") if status.state is ServerState.READY else status.detail
                note = self._serving_note(gone=status.state in (ServerState.CRASHED, ServerState.STOPPED))
                # the note first: a narrow header cuts the detail's end
                self.status_bar.server_detail = f"{note}; {detail}" if detail and note else detail or note
                self._server_alive = status.state in (ServerState.STARTING, ServerState.READY)
                if status.state in (ServerState.CRASHED, ServerState.STOPPED) and self.gpu_pane is not None:
                    self.gpu_pane.set_server_pgids(set())  # what is left of its group is orphaned, not a server
                if status.state is ServerState.CRASHED and status.alive_pids:
                    self.notify(f"Server crashed; {len(status.alive_pids)} of its processes are still alive and may "
                                f"hold GPU memory: in the GPU pane ({key_for(self, 'app.focus_gpus')}), "
                                f"{key_for(self, 'gpus.kill')} on one of its orphans cleans up the whole crashed "
                                "server (every verified process of its group).", severity="error",
                                timeout=20)
                if status.state in (ServerState.CRASHED, ServerState.STOPPED):
                    if self.log_pane is not None:
                        self.log_pane.server_gone()  # no start-up progress or ETA for a server that is gone
                    return
            await asyncio.sleep(SERVER_POLL_S)

    def _serving_note(self, gone: bool = False) -> str:
        """``"runs sweep config chain-5, not the builder's command"`` while the server launched from here runs a
        configuration of a depth sweep (during the sweep, or after it ended without restoring the builder's
        command); ``"was sweep config chain-5, …"`` once that server is ``gone`` (stopped or crashed); else ""."""
        handle = self.run_handle
        name = self._sweep_config_served()
        if not name or handle is None:
            return ""
        if handle.command == self._builder_command()[0]:
            # kept at the end of the sweep (builder and server agree); re-attached, the run dir says it
            return "" if self._sweep_config_of_this_session(handle) else \
                f"{'was' if gone else 'runs'} sweep config {name} of a depth sweep"
        return f"{'was' if gone else 'runs'} sweep config {name}, not the builder's command"

    def _sweep_config_of_this_session(self, handle: Any) -> str | None:
        bench = self.bench_pane
        return bench.sweep_config_of(handle.command) if bench is not None else None

    def _sweep_config_served(self) -> str | None:
        """The name of the depth sweep configuration the server launched from here runs (a sweep of this session
        started it, or its run dir says so: ``run.json``'s ``sweep_config``), else None."""
        handle = self.run_handle
        if handle is None:
            return None
        return self._sweep_config_of_this_session(handle) or getattr(handle, "sweep_config", "") or None

    def action_stop_server(self) -> None:
        if self._refuse_readonly("stopping the server"):
            return
        handle = self.run_handle
        if handle is None:
            if self.followed_pid is not None:
                self.notify(f"{key_for(self, 'server.stop')} stops only a server launched from this console; the "
                            f"followed server (PID {self.followed_pid}) was not: stop it where it was started (or "
                            f"{key_for(self, 'gpus.kill')} in the GPU pane, {key_for(self, 'app.focus_gpus')}).",
                            severity="warning")
                return
            self.notify("No server launched from this session (use the GPU pane's K for other processes).",
                        severity="warning")
            return
        if self.status_bar.stopping:  # a second x while the first stop runs: say so (it used to do nothing)
            self.notify(f"Already stopping: {self.status_bar.stopping}.", timeout=5)
            return
        in_flight = self._restart_in_flight()
        if in_flight is not None:  # the group named now would be the one the restart already stopped
            details = (f"The server the depth sweep's restart in flight is starting ({markup(in_flight)}) on "
                       f"{markup(self.host.name)}: its process group, once the restart has finished\n"
                       f"SIGTERM to the group, SIGKILL after {STOP_GRACE_S:g} s." + self._sweep_note())
        else:
            details = (f"Process group [b]{handle.pgid}[/b] (leader PID {handle.leader_pid}) on "
                       f"{markup(self.host.name)}\n"
                       f"{markup(redact_text(parse_command(handle.command).launcher or 'server'))} … port "
                       f"{handle.port}\nSIGTERM to the group, SIGKILL after {STOP_GRACE_S:g} s." + self._sweep_note())
        self._hold_sweep()
        self.push_screen(ConfirmScreen("Stop the server?", details, "Stop"), self._confirmed_stop)

    @staticmethod
    def _changes_note(running: str, new: str | None) -> str:
        """A line for the restart dialog naming the flags in which ``new`` (the builder's command) differs from the
        ``running`` server's command, e.g. ``--port 48015 -> 58879``; "" when they are the same (or no new one)."""
        if not new or on_one_line(new) == on_one_line(running):
            return ""
        from specdash.bench.compare import compare_commands

        rows = compare_commands(running, new)["flags"]
        if not rows:
            return ""
        shown = ", ".join(f"{r['flag']} {r['a'] if r['a'] is not None else '(not set)'} -> "
                          f"{r['b'] if r['b'] is not None else '(not set)'}" for r in rows[:6])
        more = f" and {len(rows) - 6} more" if len(rows) > 6 else ""
        return f"\nNot the running server's command: {markup(shown)}{more}."

    def _restart_in_flight(self) -> str | None:
        """The sweep configuration a depth sweep's restart in flight is starting (``run_handle`` still names the
        group it stopped), else None."""
        pending = getattr(self, "_pending_restart", None)
        at = getattr(self.bench_pane, "sweeping", None) if self.bench_pane is not None else None
        if pending is None or pending.done() or not at:
            return None
        return f"sweep config {at[2]}"

    def _sweep_note(self) -> str:
        """A line for a stop/restart dialog while a depth sweep runs (it is cancelled first), else ""."""
        at = getattr(self.bench_pane, "sweeping", None) if self.bench_pane is not None else None
        if not at:
            return ""
        k, n, name = at
        return f"\nThis cancels the depth sweep (config {k} of {n}, {markup(name)}); measured configs are kept."

    def _cancel_sweep(self) -> None:
        if self.bench_pane is not None and getattr(self.bench_pane, "sweeping", None):
            self.bench_pane.cancel_sweep()

    def _hold_sweep(self) -> None:
        """While the stop/restart question is open, a running depth sweep starts no new restart or run (the one in
        flight goes on), so the question stays true and no end-of-sweep question lands on top of it."""
        if self.bench_pane is not None and getattr(self.bench_pane, "sweeping", None):
            self.bench_pane.hold_sweep()

    def _release_sweep(self) -> None:
        if self.bench_pane is not None:
            self.bench_pane.release_sweep()

    def ask_before_quitting(self) -> bool:
        """``q`` while a depth sweep runs: hold the sweep and ask (as ``x``/``r`` do), naming the configuration the
        server is left running; True when the question is shown (its answer quits or lets the sweep go on)."""
        bench = self.bench_pane
        at = getattr(bench, "sweeping", None) if bench is not None else None
        handle = self.run_handle
        if not at or handle is None or self.readonly:
            return False
        app: Any = self  # Textual's App
        if isinstance(app.screen, ConfirmScreen) and app.screen.question == QUIT_DURING_SWEEP:
            return True
        k, n, name = at
        pending = self._pending_restart
        # a restart in flight runs to its end (quitting waits for it): its configuration is the one left running
        in_flight = pending is not None and not pending.done()
        left = name if in_flight else bench.sweep_config_of(handle.command)
        runs = f"sweep config {markup(left)}, not your command" if left else "your command"
        where = ("once the restart in flight to it has finished" if in_flight
                 else f"process group {handle.pgid}, port {handle.port}")
        details = (f"This cancels the depth sweep (config {k} of {n}, {markup(name)}); measured configs are kept "
                   f"({key_for(self, 'bench.sweep')} resumes it).\nThe server is left running [b]{runs}[/b] ({where}). "
                   "To run your command again: "
                   f"{key_for(self, 'server.restart')} here, or after `specdash connect {markup(self.host.name)}` "
                   f"re-attaches it, restarts it with the builder's command; {key_for(self, 'server.stop')} stops it.")
        self._hold_sweep()
        self.push_screen(ConfirmScreen(QUIT_DURING_SWEEP, details, "Quit", "Keep working"), self._confirmed_quit)
        return True

    def _confirmed_quit(self, yes: bool | None) -> None:
        if yes:
            app: Any = self  # Textual's App
            app.run_worker(self._quit_after_sweep(), group="quit", exclusive=True)
        else:
            self._release_sweep()

    async def _quit_after_sweep(self) -> None:
        await self._settle_restart()
        self._cancel_sweep()
        self.remember_serving()
        app: Any = self  # Textual's App
        app.exit()

    def remember_serving(self) -> None:
        """Note, while the panes still exist, which sweep configuration (if any) the server launched from here
        runs instead of the builder's command, and the builder's command: :meth:`exit_note` says both."""
        handle = self.run_handle
        name = self._sweep_config_served()
        builder = self._builder_command()[0]
        self._serving_at_exit = (name, builder) if name and handle is not None and handle.command != builder \
            else None

    _serving_at_exit: tuple[str, str | None] | None = None

    def _confirmed_stop(self, yes: bool | None) -> None:
        if yes:
            self._cancel_sweep()
            self._stop()
        else:
            self._release_sweep()

    async def _settle_restart(self) -> None:
        """Wait for a restart a cancelled sweep left running (its server is then this session's)."""
        pending = getattr(self, "_pending_restart", None)
        if pending is not None and not pending.done():
            self.notify("Waiting for the restart in progress to finish first…", timeout=5)
            await asyncio.wait({pending})

    @work(group="lifecycle", exclusive=True)
    async def _stop(self) -> None:
        from specdash.server import stop

        await self._settle_restart()
        handle = self.run_handle
        if handle is None:  # gone while the restart settled
            return
        self.status_bar.stopping = f"SIGTERM sent to process group {handle.pgid}; SIGKILL after {STOP_GRACE_S:g} s"
        try:
            result = await stop(self.host, handle, grace_s=STOP_GRACE_S)
        finally:
            self.status_bar.stopping = ""
        self.record_command("stopped", handle.command, handle=handle, exit_reason=result.describe())
        self._server_alive = False
        self.notify(result.describe(), severity="information" if result.gone else "warning", timeout=10)

    def action_restart_server(self) -> None:
        if self._refuse_readonly("restarting the server"):
            return
        if self.run_handle is None:
            if self.followed_pid is not None:  # never a second server next to one started elsewhere, unasked
                self.notify(f"{key_for(self, 'server.restart')} restarts only a server launched from this console; "
                            f"the followed server (PID {self.followed_pid}) was not. {key_for(self, 'server.launch')} "
                            "launches a new server from the builder's command.",
                            severity="warning")
                return
            self.action_launch(False)
            return
        command, errors = self._builder_command()
        if errors:
            self.notify(f"The builder shows {errors} error(s): fix them before restarting.", severity="error")
            return
        in_flight = self._restart_in_flight()
        if in_flight is not None:
            first = (f"Let the depth sweep's restart in flight finish ({markup(in_flight)}), stop that server, wait "
                     "until its GPU memory is released, then launch:")
        elif self.status_bar.server_state == ServerState.STOPPED:  # its processes are gone: nothing to stop
            first = f"Process group {self.run_handle.pgid} is no longer running. Launch:"
        else:
            first = (f"Stop process group [b]{self.run_handle.pgid}[/b], wait until its GPU memory is released, "
                     "then launch:")
        details = (f"{first}\n{markup(on_one_line(command or self.run_handle.command))}"
                   + self._changes_note(self.run_handle.command, command) + self._sweep_note())
        self._hold_sweep()
        self.push_screen(ConfirmScreen("Restart the server?", details, "Restart"), self._confirmed_restart(command))

    def _confirmed_restart(self, command: str | None):
        def answered(yes: bool | None) -> None:
            if yes:
                self._cancel_sweep()
                self._restart(command)
            else:
                self._release_sweep()
        return answered

    @work(group="lifecycle", exclusive=True)
    async def _restart(self, command: str | None) -> None:
        from specdash.gpu.group_memory import memory_held_by_group
        from specdash.gpu.sampler import make_sampler
        from specdash.server import restart
        from specdash.sglang.command_edit import known_launch_port

        await self._settle_restart()
        handle = self.run_handle
        if handle is None:  # gone while the restart settled
            return
        if command and known_launch_port(command, self._flag_release()) not in (None, handle.port):
            busy = await self._port_taken(command, restart=True)  # a new port: checked before anything is stopped
            if busy:
                self.notify(busy, severity="error", timeout=20)
                return
        sampler = make_sampler(self.host)
        self.status_bar.stopping = (f"restart: SIGTERM sent to process group {handle.pgid}; SIGKILL after "
                                    f"{STOP_GRACE_S:g} s, then the launch")
        try:
            result = await restart(
                self.host, handle,
                gpu_memory_held_by=lambda pgid: memory_held_by_group(self.host, pgid, sampler.sample_once),
                command=command, flag_release=self._flag_release(), grace_s=STOP_GRACE_S)
        finally:
            self.status_bar.stopping = ""
            await sampler.close()
        if result.new_handle is None:
            self.notify(f"{markup(result.describe())} — tag what still holds memory in the GPU pane and press "
                        f"{key_for(self, 'gpus.kill')}, then {key_for(self, 'server.launch')} to launch.",
                        severity="error", timeout=20)
            return
        self.record_command("restarted", command, handle=result.new_handle)
        self._adopt(result.new_handle)
        self.notify(result.describe())

    _server_alive = False
    _pending_restart: asyncio.Future | None = None
