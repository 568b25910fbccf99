"""Follow a file on a Host by byte offset, surviving reconnects: no line lost, none twice.

:class:`LogFollower` is an async iterator of :class:`TailLines` (batches of complete lines with the byte offset
just past the last one), :class:`TailMarker` (one-line notes for the log pane: truncation, rotation, waiting
for the file, reconnecting, reconnected at offset N) and :class:`TailPartial` (an unfinished last line that
updates in place, e.g. tqdm's ``Capturing batches`` bar during the CUDA graph capture).

How: a small POSIX ``sh`` + GNU coreutils loop (``stat``, ``dd``, ``head``, ``base64``, ``sleep``) runs on the host
through :meth:`Host.stream`. It opens the file once (fd 3), skips to the requested offset, and every
``poll_interval_s`` compares the open file's size and the path's inode with what it has sent:

* new bytes -> ``D <base64>`` (chunks of at most 512 KiB; base64 keeps framing exact whatever the log contains);
* size < bytes sent -> ``T <size> <sent>`` (truncated; reopen, restart from 0);
* the path now names another inode (after the old file was read to its end) -> ``R`` (rotated; follow the new
  file from 0) — the same check at start against the inode we followed before a reconnect;
* the file does not exist (yet) -> ``W`` once, then it waits;
* the path is gone (deleted) after the open file was read to its end -> ``G`` once (the open file is still
  followed; when the path appears again it is followed as a rotation);
* before new bytes, ``C <base64>``: the last (up to 64) bytes before the offset as the file holds them now; when
  they differ from what was read there, the file was truncated and rewritten past the old size between two
  polls (copy-truncate with a burst): the follower says so and starts again from 0 rather than lose the lines.

A path starting with ``-`` is read as ``./-...`` (never taken for an option).

``S <inode> <offset>`` announces where reading starts. Offsets are counted here from the decoded bytes, and a
reconnect restarts the loop at the end of the last *complete* line received (a partial last line is read
again), so the new stream continues exactly where the old one stopped. The loop dies with its channel (see
:mod:`specdash.hosts.ssh`: the wrapper watches stdin; LocalHost kills the process group).

``tail -c +N -F`` was the obvious alternative; it was not used because its truncation/rotation notices go to
stderr (or into the data when merged), so the exact offset after such an event cannot be known.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import dataclasses
import shlex
from collections.abc import AsyncIterator

from specdash.hosts.base import ConnectionLost, ConnState, Host, HostError, quote

#: Largest chunk one ``D`` frame carries (bytes before base64; the frame is 4/3 of it): frames stay under
#: LocalHost.stream's 1 MiB line limit. Fewer, bigger frames: each costs a few forks on the host.
CHUNK_BYTES = 524288
#: A line that grows past this many bytes without a newline is delivered as it is (bounds memory); the rest of
#: it then comes as the next line.
MAX_LINE_BYTES = 1 << 20

_FOLLOW_SCRIPT = r"""f=$1; off=$2; want=$3; poll=$4
LC_ALL=C; export LC_ALL
case $f in -*) f=./$f;; esac
said=
while ! [ -f "$f" ] || ! [ -r "$f" ]; do
  [ -n "$said" ] || { echo W; said=1; }
  sleep 0.5
done
exec 3<"$f" || { echo "X cannot open"; exit 1; }
set -- $(stat -L -c '%s %i' -- /dev/fd/3)
size=$1; ino=$2
if [ -n "$want" ] && [ "$ino" != "$want" ]; then echo R; off=0
elif [ "$size" -lt "$off" ]; then echo "T $size $off"; off=0
fi
if [ "$off" -gt 0 ]; then dd iflag=skip_bytes skip="$off" count=0 <&3 >/dev/null 2>&1; fi
echo "S $ino $off"
gone=
while :; do
  set -- $(stat -L -c '%s %i' -- /dev/fd/3 "$f" 2>/dev/null)
  size=$1
  if [ "$size" -lt "$off" ]; then
    echo "T $size $off"; exec 3</dev/fd/3; off=0; echo "S $ino 0"; continue
  fi
  if [ "$size" -gt "$off" ]; then
    if [ "$off" -gt 0 ]; then
      k=$off; [ "$k" -gt 64 ] && k=64
      printf 'C '; dd if=/dev/fd/3 iflag=skip_bytes,count_bytes skip=$((off - k)) count="$k" 2>/dev/null | base64 -w0
      echo
    fi
    n=$((size - off)); [ "$n" -gt CHUNK ] && n=CHUNK
    printf 'D '; head -c "$n" <&3 | base64 -w0; echo
    off=$((off + n)); continue
  fi
  if [ -z "$4" ]; then
    [ -n "$gone" ] || { echo G; gone=1; }
  elif [ "$4" != "$ino" ]; then
    gone=
    echo R; exec 3<"$f" || exit 1
    set -- $(stat -L -c '%s %i' -- /dev/fd/3); ino=$2; off=0; echo "S $ino 0"; continue
  else
    gone=
  fi
  sleep "$poll"
done""".replace("CHUNK", str(CHUNK_BYTES))


@dataclasses.dataclass(frozen=True)
class TailLines:
    """Complete lines, in order, each without its ``\\n`` (bytes as written: decode with replacement).
    ``end_offset``: the byte offset in the file just past the last line (where to resume); ``offsets``: the byte
    offset in the file where each line starts (as read, so also right after a line cut at
    :data:`MAX_LINE_BYTES`, which has no newline)."""

    lines: list[bytes]
    end_offset: int
    offsets: list[int] = dataclasses.field(default_factory=list)


@dataclasses.dataclass(frozen=True)
class TailMarker:
    """A one-line note to show between log lines, e.g. ``log truncated: following from the start``,
    ``file rotated: following the new file from the start``, ``file does not exist yet: waiting``,
    ``connection lost: reconnecting``, ``reconnected at offset 12345``."""

    text: str


@dataclasses.dataclass(frozen=True)
class TailPartial:
    """The end of the file is a line still being written, and it is a progress bar updating in place (it
    contains ``\\r``): ``text`` is that unfinished line so far (bytes as written). It is delivered again, whole,
    in a :class:`TailLines` once its newline arrives; the offset does not move for it."""

    text: bytes


TailEvent = TailLines | TailMarker | TailPartial
_END = object()


async def recent_start_offset(host: Host, path: str, window_bytes: int = 256 * 1024, size: int | None = None) -> int:
    """Where to start following ``path`` to show about its last ``window_bytes`` bytes: the offset of the first
    line that starts inside that window (0 when the file is smaller or missing; the file size when the window
    holds no line start). Pass it as ``LogFollower(host, path, start_offset=...)``. ``size``: the file's size when
    the caller knows it (else asked). Raises HostError."""
    if size is None:
        size = await host.file_size(path)
    if size is None or size <= window_bytes:
        return 0
    start = size - window_bytes
    # length in bytes of the (partial) line that the window starts in, newline included
    result = await host.run(
        f"tail -c +{start + 1} -- {quote(path)} | head -c {window_bytes} | head -n 1 | wc -c", timeout_s=30
    )
    text = result.stdout.strip()
    if not result.ok or not text.isdigit():
        raise HostError(f"cannot read {path}: {result.stderr.strip() or 'exit status ' + str(result.exit_status)}")
    return start + int(text)


def read_tail_here(path: str, window_bytes: int = 256 * 1024) -> tuple[int, TailLines] | None:
    """The last complete lines of ``path``, a regular file on this machine, read now: no subprocess and no await,
    so a console on a LocalHost can put them on its first frame. ``(start, lines)``: ``start`` is the offset
    :func:`recent_start_offset` gives for ``window_bytes`` (0 when the file is no bigger), ``lines`` the complete
    lines from there (:class:`TailLines`; ``end_offset`` is just past the last newline: an unfinished last line is
    left for the follower). None when there is nothing to show this way: the file is missing, unreadable or not a
    regular file, holds no complete line, or its last ``window_bytes`` hold no line start (read it all instead)."""
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO named like the log must not block the console
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        size = info.st_size
        if size > window_bytes:
            data = os.pread(fd, window_bytes, size - window_bytes)
            first = data.find(b"\n") + 1
            if not first or first == len(data):  # no line starts in the window
                return None
            start, data = size - window_bytes + first, data[first:]
        else:
            start, data = 0, os.pread(fd, size, 0)
    except OSError:
        return None
    finally:
        os.close(fd)
    cut = data.rfind(b"\n") + 1
    if not cut:
        return None
    lines = data[:cut - 1].split(b"\n")
    offsets, position = [], start
    for line in lines:
        offsets.append(position)
        position += len(line) + 1
    return start, TailLines(lines, position, offsets)


#: Characters of base64 per frame when a byte range is read (a multiple of 4: every frame decodes on its own;
#: 384 KiB of the file per frame, well under LocalHost.stream's 1 MiB line limit).
RANGE_FRAME_CHARS = 4 * 131072


async def read_range_bytes(host: Host, path: str, start: int, end: int) -> AsyncIterator[tuple[int, bytes]]:
    """The bytes of ``path`` on ``host`` between byte ``start`` and byte ``end`` as ``(offset, block)`` pairs, in
    order: each block holds whole lines (it ends with a newline) and starts at byte ``offset``; a last line cut by
    ``end`` (no newline) comes last, as it is. One command on the host (``tail -c +N | head -c M | base64``): no
    fork per chunk, and a remote host sends only that range. Stops early when the file is shorter. Raises
    HostError (ConnectionLost when the link drops)."""
    if end <= start:
        return
    if host.is_local:  # a file on this machine: read in place (no tail | head | base64 through a pipe)
        async for item in _read_range_here(path, start, end):
            yield item
        return
    command = (f"tail -c +{int(start) + 1} -- {quote(path)} | head -c {int(end) - int(start)} "
               f"| base64 -w {RANGE_FRAME_CHARS}")
    lines = _WholeLines(start)
    async with contextlib.aclosing(host.stream(command)) as frames:
        async for frame in frames:
            whole = lines.feed(base64.b64decode(frame.strip()))
            if whole is not None:
                yield whole
    if (rest := lines.rest()) is not None:
        yield rest


class _WholeLines:
    """A byte stream cut into blocks of whole lines: :meth:`feed` returns ``(offset of the block, block)`` once a
    newline has come (else None), :meth:`rest` the last line the stream's end cut (None when it ended on a newline)."""

    def __init__(self, start: int) -> None:
        self.position, self.buffer = start, b""

    def feed(self, data: bytes) -> tuple[int, bytes] | None:
        self.buffer += data
        cut = self.buffer.rfind(b"\n") + 1
        if not cut:
            return None
        block, self.buffer = self.buffer[:cut], self.buffer[cut:]
        at, self.position = self.position, self.position + cut
        return at, block

    def rest(self) -> tuple[int, bytes] | None:
        return (self.position, self.buffer) if self.buffer else None


async def _read_range_here(path: str, start: int, end: int) -> AsyncIterator[tuple[int, bytes]]:
    """:func:`read_range_bytes` for a file on this machine: the same blocks (whole lines, then a last line cut by
    ``end`` as it is), read with ``pread`` in chunks of :data:`RANGE_FRAME_CHARS` * 3 / 4 bytes, as the frames of
    the host command carry. A file that cannot be opened yields nothing, as that command does."""
    import os

    chunk = RANGE_FRAME_CHARS // 4 * 3
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return
    try:
        lines, at = _WholeLines(start), start
        while at < end:
            data = os.pread(fd, min(chunk, end - at), at)
            if not data:
                break  # the file is shorter
            at += len(data)
            whole = lines.feed(data)
            if whole is not None:
                yield whole
        if (rest := lines.rest()) is not None:
            yield rest
    except OSError:
        return
    finally:
        os.close(fd)


async def read_range(host: Host, path: str, start: int, end: int) -> AsyncIterator[TailLines]:
    """The lines of ``path`` on ``host`` between byte ``start`` and byte ``end`` (``start`` should be a line start;
    the range is read as it is), in order, as :class:`TailLines` batches of a few thousand lines with each line's
    byte offset (the blocks of :func:`read_range_bytes`, split). A line cut by ``end`` (no newline before it) comes
    last, as it is. Raises HostError (ConnectionLost when the link drops)."""
    async for position, block in read_range_bytes(host, path, start, end):
        if not block.endswith(b"\n"):
            yield TailLines([block], position + len(block), [position])
            continue
        lines = block[:-1].split(b"\n")
        offsets = []
        for line in lines:
            offsets.append(position)
            position += len(line) + 1
        yield TailLines(lines, position, offsets)


async def lines_before(host: Host, path: str, offset: int, window_bytes: int = 64 * 1024) -> TailLines:
    """The complete lines that end at or before byte ``offset`` (a line start) within the last ``window_bytes``
    bytes before it: the line the window starts inside is left out, unless the window starts at byte 0. Empty
    when ``offset`` is 0. Used to scroll back above what is shown. Raises HostError."""
    start = max(0, offset - window_bytes)
    lines: list[bytes] = []
    offsets: list[int] = []
    async for batch in read_range(host, path, start, offset):
        lines.extend(batch.lines)
        offsets.extend(batch.offsets)
    if start > 0 and lines:
        lines, offsets = lines[1:], offsets[1:]  # cut by the window: its start is before ``start``
    return TailLines(lines, offset, offsets)


class _Rewritten(Exception):
    """The file was truncated and rewritten between two polls: follow it again from the start."""


class LogFollower:
    """Follow ``path`` on ``host`` from byte ``start_offset`` (0: the whole file; use ``await host.file_size``
    for "from now"). ``async for event in LogFollower(host, path): ...`` yields :class:`TailLines` and
    :class:`TailMarker` until :meth:`aclose` (or leaving the loop and closing the follower) or until the host
    fails for good (then a last ``stopped: reason`` marker).

    Batching: lines that arrive within ``batch_window_s`` (50 ms) of the first are delivered together, at most
    ``max_batch_lines`` (1000) per batch; the very first batch is delivered without waiting (what the file holds
    when it is opened goes on screen at once). Backpressure: at most ~64 frames are buffered; beyond that reading
    pauses (SSH flow control then pauses the remote side).

    After a connection drop it emits ``connection lost: reconnecting``, waits for the host to reconnect
    (:meth:`Host.wait_connected`; SSHHost reconnects by itself), emits ``reconnected at offset N`` and resumes at
    the end of the last complete line: no line lost, none twice. :attr:`offset` is that resume point.
    """

    def __init__(
        self,
        host: Host,
        path: str,
        start_offset: int = 0,
        *,
        batch_window_s: float = 0.05,
        max_batch_lines: int = 1000,
        poll_interval_s: float = 0.2,
        retry_s: float = 1.0,
    ) -> None:
        if start_offset < 0:
            raise ValueError(f"start_offset must be >= 0, got {start_offset}")
        self.host, self.path = host, path
        self.batch_window_s, self.max_batch_lines = batch_window_s, max_batch_lines
        self.poll_interval_s, self.retry_s = poll_interval_s, retry_s
        self._offset = start_offset  # end of the last complete line produced
        self._inode: str | None = None
        self._queue: asyncio.Queue[object] = asyncio.Queue(maxsize=64)
        self._held: collections.deque[object] = collections.deque()
        self._task: asyncio.Task[None] | None = None
        self._closed = False
        self._delivered = False  # a batch of lines was delivered (the first one is not held for the window)

    @property
    def offset(self) -> int:
        """Byte offset just past the last complete line read from the file (lines still queued included)."""
        return self._offset

    def __aiter__(self) -> LogFollower:
        return self

    async def __anext__(self) -> TailEvent:
        if self._closed:
            raise StopAsyncIteration
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._produce())
        item = await self._next_item()
        if item is _END:
            self._closed = True
            raise StopAsyncIteration
        if isinstance(item, (TailMarker, TailPartial)):
            return item
        lines, starts, end_offsets = list(item[0]), list(item[1]), list(item[2])  # type: ignore[index]
        loop = asyncio.get_running_loop()
        # the first lines go out at once (what is on screen when a log is opened); then batches gather a window
        deadline = loop.time() + (self.batch_window_s if self._delivered else 0.0)
        self._delivered = True
        while len(lines) < self.max_batch_lines:
            if self._held:
                nxt = self._held.popleft()
            else:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    nxt = await asyncio.wait_for(self._queue.get(), remaining)
                except asyncio.TimeoutError:
                    break
            if not isinstance(nxt, tuple):
                self._held.appendleft(nxt)
                break
            lines.extend(nxt[0])
            starts.extend(nxt[1])
            end_offsets.extend(nxt[2])
        if len(lines) > self.max_batch_lines:
            cut = self.max_batch_lines
            self._held.appendleft((lines[cut:], starts[cut:], end_offsets[cut:]))
            lines, starts, end_offsets = lines[:cut], starts[:cut], end_offsets[:cut]
        return TailLines(lines, end_offsets[-1], starts)

    async def _next_item(self) -> object:
        if self._held:
            return self._held.popleft()
        return await self._queue.get()

    async def aclose(self) -> None:
        """Stop following: the remote loop is stopped (its channel closed) before this returns."""
        self._closed = True
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        # wake a consumer blocked in __anext__: it ends the iteration
        self._held.clear()
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait(_END)

    async def __aenter__(self) -> LogFollower:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- producer ----------------------------------------------------------------------------------
    def _command(self) -> str:
        args = [self.path, str(self._offset), self._inode or "", f"{self.poll_interval_s:g}"]
        return shlex.join(["sh", "-c", _FOLLOW_SCRIPT, "sh", *args])

    async def _produce(self) -> None:
        lost = False
        while True:
            try:
                await self.host.wait_connected()
            except HostError as exc:
                await self._queue.put(TailMarker(f"stopped: {exc}"))
                await self._queue.put(_END)
                return
            try:
                async with contextlib.aclosing(self.host.stream(self._command())) as frames:
                    async for frame in frames:
                        if lost:
                            lost = False
                            await self._queue.put(TailMarker(f"reconnected at offset {self._offset}"))
                        await self._handle(frame)
                reason = "remote follower ended"
            except _Rewritten:
                await self._queue.put(TailMarker("log truncated and rewritten between two reads (copy-truncate?): "
                                                 "following from the start"))
                self._offset, self._buffer, self._last_partial, self._recent = 0, b"", b"", None
                continue
            except ConnectionLost:
                if self.host.status.state is ConnState.FAILED:  # closed, or failed for good: wait_connected says
                    continue
                if not lost:
                    lost = True
                    await self._queue.put(TailMarker("connection lost: reconnecting"))
                await asyncio.sleep(min(0.25, self.retry_s))
                continue
            except HostError as exc:
                reason = str(exc)
            # the loop ended although the link is up (e.g. the file could not be opened): try again later
            await self._queue.put(TailMarker(f"follower stopped ({reason}): retrying in {self.retry_s:g} s"))
            await asyncio.sleep(self.retry_s)

    async def _handle(self, frame: bytes) -> None:
        kind, _, rest = frame.rstrip(b"\n").partition(b" ")
        if kind == b"D":
            data = base64.b64decode(rest)
            if self._recent is not None:
                self._recent = (self._recent + data)[-64:]
            await self._data(data)
        elif kind == b"C":
            before = base64.b64decode(rest)  # ends where the received bytes end, as recent does
            n = min(len(before), len(self._recent or b""))
            if n and before[-n:] != self._recent[-n:]:  # type: ignore[index]
                raise _Rewritten
        elif kind == b"S":
            inode, _, offset = rest.decode("ascii", "replace").partition(" ")
            start = int(offset)
            # the last bytes before ``start`` as received, when known (a reconnect resumes at a line start)
            received_end = self._offset + len(self._buffer)
            if self._recent is not None and start <= received_end and received_end - start < len(self._recent):
                self._recent = self._recent[:len(self._recent) - (received_end - start)]
            else:
                self._recent = b"" if start == 0 else None
            self._inode, self._offset, self._buffer, self._last_partial = inode, start, b"", b""
        elif kind == b"T":
            size = rest.decode("ascii", "replace").split()[0] if rest else "?"
            await self._queue.put(TailMarker(f"log truncated (now {size} bytes): following from the start"))
            self._offset, self._buffer, self._last_partial = 0, b"", b""
        elif kind == b"R":
            await self._queue.put(TailMarker("file rotated: following the new file from the start"))
            self._offset, self._buffer, self._last_partial = 0, b"", b""
        elif kind == b"W":
            await self._queue.put(TailMarker("file does not exist yet: waiting"))
        elif kind == b"G":
            await self._queue.put(TailMarker("log file deleted: showing what was written to it; following the "
                                             "path again if it comes back"))
        elif kind == b"X":
            await self._queue.put(TailMarker(f"cannot read {self.path}: {rest.decode('utf-8', 'replace')}"))

    _buffer: bytes = b""  # bytes after the last newline received (a line still being written)
    _recent: bytes | None = None  # the last (up to 64) bytes received, ending at the stream position; None: unknown
    _last_partial: bytes = b""  # the unfinished line last announced as a TailPartial

    async def _data(self, data: bytes) -> None:
        buffer = self._buffer + data
        cut = buffer.rfind(b"\n") + 1
        if cut:
            lines = buffer[: cut - 1].split(b"\n")
            self._buffer = buffer[cut:]
            starts, ends, position = [], [], self._offset
            for line in lines:
                starts.append(position)
                position += len(line) + 1
                ends.append(position)
        elif len(buffer) >= MAX_LINE_BYTES:  # an endless line: deliver it rather than hold it forever
            lines, starts, ends, self._buffer = [buffer], [self._offset], [self._offset + len(buffer)], b""
        else:
            self._buffer = buffer
            await self._partial()
            return
        self._offset = ends[-1]
        await self._queue.put((lines, starts, ends))
        await self._partial()

    async def _partial(self) -> None:
        """Announce an unfinished line that updates in place (tqdm's ``\\r`` states), once per change."""
        buffer = self._buffer
        if b"\r" in buffer and buffer != self._last_partial:
            self._last_partial = buffer
            await self._queue.put(TailPartial(buffer))
