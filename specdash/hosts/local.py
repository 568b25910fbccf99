"""LocalHost: the Host interface on this machine, with asyncio subprocesses."""

from __future__ import annotations

import asyncio
import os
import signal
from typing import AsyncGenerator

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

    async def connect(self) -> None:
        self._set_status(ConnectionStatus(ConnState.CONNECTED))

    async def close(self) -> None:
        return None

    async def run(self, command: str, timeout_s: float = 30.0, input: str | None = None) -> CommandResult:
        proc = await asyncio.create_subprocess_shell(
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
        proc = await asyncio.create_subprocess_shell(
            wrap_command(command),  # ends with our stdin pipe: no orphan even if specdash is SIGKILLed
            stdin=asyncio.subprocess.PIPE,  # kept open, never written
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=self._env,
            start_new_session=True,
            limit=1 << 20,
        )
        assert proc.stdout is not None
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
            if proc.stdin is not None:
                proc.stdin.close()
            if proc.returncode is None:
                _kill_group(proc.pid)
                try:
                    await asyncio.wait_for(proc.wait(), 5)
                except asyncio.TimeoutError:  # pragma: no cover
                    pass
            _close_pipes(proc)

    async def send_signal(self, pid: int, signum: int, *, group: bool = False) -> None:
        if group:
            os.killpg(pid, signum)
        else:
            os.kill(pid, signum)


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
