"""The replay clock: plays a recorded session's events at the recorded pace (times ``speed``), with pause/resume,
step forward/back by event, seek to a time or to the next/previous finding, and speed change.

No Textual. The app runs ``async for item in player.events(): ...`` in a worker and feeds each item to its pane;
key bindings call the control methods (``p`` :meth:`ReplayPlayer.toggle_pause`, ``[``/``]``
:meth:`~ReplayPlayer.step_back`/:meth:`~ReplayPlayer.step_forward`, ...), which take effect at once (they wake the
generator).

Items yielded are events (:mod:`specdash.session.events`) or a :class:`Rewind`: a backward move (step back,
seek back) yields ``Rewind`` first — panes clear their state — and then, without pacing, every event up to the
new position, which rebuilds it. A forward seek yields the skipped events without pacing (no ``Rewind``).
While :meth:`ReplayPlayer.events` hands out the events a seek or a rebuild skipped over, ``player.jumping`` is True:
they are the past of the new position, so a notice they would raise is not news (the app shows none for them);
events reached at the recorded pace and a single step forward are handed out with ``jumping`` False.
Events of unknown kinds are not replayed (the reader reports them).

Time: ``t`` values are seconds since the session start; "position" is the session time shown. ``clock`` (default
``time.monotonic``) and ``wait`` are injectable, so tests drive it with a fake clock.
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from specdash.session.events import Event, FindingEvent, UnknownEvent
from specdash.session.reader import SessionLog


@dataclasses.dataclass(frozen=True)
class Rewind:
    """Replay moved backwards to ``t`` (seconds): clear every pane; the events that follow rebuild the state."""

    t: float


ReplayItem = Event | Rewind


@dataclasses.dataclass(frozen=True)
class ReplayStatus:
    """Where the replay stands, for a status line: ``position_s``/``duration_s`` (session seconds), ``index``
    (events emitted so far) of ``total``, ``paused``, ``speed`` (1.0 = recorded pace), ``at_end``."""

    position_s: float
    duration_s: float
    index: int
    total: int
    paused: bool
    speed: float
    at_end: bool

    def describe(self) -> str:
        """One line, e.g. ``▶ 00:01:23 / 00:10:00  x2  event 120/3400`` (``⏸`` when paused)."""
        state = "⏸" if self.paused else ("■" if self.at_end else "▶")
        return (f"{state} {format_clock(self.position_s)} / {format_clock(self.duration_s)}  x{self.speed:g}  "
                f"event {self.index}/{self.total}")


def format_clock(seconds: float) -> str:
    """``HH:MM:SS`` for a session time in seconds (negative clamps to 0)."""
    whole = int(max(0.0, seconds))
    return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"


Waiter = Callable[[float | None, asyncio.Event], Awaitable[None]]


async def _real_wait(timeout_s: float | None, wake: asyncio.Event) -> None:
    if timeout_s is None:
        await wake.wait()
        return
    try:
        await asyncio.wait_for(wake.wait(), timeout_s)
    except asyncio.TimeoutError:
        pass


class ReplayPlayer:
    """Plays ``session_log.events`` (see :class:`~specdash.session.reader.SessionLog`) at ``speed`` times the
    recorded pace.

    ``clock()`` returns seconds (monotonic); ``wait(timeout_s | None, wake)`` must return after ``timeout_s``
    seconds of that clock or as soon as ``wake`` is set (None: only on wake). Starts playing at position 0
    unless ``start_paused``. Raises ValueError for ``speed <= 0``.
    """

    def __init__(
        self,
        session_log: SessionLog,
        speed: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        wait: Waiter | None = None,
        start_paused: bool = False,
    ) -> None:
        self._check_speed(speed)
        self.session = session_log
        self._events: list[Event] = [e for e in session_log.events if not isinstance(e, UnknownEvent)]
        self._times: list[float] = [e.t for e in self._events]
        self._clock = clock
        self._wait: Waiter = wait or _real_wait
        self._speed = float(speed)
        self._paused = start_paused
        self._index = 0
        self._anchor_pos_s = 0.0
        self._anchor_clock = clock()
        #: items to hand out, each with whether a seek or a rebuild put it there (the past of the new position)
        self._queue: collections.deque[tuple[ReplayItem, bool]] = collections.deque()
        self._jumping = False
        self._wake: asyncio.Event | None = None
        self._closed = False

    # -- state ----------------------------------------------------------------------------------------

    @staticmethod
    def _check_speed(speed: float) -> None:
        if not speed > 0:
            raise ValueError(f"replay speed must be > 0, got {speed}")

    @property
    def duration_s(self) -> float:
        """Session time of the last replayable event (0.0 when there is none)."""
        return self._times[-1] if self._times else 0.0

    @property
    def position_s(self) -> float:
        """The session time now (advances with the clock times ``speed`` while playing; at most the duration
        once every event is out)."""
        if self._paused:
            return self._anchor_pos_s
        pos = self._anchor_pos_s + (self._clock() - self._anchor_clock) * self._speed
        if self._index >= len(self._events):
            return min(pos, max(self.duration_s, self._anchor_pos_s))
        return pos

    @property
    def paused(self) -> bool:
        """True while paused."""
        return self._paused

    @property
    def speed(self) -> float:
        """Current speed factor (1.0 = recorded pace)."""
        return self._speed

    @property
    def finding_count(self) -> int:
        """How many recorded findings (:class:`FindingEvent`) the session holds."""
        return sum(1 for event in self._events if isinstance(event, FindingEvent))

    @property
    def jumping(self) -> bool:
        """True while :meth:`events` hands out an event a seek or a rebuild skipped over (not reached at the
        recorded pace nor by a step forward)."""
        return self._jumping

    @property
    def at_end(self) -> bool:
        """True when every event has been handed out."""
        return self._index >= len(self._events) and not self._queue

    def status(self) -> ReplayStatus:
        """A :class:`ReplayStatus` snapshot."""
        return ReplayStatus(position_s=self.position_s, duration_s=self.duration_s, index=self._index,
                            total=len(self._events), paused=self._paused, speed=self._speed, at_end=self.at_end)

    def _reanchor(self, position_s: float) -> None:
        self._anchor_pos_s = position_s
        self._anchor_clock = self._clock()

    def _poke(self) -> None:
        if self._wake is not None:
            self._wake.set()

    # -- controls -------------------------------------------------------------------------------------

    def pause(self) -> None:
        """Stop the clock at the current position (no effect when paused)."""
        if not self._paused:
            self._reanchor(self.position_s)
            self._paused = True
            self._poke()

    def resume(self) -> None:
        """Run the clock again from the current position (no effect when playing)."""
        if self._paused:
            self._reanchor(self._anchor_pos_s)
            self._paused = False
            self._poke()

    def toggle_pause(self) -> bool:
        """Pause when playing, resume when paused; returns the new ``paused`` state."""
        if self._paused:
            self.resume()
        else:
            self.pause()
        return self._paused

    def set_speed(self, speed: float) -> None:
        """Change the pace (e.g. 0.5, 2, 10) from the current position on. Raises ValueError for ``speed <= 0``."""
        self._check_speed(speed)
        self._reanchor(self.position_s)
        self._speed = float(speed)
        self._poke()

    def step_forward(self) -> Event | None:
        """Pause and hand out the next event at once; the position becomes its ``t``. None at the end."""
        self.pause()
        if self._index >= len(self._events):
            return None
        event = self._events[self._index]
        self._index += 1
        self._queue.append((event, False))
        self._reanchor(max(event.t, self._anchor_pos_s))
        self._poke()
        return event

    def step_back(self) -> Event | None:
        """Pause and undo the last event handed out: yields :class:`Rewind` and the events before it; the
        position becomes the previous event's ``t`` (0 when none). Returns the undone event, None at the start."""
        self.pause()
        if self._index == 0:
            return None
        undone = self._events[self._index - 1]
        self._rebuild(self._index - 1)
        self._reanchor(self._events[self._index - 1].t if self._index else 0.0)
        self._poke()
        return undone

    def seek(self, t_s: float) -> None:
        """Move to session time ``t_s`` (clamped to [0, duration]); every event with ``t <= t_s`` ends up handed
        out (forward: the skipped ones at once; backward: :class:`Rewind` plus a rebuild). Keeps pause state."""
        t_s = min(max(0.0, float(t_s)), self.duration_s)
        target = bisect.bisect_right(self._times, t_s)
        if target >= self._index:
            self._queue.extend((event, True) for event in self._events[self._index:target])
            self._index = target
        else:
            self._rebuild(target)
        self._reanchor(t_s)
        self._poke()

    def seek_next_finding(self) -> FindingEvent | None:
        """Seek to the next finding not yet handed out (it and everything before it are handed out, not the events
        after it that share its time: two findings recorded at one instant are two stops). Returns it, or None
        (nothing changes) when there is none ahead."""
        for index in range(self._index, len(self._events)):
            event = self._events[index]
            if isinstance(event, FindingEvent):
                self._seek_to(index)
                return event
        return None

    def seek_previous_finding(self) -> FindingEvent | None:
        """Seek back to the finding before the current one (by recorded order: one at the same instant counts), or
        to the last finding earlier than the current position; None (nothing changes) if none."""
        limit = self._index
        last = self._events[limit - 1] if limit else None
        if isinstance(last, FindingEvent) and abs(last.t - self.position_s) < 1e-9:
            limit -= 1  # the finding a jump landed on is the current one
        for index in range(limit - 1, -1, -1):
            event = self._events[index]
            if isinstance(event, FindingEvent):
                self._seek_to(index)
                return event
        return None

    def _seek_to(self, index: int) -> None:
        """Hand out the events up to and including ``index`` (forward: at once; backward: :class:`Rewind` plus a
        rebuild); the position becomes that event's ``t``. Keeps pause state."""
        target = index + 1
        if target >= self._index:
            self._queue.extend((event, True) for event in self._events[self._index:target])
            self._index = target
        else:
            self._rebuild(target)
        self._reanchor(self._events[index].t)
        self._poke()

    def close(self) -> None:
        """End :meth:`events` (the generator returns at its next wake-up)."""
        self._closed = True
        self._poke()

    def _rebuild(self, target: int) -> None:
        self._queue.clear()
        self._queue.append((Rewind(self._times[target - 1] if target else 0.0), True))
        self._queue.extend((event, True) for event in self._events[:target])
        self._index = target

    # -- output ---------------------------------------------------------------------------------------

    def take_due(self) -> list[ReplayItem]:
        """Everything to hand out now: queued items (steps, seeks, rebuilds) then, while playing, every event
        whose ``t`` has been reached. Synchronous; :meth:`events` is built on it."""
        return [item for item, _ in self._take_due_marked()]

    def _take_due_marked(self) -> list[tuple[ReplayItem, bool]]:
        """:meth:`take_due` with each item's ``jumped`` flag (a seek or a rebuild skipped over it)."""
        items = list(self._queue)
        self._queue.clear()
        if not self._paused:
            position = self.position_s
            while self._index < len(self._events) and self._times[self._index] <= position:
                items.append((self._events[self._index], False))
                self._index += 1
        return items

    def time_to_next_s(self) -> float | None:
        """Clock seconds until the next event is due (0 when items are queued); None while paused or at the end."""
        if self._queue:
            return 0.0
        if self._paused or self._index >= len(self._events):
            return None
        return max(0.0, (self._times[self._index] - self.position_s) / self._speed)

    async def events(self, stop_at_end: bool = False) -> AsyncIterator[ReplayItem]:
        """Yield events (and :class:`Rewind` markers) at the recorded pace, reacting at once to the controls.

        Runs until :meth:`close`, or — with ``stop_at_end`` — until every event has been handed out.
        """
        if self._wake is None:
            self._wake = asyncio.Event()
        while not self._closed:
            self._wake.clear()
            for item, jumped in self._take_due_marked():
                self._jumping = jumped
                yield item
            self._jumping = False
            if self._closed or (stop_at_end and self.at_end):
                return
            if self._queue:
                continue
            await self._wait(self.time_to_next_s(), self._wake)


def fake_clock(start_s: float = 0.0) -> tuple[Callable[[], float], Callable[[float], None], Waiter]:
    """A manual clock for tests and benchmarks: returns ``(clock, advance, wait)``.

    ``advance(dt_s)`` moves the clock; ``wait(timeout_s, wake)`` advances the clock by ``timeout_s`` at once
    (or, with None, waits for ``wake``) so a paced replay runs instantly but in the recorded order and pace.
    """
    now = [start_s]

    def clock() -> float:
        return now[0]

    def advance(dt_s: float) -> None:
        now[0] += dt_s

    async def wait(timeout_s: float | None, wake: asyncio.Event) -> None:
        if wake.is_set():
            return
        if timeout_s is None:
            await wake.wait()
            return
        now[0] += timeout_s
        await asyncio.sleep(0)

    return clock, advance, wait


__all__: list[Any] = ["ReplayPlayer", "ReplayStatus", "Rewind", "ReplayItem", "format_clock", "fake_clock"]
