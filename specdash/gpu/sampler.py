"""GPU sampling on a Host: NVML in a worker thread on this machine, ``nvidia-smi`` CSV anywhere else.

``make_sampler(host, interval_s)`` returns a :class:`GpuSampler`:

* ``await sampler.sample_once()`` -> one :class:`~specdash.gpu.model.GpuSnapshot`;
* ``async for snap in sampler.snapshots()`` -> one snapshot per ``interval_s`` until ``await sampler.close()``.

Never raises for a missing GPU, driver or tool: the snapshot's ``error`` says so ("no NVIDIA driver on this
host", "No devices were found", "nvidia-smi not found ..."), and a lost connection gives an ``error`` snapshot
and a retry.

Remote sampling runs ONE long-lived shell loop over ``host.stream`` that prints ``nvidia-smi -L`` once, then both
CSV queries between marker lines every ``interval_s`` (a new channel per tick costs an SSH round trip and a
login-shell start each time). If the stream cannot be opened, it falls back to ``host.run`` per tick.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING

from specdash.gpu import smi
from specdash.gpu.model import GpuSnapshot
from specdash.hosts.base import Host, HostError
from specdash.log import get_logger

if TYPE_CHECKING:
    from specdash.gpu.nvml import NvmlReader

_log = get_logger(__name__)

#: marker lines of the remote loop (not something nvidia-smi ever prints)
_LIST, _GPU, _APPS, _END, _RC = "@@specdash-gpu-list", "@@specdash-gpu-query", "@@specdash-gpu-apps", \
    "@@specdash-gpu-end", "@@specdash-rc "

#: NVML calls that take longer than this are treated as stalled (seconds)
NVML_TIMEOUT_S = 5.0


def _block_command() -> str:
    """Shell text printing both queries and their exit codes between marker lines."""
    return (f"echo '{_GPU}'; {smi.GPU_QUERY} 2>&1; echo \"{_RC}$?\"; "
            f"echo '{_APPS}'; {smi.APPS_QUERY} 2>&1; echo \"{_RC}$?\"; echo '{_END}'")


def loop_command(interval_s: float) -> str:
    """The long-lived remote loop: ``-L`` once, then a block every ``interval_s`` seconds.

    It ends by itself when its output pipe closes (``echo`` fails -> ``exit``), so it never outlives the stream.
    """
    return (f"echo '{_LIST}'; {smi.LIST_QUERY} 2>&1; echo \"{_RC}$?\"; "
            f"while :; do {_block_command()} || exit 0; sleep {interval_s:g}; done")


def once_command(with_list: bool = True) -> str:
    """One query block for ``host.run``, preceded by ``nvidia-smi -L`` when ``with_list``."""
    head = f"echo '{_LIST}'; {smi.LIST_QUERY} 2>&1; echo \"{_RC}$?\"; " if with_list else ""
    return head + _block_command()


class _BlockParser:
    """Accumulates marker-delimited lines; :meth:`feed` returns a snapshot at each end marker."""

    def __init__(self) -> None:
        self.list_text = ""
        self._section: str | None = None
        self._lines: list[str] = []
        self._parts: dict[str, tuple[int, str]] = {}

    def feed(self, line: str) -> GpuSnapshot | None:
        line = line.rstrip("\r\n")
        if line in (_LIST, _GPU, _APPS):
            self._section, self._lines = line, []
            return None
        if line.startswith(_RC) and self._section is not None:
            code_text = line[len(_RC):].strip()
            code = int(code_text) if code_text.lstrip("-").isdigit() else 1
            text = "".join(f"{ln}\n" for ln in self._lines)
            if self._section == _LIST:
                self.list_text = text if code == 0 else ""
            else:
                self._parts[self._section] = (code, text)
            self._section, self._lines = None, []
            return None
        if line == _END:
            gpu_code, gpu_text = self._parts.get(_GPU, (1, "no GPU query output"))
            apps = self._parts.get(_APPS)
            self._parts = {}
            return smi.snapshot_from_smi(gpu_code, gpu_text, apps[0] if apps else None, apps[1] if apps else "",
                                         self.list_text)
        if self._section is not None:
            self._lines.append(line)
        return None


class GpuSampler:
    """Samples one host's GPUs every ``interval_s`` seconds (see module docstring).

    ``source``: ``None`` (NVML when the host is this machine and NVML starts, else nvidia-smi),
    ``"nvml"`` or ``"nvidia-smi"`` to force one.
    """

    def __init__(self, host: Host, interval_s: float = 2.0, source: str | None = None) -> None:
        if interval_s <= 0:
            raise ValueError("interval_s must be > 0")
        self.host = host
        self.interval_s = float(interval_s)
        self._want = source
        self._nvml: NvmlReader | None = None  # once open
        self._nvml_failed: str | None = None if (host.is_local and source != "nvidia-smi") else "not local"
        self._pending: concurrent.futures.Future | None = None
        self._closed = asyncio.Event()
        self._stream: AsyncGenerator[bytes, None] | None = None
        self._list_text: str | None = None

    @property
    def source(self) -> str:
        """``"nvml"`` or ``"nvidia-smi"`` (what the next sample will use)."""
        return "nvml" if self._nvml_failed is None else "nvidia-smi"

    # -- NVML -------------------------------------------------------------------------------------
    async def _nvml_call(self, fn):
        """Run ``fn`` in a daemon thread (a stalled NVML call must not block the app, nor its exit)."""
        loop = asyncio.get_running_loop()
        if self._pending is not None and not self._pending.done():
            raise TimeoutError("an earlier NVML call is still stalled")
        self._pending = _in_daemon_thread(fn)
        return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(self._pending, loop=loop)),
                                      NVML_TIMEOUT_S)

    async def _nvml_sample(self) -> GpuSnapshot | None:
        """A snapshot from NVML, or None when NVML is unavailable here (then nvidia-smi is used from now on)."""
        from specdash.gpu.nvml import NvmlReader, NvmlUnavailable

        if self._nvml is None:
            reader = NvmlReader()
            try:
                await self._nvml_call(reader.open)
            except NvmlUnavailable as exc:
                self._nvml_failed = str(exc)
                _log.info("GPU sampling on %s: NVML unavailable (%s), using nvidia-smi", self.host.name, exc)
                return None
            except (TimeoutError, asyncio.TimeoutError):
                return GpuSnapshot(time_s=time.time(), source="nvml",
                                   error=f"NVML did not answer within {NVML_TIMEOUT_S:g} s (driver busy or hung)")
            self._nvml = reader
        try:
            return await self._nvml_call(self._nvml.read)
        except (TimeoutError, asyncio.TimeoutError):
            return GpuSnapshot(time_s=time.time(), source="nvml",
                               error=f"NVML did not answer within {NVML_TIMEOUT_S:g} s (driver busy or hung)")
        except Exception as exc:  # noqa: BLE001 - a sampler never raises
            return GpuSnapshot(time_s=time.time(), source="nvml", error=f"NVML: {exc}")

    # -- nvidia-smi -------------------------------------------------------------------------------
    async def _smi_once(self) -> GpuSnapshot:
        try:
            result = await self.host.run(once_command(self._list_text is None),
                                         timeout_s=max(15.0, 3 * self.interval_s))
        except HostError as exc:
            return GpuSnapshot(time_s=time.time(), source="nvidia-smi", error=f"cannot reach host: {exc}")
        if result.exit_status == -1:
            return GpuSnapshot(time_s=time.time(), source="nvidia-smi", error="nvidia-smi timed out")
        parser = _BlockParser()
        parser.list_text = self._list_text or ""
        snap = None
        for line in result.stdout.splitlines():
            snap = parser.feed(line) or snap
        if snap is not None and snap.error is None:
            self._list_text = parser.list_text  # MIG layout: read once per sampler
        if snap is None:
            return GpuSnapshot(time_s=time.time(), source="nvidia-smi",
                               error=smi.smi_error(result.exit_status, result.stdout + result.stderr)
                               or "nvidia-smi gave no output")
        return snap

    async def sample_once(self) -> GpuSnapshot:
        """One snapshot now (NVML or one ``host.run`` of nvidia-smi). Never raises."""
        if self._nvml_failed is None:
            snap = await self._nvml_sample()
            if snap is not None:
                return _logged(snap)
        return _logged(await self._smi_once())

    async def _smi_stream(self) -> AsyncGenerator[GpuSnapshot, None]:
        """Snapshots from the long-lived remote loop; falls back to per-tick ``host.run`` when it cannot run."""
        stall_s = max(15.0, 5 * self.interval_s)
        failures = 0
        while not self._closed.is_set():
            produced = False
            parser = _BlockParser()
            stream = self.host.stream(loop_command(self.interval_s))
            self._stream = stream
            error: str | None = None
            nxt: asyncio.Future | None = None
            closed: asyncio.Future | None = None
            try:
                while not self._closed.is_set():
                    nxt = asyncio.ensure_future(stream.__anext__())
                    closed = asyncio.ensure_future(self._closed.wait())
                    done, _ = await asyncio.wait({nxt, closed}, timeout=stall_s,
                                                 return_when=asyncio.FIRST_COMPLETED)
                    closed.cancel()
                    if nxt not in done:
                        nxt.cancel()
                        await asyncio.gather(nxt, return_exceptions=True)
                        error = None if self._closed.is_set() else f"no GPU sample for {stall_s:g} s"
                        break
                    try:
                        raw = nxt.result()
                    except StopAsyncIteration:
                        error = "nvidia-smi loop ended"
                        break
                    snap = parser.feed(raw.decode("utf-8", "replace"))
                    if snap is not None:
                        produced = True
                        failures = 0
                        yield snap
            except HostError as exc:
                error = f"cannot reach host: {exc}"
            finally:
                self._stream = None
                # cancelled while waiting (the app is closing): end the pending read too, and take its outcome, so
                # that no task is left to fail later with an exception nobody retrieves
                for pending in (closed, nxt):
                    if pending is not None and not pending.done():
                        pending.cancel()
                if nxt is not None:
                    await asyncio.gather(nxt, return_exceptions=True)
                try:
                    await stream.aclose()
                except Exception:  # noqa: BLE001 - already broken
                    pass
            if self._closed.is_set():
                return
            failures = 0 if produced else failures + 1
            if failures >= 2:  # the loop does not work on this host: one command per tick instead
                while not self._closed.is_set():
                    yield await self._smi_once()
                    await self._sleep(self.interval_s)
                return
            yield GpuSnapshot(time_s=time.time(), source="nvidia-smi", error=error or "GPU sampling interrupted")
            await self._sleep(self.interval_s)

    async def _sleep(self, seconds: float) -> None:
        try:
            await asyncio.wait_for(self._closed.wait(), seconds)
        except asyncio.TimeoutError:
            pass

    async def snapshots(self) -> AsyncGenerator[GpuSnapshot, None]:
        """Yield a snapshot about every ``interval_s`` seconds until :meth:`close`. Never raises."""
        while not self._closed.is_set():
            if self._nvml_failed is None:
                snap = await self._nvml_sample()
                if snap is not None:
                    yield _logged(snap)
                    await self._sleep(self.interval_s)
                    continue
            async with contextlib.aclosing(self._smi_stream()) as stream:
                async for snap in stream:
                    yield _logged(snap)
            return

    async def close(self) -> None:
        """Stop :meth:`snapshots` (its remote loop ends with the stream) and release NVML."""
        self._closed.set()
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                await stream.aclose()
            except Exception:  # noqa: BLE001
                pass
        if self._nvml is not None:
            reader, self._nvml = self._nvml, None
            if self._pending is None or self._pending.done():
                _in_daemon_thread(reader.close)


def _logged(snap: GpuSnapshot) -> GpuSnapshot:
    """``snap``, logged (DEBUG; WARNING when it carries an error)."""
    if snap.error:
        _log.warning("GPU sample (%s): %s", snap.source, snap.error)
    else:
        _log.debug("GPU sample (%s): %d GPU(s)", snap.source, len(snap.gpus))
    return snap


def _in_daemon_thread(fn) -> concurrent.futures.Future:
    """Start ``fn()`` in a new daemon thread; its result or exception lands in the returned future."""
    future: concurrent.futures.Future = concurrent.futures.Future()

    def runner() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            future.set_exception(exc)

    threading.Thread(target=runner, name="specdash-nvml", daemon=True).start()
    return future


def make_sampler(host: Host, interval_s: float = 2.0, source: str | None = None) -> GpuSampler:
    """A :class:`GpuSampler` for ``host`` sampling every ``interval_s`` seconds.

    ``source`` None picks NVML (worker thread, ``NVML_TIMEOUT_S`` per call) for a local host where NVML starts,
    nvidia-smi otherwise; ``"nvidia-smi"`` forces the CSV path (tests with the fake tool). Raises ValueError for
    ``interval_s <= 0``.
    """
    return GpuSampler(host, interval_s=interval_s, source=source)
