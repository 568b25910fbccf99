"""LocalHost: the Host interface on this machine, with asyncio subprocesses."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncGenerator

from specdash.hosts.base import CommandResult, ConnectionStatus, ConnState, Host
from specdash.hosts.wrapper import wrap_command


class LocalHost(Host):
    """This machine (``specdash connect local``). Commands run with ``/bin/sh -c``."""

    name = "local"
    is_local = True

    def __init__(self, env: dict[str, str] | None = None) -> None:
        super().__init__()
        self._env = env
        self._status = ConnectionStatus(ConnState.CONNECTED)  # nothing to connect to: always reachable
        self._streaming: set[asyncio.subprocess.Process] = set()  # the commands of streams not closed yet
        self._closed = False  # set by close(), cleared by connect()

    async def connect(self) -> None:
        self._closed = False
        self._set_status(ConnectionStatus(ConnState.CONNECTED))

    async def file_size(self, path: str) -> int | None:
        """Size of ``path`` in bytes (None when it does not exist), read here without a subprocess: opening a log
        asks it first, before anything is on screen."""
        try:
            return os.stat(path).st_size
        except (OSError, ValueError):
            return None

    async def close(self) -> None:
        """Stop every stream still running (its process group killed, its pipes closed now, while the loop runs):
        a stream whose consumer was abandoned without closing it must not outlive the app."""
        self._closed = True  # a stream whose command is still being started ends as soon as it exists
        live, self._streaming = list(self._streaming), set()
        for proc in live:
            await _end_stream(proc)

    async def run(self, command: str, timeout_s: float = 30.0, input: str | None = None) -> CommandResult:
        proc = await _spawn(
            command,
            stdin=asyncio.subprocess.PIPE if input is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self._env,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(input.encode() if input is not None else None), timeout_s
            )
        except asyncio.TimeoutError:
            _kill_group(proc.pid)
            await proc.wait()
            return CommandResult(-1, "", f"timeout after {timeout_s:g} s")
        except BaseException:  # cancelled (the app is closing): the command must not outlive it
            _kill_group(proc.pid)
            try:
                await asyncio.wait_for(proc.wait(), 2)
            except BaseException:  # pragma: no cover - cancelled again, or a group that will not die
                pass
            _close_pipes(proc)
            raise
        code = proc.returncode if proc.returncode is not None else -1  # communicate() waited: never None
        return CommandResult(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))

    async def stream(self, command: str) -> AsyncGenerator[bytes, None]:
        proc = await _spawn(
            wrap_command(command),  # ends with our stdin pipe: no orphan even if specdash is SIGKILLed
            stdin=asyncio.subprocess.PIPE,  # kept open, never written
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self._env,
            start_new_session=True,
            limit=1 << 20,
        )
        assert proc.stdout is not None
        if self._closed:  # closed while the command was being started (the app is exiting)
            await _end_stream(proc)
            return
        self._streaming.add(proc)
        try:
            while True:
                try:
                    line = await proc.stdout.readuntil(b"\n")
                except asyncio.IncompleteReadError as exc:
                    if exc.partial:
                        yield exc.partial
                    break
                except asyncio.LimitOverrunError as exc:
                    line = await proc.stdout.readexactly(exc.consumed)
                yield line
        finally:
            await _end_stream(proc)  # if this is cancelled again, close() still finds the process and ends it
            self._streaming.discard(proc)

    async def send_signal(self, pid: int, signum: int, *, group: bool = False) -> None:
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)


async def _end_stream(proc: asyncio.subprocess.Process) -> None:
    """Close a stream's stdin (its wrapper then ends the group), SIGKILL the group, wait up to 5 s, close pipes
    (also when the wait is cancelled: the pipes are never left to the garbage collector)."""
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        if proc.returncode is None:
            _kill_group(proc.pid)
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except asyncio.TimeoutError:  # pragma: no cover
                pass
    finally:
        _close_pipes(proc)


async def _spawn(command: str, **kwargs) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_shell(command, **kwargs)`` (always with ``start_new_session=True``), safe
    against cancellation: a caller cancelled while the process is being created (the app closing) would otherwise
    lose the only reference to a started process, whose pipes the garbage collector then closes after the loop is
    gone ("Event loop is closed"). The creation is shielded; if the caller is cancelled, the process is killed
    (its group) and its pipes closed as soon as it exists."""
    creation = asyncio.ensure_future(asyncio.create_subprocess_shell(command, **kwargs))
    try:
        return await asyncio.shield(creation)
    except asyncio.CancelledError:
        creation.add_done_callback(_discard_created)
        raise


def _discard_created(creation: asyncio.Future) -> None:
    if creation.cancelled() or creation.exception() is not None:
        return
    proc = creation.result()
    _kill_group(proc.pid)
    _close_pipes(proc)


def _close_pipes(proc: asyncio.subprocess.Process) -> None:
    """Close a finished (or abandoned) subprocess's pipes now, while the event loop still runs: left to the garbage
    collector, asyncio's transport closes them from ``__del__`` after the loop is gone and prints "Event loop is
    closed". asyncio offers no public call for it; the transport is the documented base of ``Process``."""
    transport = getattr(proc, "_transport", None)
    if transport is not None:
        try:
            transport.close()
        except Exception:  # noqa: BLE001 - best effort at teardown
            pass


def _kill_group(pgid: int) -> None:
    """SIGKILL the process group we started (``start_new_session`` made ``pgid`` its leader)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
