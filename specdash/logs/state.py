"""The server's state as its log tells it: one :class:`ServerState` vocabulary for the log pane, the status bar and
the server lifecycle, and :func:`read_log_tail` for a tail read by a status poll.

The state and the start-up phase come from :class:`specdash.logs.analyzer.LogAnalyzer` (the same reader the log
pane uses), so the header and the log pane say the same thing: ``starting`` with a phase label from
:data:`specdash.logs.startup.PHASES` (``weights``, ``KV cache``, ``CUDA graph (target) 3/10``, ``warmup``),
``ready`` (SGLang's ``The server is fired up and ready to roll!``, or decode batches), ``crashed``.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from specdash.logs.analyzer import LogAnalyzer

#: Longest exit reason kept (characters; a longer one is cut and ends with ``...``).
MAX_REASON_CHARS = 200

_TIMESTAMP = re.compile(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}[^\]]*\]\s*")


class ServerState(str, enum.Enum):
    """Server states. From the log: ``unknown`` (nothing telling read yet) → ``starting`` → ``ready`` →
    ``crashed`` (a new start goes back to ``starting``); ``stopped`` only from the lifecycle (the process group is
    gone without a failure). A ``str`` enum (``enum.StrEnum`` needs Python 3.11): each member equals and prints as
    its value."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)

    UNKNOWN = "unknown"
    STARTING = "starting"
    READY = "ready"
    CRASHED = "crashed"
    STOPPED = "stopped"


@dataclasses.dataclass(frozen=True)
class LogReading:
    """What a log tail says. ``state`` (:class:`ServerState`, never ``stopped``); ``phase`` (the start-up phase
    label while starting, e.g. ``CUDA graph (target) 2/10``; ``ready`` once ready; None when no start-up line was
    read); ``exit_reason`` (the most telling failure line: the exception line ending a traceback, e.g.
    ``torch.OutOfMemoryError: CUDA out of memory. ...``, an argparse ``error:`` line, uvicorn's ``ERROR:`` line
    or SGLang's ``Received sigquit from a child process``; at most :data:`MAX_REASON_CHARS`; None when none)."""

    state: ServerState
    phase: str | None
    exit_reason: str | None


def phase_label(analyzer: LogAnalyzer) -> str | None:
    """The running start-up phase of ``analyzer`` as a label, with the CUDA graph capture progress when a
    ``Capturing batches ... i/n`` bar was read (``CUDA graph (draft) 3/10``); ``ready`` once ready; else None."""
    from specdash.logs.startup import PHASES

    startup = analyzer.startup
    current = startup.current
    if current is None:
        return "ready" if analyzer.server_state is ServerState.READY else None
    label = dict(PHASES).get(current, current)
    capture = startup.capture
    if current.startswith("graph_") and capture and capture.get("total"):
        label = f"{label} {capture.get('done', 0)}/{capture['total']}"
    return label


def read_log_tail(text: str) -> LogReading:
    """Read a log tail (``text``: what ``tail -c`` returned; a first partial line is harmless) with a fresh
    :class:`~specdash.logs.analyzer.LogAnalyzer`. tqdm updates separated by carriage returns are read as
    progress. Never raises; nothing is written (no start-up history)."""
    from specdash.logs.analyzer import LogAnalyzer
    from specdash.logs.parser import LineKind

    analyzer = LogAnalyzer()
    reason: str | None = None
    sigquit: str | None = None
    uvicorn: str | None = None
    for raw in text.split("\n"):
        segments = raw.split("\r")
        for partial in segments[:-1]:
            if partial.strip():
                analyzer.observe_partial(partial)
        line = segments[-1] if segments[-1].strip() else next(
            (s for s in reversed(segments) if s.strip()), "")
        if not line.strip():
            continue
        parsed = analyzer.feed(line)
        if parsed.kind in (LineKind.error, LineKind.oom):
            body = _TIMESTAMP.sub("", line.strip())
            info = parsed.info or {}
            if info.get("exception"):
                reason = body
            elif "Received sigquit from a child process" in body:
                sigquit = body
        elif parsed.kind is LineKind.plain:
            body = _TIMESTAMP.sub("", line.strip())
            if body.startswith("ERROR:"):
                uvicorn = body
    best = reason or uvicorn or sigquit
    if best and len(best) > MAX_REASON_CHARS:
        best = best[: MAX_REASON_CHARS - 3] + "..."
    state = analyzer.server_state
    return LogReading(ServerState(state), phase_label(analyzer), best)
